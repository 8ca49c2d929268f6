"""A run's commands: `run` (and `--gate`), `status`, `set-aside` and `export`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from benchcard._cli.common import PositiveNumber, batch_options, call_limits, project_of, report, tell


@click.command()
@click.argument("card")
@click.option("--provider", help="Another provider than the card's rig (openai, openrouter, anthropic, local, or "
              "one declared in benchcard.yaml).")
@click.option("--model", "models", multiple=True, help="Another model than the card's rig; repeat for one run "
              "per model.")
@click.option("--base-url", help="Another endpoint of the same API (vLLM, Ollama, llama.cpp's server, a proxy).")
@click.option("--concurrency", type=click.IntRange(min=1),
              help="Calls in flight at once (default 8; a resumed run keeps its own; the local provider takes one).")
@click.option("--rpm", type=PositiveNumber(), help="At most this many requests per minute "
              "(default: the provider's requests_per_minute in benchcard.yaml, else no limit; a resumed run keeps "
              "its own).")
@call_limits
@click.option("--seed", type=int, help="Seed of the call order (default: from the seal root and the start time).")
@click.option("--resume", metavar="RUN", help="Continue a run (id or folder): calls only the cells it lacks.")
@click.option("--retry-failed", is_flag=True, help="With --resume: call the run's failed cells again (earlier "
              "attempts stay in outputs.jsonl).")
@click.option("--scratch", is_flag=True, help="A trial run: marked scratch everywhere, never in the ledger.")
@click.option("--gate", is_flag=True, help="Then give the verdict and exit by it, as `verdict --gate` does.")
@batch_options
@click.option("--json", "as_json", is_flag=True, help="No progress bar; print a JSON summary.")
@click.pass_context
def run(ctx: click.Context, card: str, provider: str | None, models: tuple[str, ...], base_url: str | None,
        concurrency: int | None, rpm: float | None, timeout: float, attempts: int, seed: int | None,
        resume: str | None, retry_failed: bool, scratch: bool, gate: bool, batch: bool, no_wait: bool,
        poll_interval: float, as_json: bool) -> None:
    """Run the card's grid, blinded, and score it blind when every cell has an outcome."""
    from benchcard.run.options import RunOptions
    from benchcard.verdict.gate import run_gated

    options = RunOptions(provider=provider, models=models, base_url=base_url, concurrency=concurrency, rpm=rpm,
                         timeout=timeout, attempts=attempts, seed=seed, resume=resume, retry_failed=retry_failed,
                         scratch=scratch, progress=not as_json, batch=batch, wait=not no_wait,
                         poll_interval=poll_interval)
    done = run_gated(project_of(ctx), card, options, gate, tell=tell)
    report(done, as_json, colour=gate)  # the findings of --gate coloured as the verdict's are
    sys.exit(done.code)


@click.command("status")
@click.argument("run_name", metavar="RUN")
@click.option("--no-poll", is_flag=True, help="Only what the run folder records; ask the vendor nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status_cmd(ctx: click.Context, run_name: str, no_poll: bool, as_json: bool) -> None:
    """Where RUN stands: cells recorded and, for a batch run, each batch's state (polled now)."""
    from benchcard.run.batch.status import run_status

    report(run_status(project_of(ctx), run_name, poll=not no_poll), as_json, ascii_only=True)


@click.command("set-aside")
@click.argument("run_name", metavar="RUN")
@click.option("--why", required=True, help="Why, in a few words; kept with the run.")
@click.option("--json", "as_json", is_flag=True, help="Print what was recorded as JSON.")
@click.pass_context
def set_aside_cmd(ctx: click.Context, run_name: str, why: str, as_json: bool) -> None:
    """Set RUN aside: kept, never deleted; never resumed, judged or headlined again (a ledgered run never)."""
    from benchcard.records.setaside import set_aside

    report(set_aside(project_of(ctx), run_name, why), as_json)


@click.command("export")
@click.argument("run_name", metavar="RUN")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), help="File (default <card>-v<N>-<run>.<fmt>); kept.")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@click.pass_context
def export(ctx: click.Context, run_name: str, fmt: str, out: str | None, as_json: bool) -> None:
    """One row per cell of RUN for other tools; variant and repetition only once the run has a verdict."""
    from benchcard.records.frames import export_run

    report(export_run(project_of(ctx), run_name, fmt, Path(out) if out else None), as_json)
