"""The verdict's commands: `verdict` (a sealed run judged, `--show`, `--gate`) and `compare` (the same rule over
two other tools' logs)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from benchcard._cli.common import nearest_project, project_of, report


@click.command()
@click.argument("run_name", metavar="RUN")
@click.option("--allow-incomplete", is_flag=True, help="Judge a run with cells that have no output or score; "
              "they count as failed (the finding is then incomplete unless the card allows that many).")
@click.option("--show", is_flag=True, help="Print RUN's verdict (a card's: its latest in the ledger); append nothing.")
@click.option("--scratch", is_flag=True, help="A trial verdict of a scratch run: written, marked scratch, no ledger "
              "row (a sealed run's is refused).")
@click.option("--gate", is_flag=True, help="Exit 0 on a win, else by the finding: 2 loss … 5 incomplete (docs/ci.md).")
@click.option("--json", "as_json", is_flag=True, help="Print verdict.json.")
@click.pass_context
def verdict(ctx: click.Context, run_name: str, allow_incomplete: bool, show: bool, scratch: bool, gate: bool,
            as_json: bool) -> None:
    """Unblind RUN, apply its card's sealed win rule, write verdict.json and table.csv, add a ledger row; once
    only: a second `benchcard verdict RUN` refuses (use --show to print it again)."""
    from benchcard.verdict.gate import verdict_and_gate

    done = verdict_and_gate(project_of(ctx), run_name, allow_incomplete=allow_incomplete, show=show, gate=gate,
                            scratch=scratch)
    report(done, as_json, colour=True)
    sys.exit(done.code)


@click.command("compare")
@click.argument("log_a", metavar="A", type=click.Path(dir_okay=False))
@click.argument("log_b", metavar="B", type=click.Path(dir_okay=False))
@click.option("--rule", "rule_file", type=click.Path(dir_okay=False), help="YAML win rule (a card's win block).")
@click.option("--win", "clauses", multiple=True, metavar="'METRIC TEST [MARGIN]'", help="A clause; repeat (α 0.05).")
@click.option("--range", "ranges", multiple=True, metavar="'METRIC LOWEST HIGHEST'",
              help="A metric's range, where its intervals are cut (0-1 metrics need none); repeat.")
@click.option("--name", "names", multiple=True, metavar="A=NAME", help="Name side A or B (default: from the logs).")
@click.option("--out", type=click.Path(file_okay=False), help="New folder for verdict.json and table.csv.")
@click.option("--ledger", is_flag=True, help="Enter it in the ledger, marked unsealed (needs a project).")
@click.option("--gate", is_flag=True, help="Exit 0 on a win, else by the finding: 2 loss … 5 incomplete (docs/ci.md).")
@click.option("--json", "as_json", is_flag=True, help="Print verdict.json.")
@click.pass_context
def compare_cmd(ctx: click.Context, log_a: str, log_b: str, rule_file: str | None, clauses: tuple[str, ...],
                ranges: tuple[str, ...], names: tuple[str, ...], out: str | None, ledger: bool, gate: bool,
                as_json: bool) -> None:
    """A paired verdict of B against A (the baseline): two inspect_ai logs or two lm-eval samples files."""
    from benchcard.publish.compareplots import RuleOptions, compare_and_plot
    rule = RuleOptions(rule_file, clauses, ranges=ranges)
    done = compare_and_plot(Path(log_a), Path(log_b), rule, out=out, enter_ledger=ledger, names=names,
                            project=nearest_project(ctx), gate=gate)
    report(done, as_json, colour=True)
    sys.exit(done.code)
