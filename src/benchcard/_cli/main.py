"""The root group `benchcard`, its commands (one module per group), and the one place a user error becomes a
single line on stderr and exit 1."""

from __future__ import annotations

import contextlib
import errno
import functools
import signal
import sys
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import click

from benchcard._cli import cards, grading, ledger, replicate, runs, site, verdict
from benchcard._cli.common import escapes_on_stdout, named_within_project, streams_never_stop_the_work, tell
from benchcard._util.text import terminal_line
from benchcard.errors import BenchcardError, one_line


class _Cli(click.Group):
    """The one place a user error (a BenchcardError, or a usage error click found) becomes a single line on
    stderr and exit 1, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (BenchcardError, OSError) as exc:  # OSError: a read-only results/, a full disk
            click.echo(terminal_line(f"error: {named_within_project(ctx, one_line(exc))}"), err=True)
            sys.exit(1)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """A refused stdout (a full disk under `> file`, a terminal hung up) is said in one line once the work is
        done, and the exit is 1; a reader gone (`| head -1`, `| grep -q`) is not an error: nothing is said and
        the command's own code stands."""
        code: str | int | None = 0
        with streams_never_stop_the_work() as streams:
            try:
                with escapes_on_stdout():
                    self._main(*args, **kwargs)
            except SystemExit as exc:
                code = exc.code
            refused = streams.stdout_refused()
            if not code and refused is not None and refused.errno != errno.EPIPE:
                tell(f"error: stdout refused what benchcard printed ({refused.strerror or refused}); the command's "
                     "work is done, only its output is lost")
                code = 1
        sys.exit(code)

    def _main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            code = super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "benchcard"
            click.echo(terminal_line(f"error: {exc.format_message()} (see `{where} --help`)"), err=True)
            sys.exit(1)
        except (click.ClickException, click.exceptions.Abort) as exc:
            message = exc.format_message() if isinstance(exc, click.ClickException) else "aborted"
            click.echo(terminal_line(f"error: {message}"), err=True)
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


def _given(ctx: click.Context, param: click.Parameter, value: Any,
           then: Callable[[click.Context, click.Parameter, Any], Any] | None = None) -> Any:
    """A text value given empty (`--base-url "$URL"` with URL unset) is a usage error, never the option left out:
    left out, `--base-url` and `--provider` mean the card's own rig (its real endpoint, key and costs), `-C` the
    project around the current folder, `--out` a default file."""
    if value == "" or (isinstance(value, tuple) and "" in value):
        left_out = "" if isinstance(param, click.Argument) else ", or leave the option out"  # RUN, CARD: never
        raise click.BadParameter(f"empty (a variable set but empty?); give a value{left_out}", ctx=ctx, param=param)
    return then(ctx, param, value) if then is not None else value


def _refuse_empty(command: click.Command) -> None:
    """Every text option and argument of `command` (and of its subcommands) checked by `_given`."""
    for param in command.params:
        if param.type is click.STRING or isinstance(param.type, click.Path):
            param.callback = functools.partial(_given, then=param.callback)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _refuse_empty(sub)


for _command in (cards.check, cards.seal, cards.curl, runs.run, runs.status_cmd, cards.init, site.site,
                 site.view_cmd, verdict.verdict, ledger.ledger_cmd, runs.set_aside_cmd, runs.export,
                 verdict.compare_cmd, grading.blind_sheet_cmd, grading.grade_cmd, cards.plan_cmd,
                 replicate.replicate_cmd):
    cli.add_command(_command)
_refuse_empty(cli)


def main() -> None:
    """Entry point for the `benchcard` script. SIGTERM (what `kill`, `timeout`, a cancelled CI job and `docker
    stop` send) stops a command as Ctrl-C does: a run records the replies it counted and says how to resume, where
    Python's default ended it on the spot, as SIGKILL does. So does SIGHUP (the terminal closed, an ssh session
    dropped), unless it is ignored (`nohup`): what the command still prints to the terminal gone is dropped
    (`streams_never_stop_the_work`)."""
    with _sigterm_as_ctrl_c():
        cli(prog_name="benchcard")


@contextlib.contextmanager
def _sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM handled as Ctrl-C, also where Ctrl-C is not for this process. A shell without job control (a
    script's `benchcard run … &`, nohup, a CI step) starts a command with SIGINT ignored, so that the terminal's
    Ctrl-C reaches only the foreground; SIGTERM is sent to the command itself. With SIGINT ignored, asyncio's run
    installs no Ctrl-C handler, and SIGTERM ended such a run on the spot, its replies uncounted (docs/scale.md,
    "Kills and crashes"). So Ctrl-C is kept out by blocking SIGINT instead (as ignored, it never arrives, and a
    child inherits the block as it inherited the ignoring), and SIGINT gets Python's own handler, which asyncio
    replaces with its own for a run: SIGTERM calls whichever is there.

    The process is left as it was found on the way out: whoever called main() in-process (a test, a script) would
    otherwise keep SIGINT blocked, and every process it starts after, a run a test stops with Ctrl-C too, would
    never see a SIGINT. SIGINT is ignored again before it is unblocked, so one that arrived meanwhile is dropped as
    it would have been."""
    before_int, before_term = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    hangup = getattr(signal, "SIGHUP", None)
    before_hup = signal.getsignal(hangup) if hangup is not None else None
    mask = None
    if before_int is signal.SIG_IGN and hasattr(signal, "pthread_sigmask"):
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _as_ctrl_c)
    if hangup is not None and before_hup is signal.SIG_DFL:  # nohup's SIG_IGN: kept, the run goes on
        signal.signal(hangup, _as_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before_term)
        if hangup is not None and before_hup is signal.SIG_DFL:
            signal.signal(hangup, before_hup)
        if mask is not None:
            signal.signal(signal.SIGINT, before_int)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _as_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (or SIGHUP) handed to what handles Ctrl-C now: asyncio's handler in a run (it cancels the calls,
    so the pass records what it counted), Python's elsewhere (KeyboardInterrupt). Where SIGINT has no handler (a
    forked child that ignores it; a system that cannot block signals), the signal ends the process as it would
    have, never leaving it deaf to both. The handler is called, not SIGINT raised: a blocked SIGINT would never
    arrive."""
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler):
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)
        return
    handler(signal.SIGINT, frame)
