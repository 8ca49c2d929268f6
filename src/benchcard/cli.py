"""The command line: parse, call one core function, print. Any BenchcardError becomes one line and exit 1."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from benchcard.errors import BenchcardError, one_line
from benchcard.project import Project


def _project(ctx: click.Context) -> Project:
    root = ctx.obj.get("project") if ctx.obj else None
    return Project.require(Path(root) if root else None)


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _report(report: tuple[Any, list[str]], as_json: bool) -> None:
    """A core function's (JSON, lines) pair printed as --json asks."""
    click.echo(json.dumps(report[0], indent=2, ensure_ascii=False, default=str) if as_json else "\n".join(report[1]))


class _Cli(click.Group):
    """The one place a user error (a BenchcardError, or a usage error click found) becomes a single line on
    stderr and exit 1, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (BenchcardError, OSError) as exc:  # OSError: a read-only results/, a full disk
            click.echo(f"error: {one_line(exc)}", err=True)
            sys.exit(1)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            code = super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "benchcard"
            click.echo(f"error: {exc.format_message()} (see `{where} --help`)", err=True)
            sys.exit(1)
        except (click.ClickException, click.exceptions.Abort) as exc:
            message = exc.format_message() if isinstance(exc, click.ClickException) else "aborted"
            click.echo(f"error: {message}", err=True)
            sys.exit(1)
        # Without standalone mode click returns the code of a ctx.exit() (--help, --version) instead of exiting.
        sys.exit(code if isinstance(code, int) else 0)


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
@click.option("--live", is_flag=True, help="Also send judge cards' worked examples to the real judge (calls it).")
@click.option("--no-rig", is_flag=True, help="Start no model (a CI job running the cards on another provider).")
@click.pass_context
def check(ctx: click.Context, cards: tuple[str, ...], as_json: bool, live: bool, no_rig: bool) -> None:
    """Validate cards, run their worked examples through the real scorer, verify seals, load local rigs' models."""
    from benchcard.card.check import check as run_check
    from benchcard.run.judgelive import check_calls

    report = run_check(_project(ctx), cards)
    _report((report.to_json(), report.lines()), as_json)
    if not report.ok:
        sys.exit(1)
    lines, failed = check_calls(_project(ctx), [r.card for r in report.cards if r.card], live, rig=not no_rig)
    if lines and not as_json:
        click.echo("\n".join(lines))
    if failed:
        sys.exit(1)


# ------------------------------------------------------------------------------------------------------ seal
@cli.command()
@click.argument("card")
@click.option("--json", "as_json", is_flag=True, help="Print the seal as JSON.")
@click.pass_context
def seal(ctx: click.Context, card: str, as_json: bool) -> None:
    """Hash the card's protocol, fixtures and keys into keys/<id>/v<N>.seal.json."""
    from benchcard.card.check import check_card
    from benchcard.card.load import load_named
    from benchcard.card.seal import seal as do_seal
    from benchcard.errors import SealError

    project = _project(ctx)
    loaded = load_named(project, card)
    problems = check_card(loaded, project, verify_seal=False).problems
    if problems:
        raise SealError(f"refusing to seal: {problems[0]}")
    from benchcard.card.design import cannot_win

    dead = cannot_win(loaded) if loaded.win is None or not loaded.win.accept_cannot_win else None
    if dead and not project.seal_path(loaded.id, loaded.version).exists():
        raise SealError(f"refusing to seal {project.relative(loaded.path)}: {dead} (or, for an A/A or pilot card, "
                        "say so: win: {accept_cannot_win: true})")
    path, data, written = do_seal(loaded, project)
    verb = "sealed" if written else "already sealed, unchanged:"
    _report(({**data.fields(), "written": written, "path": project.relative(path)},
             [f"{verb} {loaded.id} v{loaded.version} → {project.relative(path)}", f"root {data.root}"]), as_json)


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
    from benchcard.card.load import load_named
    from benchcard.run.curl import curl_command
    from benchcard.run.providers import load_config

    project = _project(ctx)
    click.echo(curl_command(load_named(project, card), load_config(project.root), variant, fixture, provider, model,
                            base_url))


# ------------------------------------------------------------------------------------------------------- run
@cli.command()
@click.argument("card")
@click.option("--provider", help="Another provider than the card's rig (openai, openrouter, anthropic, local, or "
              "one declared in benchcard.yaml).")
@click.option("--model", "models", multiple=True, help="Another model than the card's rig; repeat for one run "
              "per model.")
@click.option("--base-url", help="Another endpoint of the same API (vLLM, Ollama, llama.cpp's server, a proxy).")
@click.option("--concurrency", type=click.IntRange(min=1),
              help="Calls in flight at once (default 8; a resumed run keeps its own; the local provider takes one).")
@click.option("--rpm", type=click.FloatRange(min=0, min_open=True), help="At most this many requests per minute "
              "(default: the provider's requests_per_minute in benchcard.yaml, else no limit; a resumed run keeps "
              "its own).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=120.0, show_default=True,
              help="Seconds allowed per call before it is retried.")
@click.option("--attempts", type=click.IntRange(min=1), default=4, show_default=True,
              help="Attempts per cell on 429, 5xx, timeouts and dropped connections.")
@click.option("--seed", type=int, help="Seed of the call order (default: from the seal root and the start time).")
@click.option("--resume", metavar="RUN", help="Continue a run (id or folder): calls only the cells it lacks.")
@click.option("--retry-failed", is_flag=True, help="With --resume: call the run's failed cells again (earlier "
              "attempts stay in outputs.jsonl).")
@click.option("--scratch", is_flag=True, help="A trial run: marked scratch everywhere, never in the ledger.")
@click.option("--gate", is_flag=True, help="Then give the verdict and exit by it, as `verdict --gate` does.")
@click.option("--batch", is_flag=True, help="Through the vendor's batch API (openai, anthropic; docs/scale.md).")
@click.option("--no-wait", is_flag=True, help="With --batch: submit and return; --resume collects.")
@click.option("--poll-interval", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
              help="Seconds between polls of a batch.")
@click.option("--json", "as_json", is_flag=True, help="No progress bar; print a JSON summary.")
@click.pass_context
def run(ctx: click.Context, card: str, provider: str | None, models: tuple[str, ...], base_url: str | None,
        concurrency: int | None, rpm: float | None, timeout: float, attempts: int, seed: int | None,
        resume: str | None, retry_failed: bool, scratch: bool, gate: bool, batch: bool, no_wait: bool,
        poll_interval: float, as_json: bool) -> None:
    """Run the card's grid, blinded, and score it blind when every cell has an outcome."""
    import time

    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run as do_run

    options = RunOptions(provider=provider, models=models, base_url=base_url, concurrency=concurrency, rpm=rpm,
                         timeout=timeout, attempts=attempts, seed=seed, resume=resume, retry_failed=retry_failed,
                         scratch=scratch, progress=not as_json, batch=batch, wait=not no_wait,
                         poll_interval=poll_interval)
    project = _project(ctx)
    if gate:
        from benchcard.verdict.gate import gate_runs, require_gate

        require_gate(project, card)
    started = time.perf_counter()
    summaries = do_run(project, card, options)
    report = gate_runs(project, [(s.folder, s.finished) for s in summaries]) if gate else None
    if as_json:
        _emit_json({"runs": [s.to_json() for s in summaries], "wall_s": round(time.perf_counter() - started, 3),
                    **(report.to_json() if report else {})})
        sys.exit(report.code if report else 0)
    for s in summaries:
        click.echo("\n".join(s.lines()))
    if report:
        report.print()
        sys.exit(report.code)


@cli.command("status")
@click.argument("run_name", metavar="RUN")
@click.option("--no-poll", is_flag=True, help="Only what the run folder records; ask the vendor nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status_cmd(ctx: click.Context, run_name: str, no_poll: bool, as_json: bool) -> None:
    """Where RUN stands: cells recorded and, for a batch run, each batch's state (polled now)."""
    from benchcard.records.cardruns import find_run
    from benchcard.run.batch.status import run_status, status_lines

    project = _project(ctx)
    result = run_status(project, find_run(project, run_name), poll=not no_poll)
    click.echo(json.dumps(result.to_json(), indent=2) if as_json else "\n".join(status_lines(result)))


@cli.command()
@click.argument("folder", default=".")
def init(folder: str) -> None:
    """A new project in FOLDER (new or empty): a minimal A/B card, three fixtures with keys, benchcard.yaml."""
    from benchcard.card.starter import init_project

    click.echo("\n".join(init_project(Path(folder), folder).lines()))


@cli.command()
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Folder to build into (default: site/ "
              "in the project). Emptied first if benchcard built it; any other non-empty folder is refused.")
@click.option("--json", "as_json", is_flag=True, help="Print what was built as JSON.")
@click.option("--serve", is_flag=True, help="Serve the pages on 127.0.0.1, rebuilt as results change.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="With --serve: the port (default: a free one).")
@click.pass_context
def site(ctx: click.Context, out_dir: str | None, as_json: bool, serve: bool, port: int) -> None:
    """Build the static site: card pages, results tables, ledger, plots (no script); --serve: a local viewer."""
    from benchcard.publish.build import build_site
    from benchcard.publish.serve import serve as serve_site

    project, out = _project(ctx), Path(out_dir).resolve() if out_dir else None
    if serve:
        return serve_site(project, out, port, click.echo)  # a temporary folder unless --out names one
    report = build_site(project, out or project.root / "site")
    _report((report.to_json(), report.lines()), as_json)


@cli.command("view")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="The port (default: a free one).")
@click.pass_context
def view_cmd(ctx: click.Context, port: int) -> None:
    """`site --serve`: the pages on 127.0.0.1, each run's outputs side by side, rebuilt as results change."""
    from benchcard.publish.serve import serve as serve_site

    serve_site(_project(ctx), None, port, click.echo)


@cli.command()
@click.argument("run_name", metavar="RUN")
@click.option("--allow-incomplete", is_flag=True, help="Judge a run with cells that have no output or score; "
              "they count as failed (the finding is then incomplete unless the card allows that many).")
@click.option("--show", is_flag=True, help="Print RUN's verdict (a card's: its latest in the ledger); append nothing.")
@click.option("--scratch", is_flag=True, help="A trial verdict: written, marked scratch, no ledger row.")
@click.option("--gate", is_flag=True, help="Exit 0 on a win, else by the finding: 2 loss … 5 incomplete (docs/ci.md).")
@click.option("--json", "as_json", is_flag=True, help="Print verdict.json.")
@click.pass_context
def verdict(ctx: click.Context, run_name: str, allow_incomplete: bool, show: bool, scratch: bool, gate: bool,
            as_json: bool) -> None:
    """Unblind RUN, apply its card's sealed win rule, write verdict.json and table.csv, add a ledger row; once
    only: a second `benchcard verdict RUN` refuses (use --show to print it again)."""
    from benchcard.verdict.gate import shown_lines, verdict_and_gate
    from benchcard.verdict.report import print_verdict

    result, decided = verdict_and_gate(_project(ctx), run_name, allow_incomplete=allow_incomplete, show=show,
                                       gate=gate, scratch=scratch)
    _emit_json(result.to_json() | ({"gate": decided.to_json()} if decided else {})) if as_json else print_verdict(
        shown_lines(result, decided))
    sys.exit(decided.code if decided else 0)


# ---------------------------------------------------------------------------------------------------- ledger
@cli.command("ledger")
@click.option("--verify", "do_verify", is_flag=True, help="Check the hash chain and every judged run's files "
              "against its row; name each problem.")
@click.option("--repair", "do_repair", is_flag=True, help="Move a torn last line (a write cut short) to a dated "
              "side file, so that verdicts can be appended again.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@click.pass_context
def ledger_cmd(ctx: click.Context, do_verify: bool, do_repair: bool, as_json: bool) -> None:
    """Show the ledger of verdicts (results and non-results); --verify checks the chain and the evidence."""
    from benchcard.records import ledger as ledger_mod
    from benchcard.verdict.ledgerview import print_rows, repair_line

    project = _project(ctx)
    if do_repair:
        click.echo(repair_line(project, ledger_mod.repair(project)))
        return
    if do_verify:
        from benchcard.verdict.audit import audit, audit_lines

        report = audit(project)
        _report((report.to_json(), audit_lines(report)), as_json)
        sys.exit(0 if report.ok else 1)
    rows = ledger_mod.read(project)
    _emit_json([row.fields() for row in rows]) if as_json else print_rows(project, rows)


@cli.command("set-aside")
@click.argument("run_name", metavar="RUN")
@click.option("--why", required=True, help="Why, in a few words; kept with the run.")
@click.option("--json", "as_json", is_flag=True, help="Print what was recorded as JSON.")
@click.pass_context
def set_aside_cmd(ctx: click.Context, run_name: str, why: str, as_json: bool) -> None:
    """Set RUN aside: kept, never deleted; never resumed, judged or headlined again (a ledgered run never)."""
    from benchcard.errors import RunError
    from benchcard.records.cardruns import find_run
    from benchcard.records.setaside import set_aside

    project = _project(ctx)
    if "/" not in run_name and (project.results_dir / run_name).is_dir():  # never "whichever run is newest"
        raise RunError(f"{run_name} is a card; name the run to set aside by its id (`benchcard ledger` lists the "
                       "unfinished ones)")
    done = set_aside(project, find_run(project, run_name), why)
    _report((done.to_json(), [done.line]), as_json)


@cli.command("export")
@click.argument("run_name", metavar="RUN")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), help="File (default <card>-v<N>-<run>.<fmt>); kept.")
@click.pass_context
def export(ctx: click.Context, run_name: str, fmt: str, out: str | None) -> None:
    """One row per cell of RUN for other tools; variant and repetition only once the run has a verdict."""
    from benchcard.verdict.frames import export_run

    click.echo(export_run(_project(ctx), run_name, fmt, Path(out) if out else None).line)


@cli.command("compare")
@click.argument("log_a", metavar="A", type=click.Path(dir_okay=False))
@click.argument("log_b", metavar="B", type=click.Path(dir_okay=False))
@click.option("--rule", "rule_file", type=click.Path(dir_okay=False), help="YAML win rule (a card's win block).")
@click.option("--win", "clauses", multiple=True, metavar="'METRIC TEST [MARGIN]'", help="A clause; repeat (α 0.05).")
@click.option("--name", "names", multiple=True, metavar="A=NAME", help="Name side A or B (default: from the logs).")
@click.option("--out", type=click.Path(file_okay=False), help="New folder for verdict.json and table.csv.")
@click.option("--ledger", is_flag=True, help="Enter it in the ledger, marked unsealed (needs a project).")
@click.option("--gate", is_flag=True, help="Exit 0 on a win, else by the finding: 2 loss … 5 incomplete (docs/ci.md).")
@click.option("--json", "as_json", is_flag=True, help="Print verdict.json.")
@click.pass_context
def compare_cmd(ctx: click.Context, log_a: str, log_b: str, rule_file: str | None, clauses: tuple[str, ...],
                names: tuple[str, ...], out: str | None, ledger: bool, gate: bool, as_json: bool) -> None:
    """A paired verdict of B against A (the baseline): two inspect_ai logs or two lm-eval samples files."""
    from benchcard.publish.compareplots import RuleOptions, compare_and_plot
    done = compare_and_plot(Path(log_a), Path(log_b), RuleOptions(rule_file, clauses), out=out, enter_ledger=ledger,
                            names=names, project=Project.find(ctx.obj["project"] and Path(ctx.obj["project"])))
    _report((done.to_json(gate), done.lines(gate)), as_json)
    sys.exit(done.gate().code if gate else 0)


# ------------------------------------------------------------------------------------------- blind grading
@cli.command("blind-sheet")
@click.argument("run_name", metavar="RUN")
@click.option("--out", type=click.Path(dir_okay=False), help="Where to write the sheet (default: "
              "blind-<run>-<name>.csv in the current folder).")
@click.option("--name", default="human", show_default=True, help="The sheet's name (one per grader).")
@click.option("--force", is_flag=True, help="Write even if the file exists (the old one is kept as .bak).")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@click.pass_context
def blind_sheet_cmd(ctx: click.Context, run_name: str, out: str | None, name: str, force: bool, as_json: bool) -> None:
    """Export RUN's answered outputs as a shuffled CSV for blind human grading (no variant, model or run index)."""
    from benchcard.records.cardruns import find_run
    from benchcard.verdict.gradereport import sheet_report
    from benchcard.verdict.grading import blind_sheet

    project = _project(ctx)
    sheet = blind_sheet(project, find_run(project, run_name), Path(out) if out else None, name, force)
    _report(sheet_report(project, sheet, run_name), as_json)


@cli.command("grade")
@click.argument("run_name", metavar="RUN")
@click.argument("sheet", type=click.Path(dir_okay=False))
@click.option("--name", help="The sheet's name (default: the only sheet exported for RUN).")
@click.option("--force", is_flag=True, help="Replace grades imported before (they are kept as .bak).")
@click.option("--json", "as_json", is_flag=True, help="Print what was imported as JSON.")
@click.pass_context
def grade_cmd(ctx: click.Context, run_name: str, sheet: str, name: str | None, force: bool, as_json: bool) -> None:
    """Import a filled blind sheet into RUN's grades/; the verdict compares them with the scorer."""
    from benchcard.records.cardruns import find_run
    from benchcard.verdict.gradereport import grade_report
    from benchcard.verdict.grading import import_grades

    project = _project(ctx)
    _report(grade_report(project, import_grades(project, find_run(project, run_name), Path(sheet), name, force)),
            as_json)


@cli.command("plan")
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
    from benchcard.card.load import load_named
    from benchcard.planning.forecast import plan_report
    from benchcard.planning.power import assumptions

    project = _project(ctx)
    assumed = assumptions(baseline_rate, fixture_sd, run_sd, effect_sd, levels)
    _report(plan_report(project, load_named(project, card), pilot, assumed, fixtures, repetitions), as_json)


def main() -> None:
    """Entry point for the `benchcard` script."""
    cli(prog_name="benchcard")
