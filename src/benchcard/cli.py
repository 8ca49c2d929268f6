"""The command line: parse, call one core function, print. Any BenchcardError becomes one line and exit 1."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from .errors import BenchcardError
from .project import Project


def _project(ctx: click.Context) -> Project:
    root = ctx.obj.get("project") if ctx.obj else None
    return Project(Path(root).resolve()) if root else Project.find()


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


class _Cli(click.Group):
    """The one place a BenchcardError becomes a single line on stderr and exit 1, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BenchcardError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)


@click.group(cls=_Cli)
@click.version_option(package_name="benchcard")
@click.option("-C", "--project", type=click.Path(file_okay=False), help="Project folder (default: the nearest "
              "folder with a cards/ folder).")
@click.pass_context
def cli(ctx: click.Context, project: str | None) -> None:
    """Pre-registered, sealed, blind-scored experiments on LLM prompts."""
    ctx.obj = {"project": project}


# ----------------------------------------------------------------------------------------------------- check
@cli.command()
@click.argument("cards", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def check(ctx: click.Context, cards: tuple[str, ...], as_json: bool) -> None:
    """Validate cards, run their worked examples through the real scorer, verify seals."""
    from .check import check as run_check

    report = run_check(_project(ctx), cards)
    if as_json:
        _emit_json(
            {
                "ok": report.ok,
                "cards": [
                    {
                        "card": r.name,
                        "ok": r.ok,
                        "seal": r.seal,
                        "problems": list(r.problems),
                        "examples": [
                            {"label": e.label, "expect": e.expect, "ok": e.ok,
                             "score": e.score.score if e.score else None,
                             "metrics": e.score.metrics if e.score else None,
                             "rules": e.score.rules if e.score else None}
                            for e in r.examples
                        ],
                    }
                    for r in report.cards
                ],
            }
        )
    else:
        for r in report.cards:
            head = f"{r.card.id} v{r.card.version} ({r.card.kind}) · {r.seal}" if r.card else r.name
            click.echo(("ok   " if r.ok else "FAIL ") + head)
            for e in r.examples:
                mark = "ok  " if e.ok else "FAIL"
                expect = e.expect if isinstance(e.expect, str) else "metrics"
                score = f"{e.score.score:.2f}" if e.score else "  - "
                click.echo(f"  {mark} {score} expect {expect:<7} {e.label}")
                if e.score and e.score.rules:
                    rules = "  ".join(f"{k} {'pass' if v else 'FAIL'}" for k, v in e.score.rules.items())
                    click.echo(f"             {rules}")
                elif e.score and not isinstance(e.expect, str):
                    shown = ", ".join(f"{m}={e.score.metrics.get(m, float('nan')):g}" for m in e.expect)
                    click.echo(f"             {shown}")
            for p in r.problems:
                click.echo(f"  error: {p}")
        bad = sum(not r.ok for r in report.cards)
        click.echo(f"{len(report.cards) - bad} card(s) ok, {bad} failed")
    if not report.ok:
        sys.exit(1)


# ------------------------------------------------------------------------------------------------------ seal
@cli.command()
@click.argument("card")
@click.option("--json", "as_json", is_flag=True, help="Print the seal as JSON.")
@click.pass_context
def seal(ctx: click.Context, card: str, as_json: bool) -> None:
    """Hash the card's protocol, fixtures and keys into keys/<id>/v<N>.seal.json."""
    from .check import check_card
    from .errors import SealError
    from .seal import seal as do_seal

    project = _project(ctx)
    loaded = _load(project, card)
    problems = check_card(loaded, project, verify_seal=False).problems
    if problems:
        raise SealError(f"refusing to seal: {problems[0]}")
    path, data, written = do_seal(loaded, project)
    if as_json:
        _emit_json({**data, "written": written, "path": project.relative(path)})
        return
    verb = "sealed" if written else "already sealed, unchanged:"
    click.echo(f"{verb} {loaded.id} v{loaded.version} → {project.relative(path)}")
    click.echo(f"root {data['root']}")


# ------------------------------------------------------------------------------------------------------ curl
@cli.command()
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
    from .curl import curl_command
    from .providers import load_config

    project = _project(ctx)
    click.echo(curl_command(_load(project, card), load_config(project.root), variant, fixture, provider, model,
                            base_url))


def _load(project: Project, name: str) -> Any:
    from .card import load_card, resolve_card_path

    return load_card(resolve_card_path(project, name), project)


def main() -> None:
    """Entry point for the `benchcard` script."""
    cli(prog_name="benchcard")
