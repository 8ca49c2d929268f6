"""The card's commands, before any run: `init`, `check`, `seal`, `curl` and `plan`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from benchcard._cli.common import emit_json, project_of, report, say, tell


@click.command()
@click.argument("folder", default=".")
@click.option("--nested", is_flag=True, help="Make the project even inside another benchcard project (it keeps "
              "cards, results and a ledger of its own).")
@click.pass_context
def init(ctx: click.Context, folder: str, nested: bool) -> None:
    """A new project in FOLDER (new or empty): a minimal A/B card, three fixtures with keys, benchcard.yaml.
    Under `-C DIR` a relative FOLDER is read in DIR, as every other command reads its project there."""
    from benchcard.card.starter import init_project

    root = ctx.obj.get("project") if ctx.obj else None
    where = folder if root is None else str(Path(root) / folder)
    say(init_project(Path(where), where, nested).lines())


@click.command()
@click.argument("cards", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--live", is_flag=True, help="Also send judge cards' worked examples to the real judge (calls it).")
@click.option("--no-rig", is_flag=True, help="Start no model (a CI job running the cards on another provider).")
@click.pass_context
def check(ctx: click.Context, cards: tuple[str, ...], as_json: bool, live: bool, no_rig: bool) -> None:
    """Validate cards, run their worked examples through the real scorer, verify seals, load local rigs' models."""
    from benchcard.card.check import CheckReport
    from benchcard.run.judgelive import check_all

    def shown(checked: CheckReport) -> None:
        if not as_json:  # the JSON is one document, printed at the end
            say(checked.lines())

    result = check_all(project_of(ctx), cards, live, rig=not no_rig, cards_checked=shown)
    if as_json:
        emit_json(result.to_json())
    elif result.models.lines():
        say(result.models.lines())
    if not result.ok:
        sys.exit(1)


@click.command()
@click.argument("card")
@click.option("--json", "as_json", is_flag=True, help="Print the seal as JSON.")
@click.pass_context
def seal(ctx: click.Context, card: str, as_json: bool) -> None:
    """Hash the card's protocol, fixtures and keys into keys/<id>/v<N>.seal.json."""
    from benchcard.card.sealing import seal_card

    report(seal_card(project_of(ctx), card), as_json)


@click.command()
@click.argument("card")
@click.option("--variant", help="Variant of an ab card (default: the baseline).")
@click.option("--fixture", help="Fixture id of an ab card (default: the first).")
@click.option("--provider", help="Another provider than the card's rig.")
@click.option("--model", help="Another model than the card's rig.")
@click.option("--base-url", help="Another OpenAI-compatible endpoint.")
@click.pass_context
def curl(ctx: click.Context, card: str, variant: str | None, fixture: str | None, provider: str | None,
         model: str | None, base_url: str | None) -> None:
    """Print the exact request as a runnable curl command; the key stays a shell variable."""
    from benchcard.run.curl import card_curl

    # a line each: in the JSON body a line separator shows as \u2028, which JSON reads as the same character
    say(card_curl(project_of(ctx), card, variant, fixture, provider, model, base_url).split("\n"))


@click.command("plan")
@click.argument("card")
@click.option("--from", "pilot", metavar="RUN", help="A pilot run of this card: adds the smallest detectable gap.")
@click.option("--baseline-rate", type=float, help="Without a pilot: the baseline's mean score (0 to 1) to assume.")
@click.option("--fixture-sd", type=float, help="With --baseline-rate: spread of the fixtures' rates (default 0).")
@click.option("--run-sd", type=float, help="With --baseline-rate: spread of each arm's rate per repetition (0).")
@click.option("--effect-sd", type=float, help="With --baseline-rate: spread of the effect over fixtures (0).")
@click.option("--levels", type=int, help="With --baseline-rate: scores in steps of 1/K (default 1: pass/fail).")
@click.option("--fixtures", type=int, help="Fixtures of the simulated run (default: the card's).")
@click.option("--repetitions", type=int, help="Repetitions of the simulated run (default: the card's).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.pass_context
def plan_cmd(ctx: click.Context, card: str, pilot: str | None, baseline_rate: float | None, fixture_sd: float | None,
             run_sd: float | None, effect_sd: float | None, levels: int | None, fixtures: int | None,
             repetitions: int | None, as_json: bool) -> None:
    """Calls, tokens and cost of a run of CARD; the smallest gap it can detect, from a pilot run or from
    declared assumptions (docs/statistics.md)."""
    from benchcard.planning.forecast import plan_report
    from benchcard.planning.power import assumptions

    assumed = assumptions(baseline_rate, fixture_sd, run_sd, effect_sd, levels)  # the flags parsed into one value
    planned = plan_report(project_of(ctx), card, pilot, assumed, fixtures, repetitions)
    for line in planned.told():  # a broken seal: on stderr, so that the plan (or its JSON) stays whole on stdout
        tell(line)
    report(planned, as_json)
