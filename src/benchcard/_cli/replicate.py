"""`benchcard replicate`: a judged run's sealed requests sent again, its verdict, and its judgement against the
original (docs/replication.md)."""

from __future__ import annotations

import sys

import click

from benchcard._cli.common import PositiveNumber, batch_options, call_limits, project_of, report, tell


@click.command("replicate")
@click.argument("run_name", metavar="RUN", required=False)
@click.option("--provider", help="Another provider than the original's: a transfer, said so everywhere.")
@click.option("--model", help="Another model than the original's: a transfer, said so everywhere.")
@click.option("--base-url", help="Another endpoint of the same API (the run is then scratch, as with `run`).")
@click.option("--seed", type=int, help="A new seed of the call order (default: the original's).")
@click.option("--concurrency", type=click.IntRange(min=1), help="Calls in flight at once (default 8).")
@click.option("--rpm", type=PositiveNumber(), help="At most this many requests per minute.")
@call_limits
@click.option("--resume", metavar="REPLICATION", help="Continue a replication run (id or folder).")
@click.option("--retry-failed", is_flag=True, help="With --resume: call its failed cells again.")
@batch_options
@click.option("--gate", is_flag=True, help="Then exit by the replication's verdict, as `verdict NEW --gate` does: "
              "0 a win or a probe's pass, 2 loss/below … 5 incomplete (docs/ci.md).")
@click.option("--json", "as_json", is_flag=True, help="No progress bar; print the run and its verdict as JSON.")
@click.pass_context
def replicate_cmd(ctx: click.Context, run_name: str | None, provider: str | None, model: str | None,
                  base_url: str | None, seed: int | None, concurrency: int | None, rpm: float | None, timeout: float,
                  attempts: int, resume: str | None, retry_failed: bool, batch: bool, no_wait: bool,
                  poll_interval: float, gate: bool, as_json: bool) -> None:
    """Send RUN's sealed requests again (the same card version and seal; the original's seed unless --seed), to
    the same rig or, with --provider/--model, another (a transfer); then its verdict, and whether it replicates
    RUN under a rule fixed before the first call. RUN: a run id, its folder, or a card (its result). --gate
    exits by the new run's own finding, not by whether it replicates RUN."""
    from benchcard.run.options import RunOptions
    from benchcard.verdict.replicate import replicate

    options = RunOptions(provider=provider, base_url=base_url, concurrency=concurrency, rpm=rpm, timeout=timeout,
                         attempts=attempts, seed=seed, resume=resume, retry_failed=retry_failed,
                         progress=not as_json, batch=batch, wait=not no_wait, poll_interval=poll_interval)
    done = replicate(project_of(ctx), run_name, options, model, tell=tell, gate=gate)
    report(done, as_json, colour=True)
    sys.exit(done.code)
