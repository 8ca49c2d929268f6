"""What every command shares: the project it works in, and the one way a command reports. A core function hands
back a `Reported` (its `to_json()` and its `lines()`); `report` prints the one or the other as `--json` asks,
the lines coloured for a command that gives findings. Only the ledger's table and `check`'s lines, printed as
each card is checked, are printed otherwise. Colour is for a person at a terminal only: `coloured` paints a
verdict's lines (a result green, a non-result yellow, a failed clause red) and `terminal` is the console the
ledger's table is drawn on; piped, or under NO_COLOR, nothing but the text. What is printed for a person shows
its control characters as escapes and each line stays one visible line (`terminal_line`: a newline inside it
shows as `\\n`, a tab as `\\t`): text read from a file, such as a ledger row edited by hand, never drives the
terminal and never breaks a line or a table's row in two."""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import math
import os
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

from benchcard._util.text import terminal_line
from benchcard.project import Project

# DEL and the C1 controls, which JSON may hold raw: escaped, so that --json on a terminal cannot drive it either;
# and a lone surrogate, which no encoding writes (JSON's escape, `\ud800`, is what the file it was read from holds)
_RAW_IN_JSON = re.compile("[\x7f-\x9f\ud800-\udfff]")


def project_of(ctx: click.Context) -> Project:
    """The project `-C` names, else the nearest folder with a cards/ folder (a note on stderr when that one lies
    inside another project: which ledger is meant is then not obvious)."""
    root = ctx.obj.get("project") if ctx.obj else None
    return Project.require(Path(root) if root else None, tell)


def named_within_project(ctx: click.Context, message: str) -> str:
    """An error's message with the paths inside the project (`-C`'s, else the nearest) named from its root,
    whatever the current folder: the one place every command's error is so named, never each command itself.
    Where there is no project (`compare` in any folder), a path is named as it was."""
    root = ctx.obj.get("project") if ctx.obj else None
    project = Project(Path(root).resolve()) if root else Project.find()
    return project.named_within(message) if project.cards_dir.is_dir() else message


def nearest_project(ctx: click.Context) -> Project:
    """`compare`'s project: the one `-C` names, else the nearest, which may be no project at all (a comparison is
    often made where none is); the same note as `project_of` when it lies inside another."""
    root = ctx.obj.get("project") if ctx.obj else None
    if root:
        return Project.find(Path(root))
    project = Project.find()
    project.tell_enclosing(tell)
    return project


def _holds_all_of_unicode(stream: Any) -> bool:
    """Whether a text stream's encoding writes every character (UTF-8, or another UTF); a Latin-1 locale or a
    Windows pipe in its ANSI code page (cp1252) does not."""
    try:
        return codecs.lookup(getattr(stream, "encoding", None) or "ascii").name.startswith("utf")
    except LookupError:
        return False


@contextlib.contextmanager
def escapes_on_stdout() -> Iterator[None]:
    """While a command runs, stdout writes a character its encoding cannot hold as its escape (`\\u2014`, the
    notation `text.escape` uses), so that a card's `—` or a verdict's `→` on a cp1252 pipe or a Latin-1 terminal
    is read, not a UnicodeEncodeError traceback after the command's work is done (a verdict appended, a gate's
    exit code lost). stderr already does so (Python's default); an ASCII stdout click rewrites as UTF-8."""
    stream = sys.stdout
    if not isinstance(stream, io.TextIOWrapper) or _holds_all_of_unicode(stream) or stream.errors == "backslashreplace":
        yield
        return
    errors = stream.errors
    stream.reconfigure(errors="backslashreplace")
    try:
        yield
    finally:
        with contextlib.suppress(ValueError, OSError):  # a stream closed or broken by now keeps what it has
            stream.reconfigure(errors=errors)


class _Unheard(io.FileIO):
    """A standard stream's descriptor whose first refused write (a reader gone: `| head -1`; a full `> file`; a
    terminal hung up) is kept, not raised, and ends the stream: what follows is dropped whole, never written
    past a hole. Raised, it stopped the command's work where it printed: a run whose notes went to a closed
    pipe was left unscored and unclosed, its --resume owed."""

    def __init__(self, fd: int) -> None:
        super().__init__(fd, "w", closefd=False)
        self.refused: OSError | None = None

    def write(self, data: Any) -> int:
        size = memoryview(data).nbytes
        if self.refused is None:
            try:
                return super().write(data) or 0
            except OSError as exc:
                self.refused = exc
        return size


@dataclass(frozen=True)
class Streams:
    """stdout and stderr while a command runs, each over an `_Unheard` descriptor (None: a stream with no
    descriptor, such as a test's captured output, left as it was)."""

    out: _Unheard | None
    err: _Unheard | None

    def stdout_refused(self) -> OSError | None:
        """The first error writing stdout met, once what was printed is written (or refused) whole."""
        with contextlib.suppress(ValueError, OSError):
            sys.stdout.flush()
        return self.out.refused if self.out is not None else None


def _closed_to_devnull() -> None:
    """Descriptors 0, 1 and 2 held open on /dev/null where they were closed (`benchcard run … >&- 2>&-`): a
    closed one is the next file opened, and a run's outputs.jsonl or the ledger would then receive what is printed
    or logged to it (a worker's or a library's words on its stderr) in the middle of its rows."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: `fd` itself, the lower ones open
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def _unheard(stream: Any, fd_if_none: int) -> tuple[Any, _Unheard | None]:
    """`stream` again over an `_Unheard` descriptor, with its encoding, errors and buffering; a stream with no
    descriptor of its own (a test's captured output) as it is. No stream (Python's for a descriptor that was
    closed) is one on that descriptor, now /dev/null, so that what is printed is dropped, never an error."""
    if stream is None:
        raw = _Unheard(fd_if_none)
        return io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8", errors="backslashreplace",
                                line_buffering=True), raw
    try:
        fd = stream.fileno()
    except (AttributeError, ValueError, OSError):  # io.UnsupportedOperation is both an OSError and a ValueError
        return stream, None
    if not isinstance(stream, io.TextIOWrapper):
        return stream, None
    raw = _Unheard(fd)
    wrapped = io.TextIOWrapper(io.BufferedWriter(raw), encoding=stream.encoding, errors=stream.errors,
                               line_buffering=stream.line_buffering, write_through=stream.write_through)
    return wrapped, raw


@contextlib.contextmanager
def streams_never_stop_the_work() -> Iterator[Streams]:
    """While a command runs, a refused write to stdout or stderr never stops its work on disk: the command goes
    on to its end (a run scored and closed, a verdict written) and the caller learns which stream refused what
    (`Streams`), to say so once the work is done. The streams are put back as found on the way out."""
    _closed_to_devnull()
    before = sys.stdout, sys.stderr
    for stream in before:
        with contextlib.suppress(AttributeError, ValueError, OSError):  # what was printed before, written by its own
            stream.flush()
    (sys.stdout, out), (sys.stderr, err) = _unheard(before[0], 1), _unheard(before[1], 2)
    try:
        yield Streams(out, err)
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(ValueError, OSError):
                stream.flush()
        sys.stdout, sys.stderr = before  # None, as Python made it, for one that was closed


def emit_json(data: Any, *, ascii_only: bool = False) -> None:
    """`--json`: indented two spaces, UTF-8 as is, anything else (a path, a date) as its string. `status` alone
    has always escaped what is not ASCII (`ascii_only`), and keeps its bytes; so does any command whose stdout
    cannot write every character (a cp1252 pipe): JSON's own `\\u` escapes keep it JSON, the same data."""
    ascii_only = ascii_only or not _holds_all_of_unicode(sys.stdout)
    text = json.dumps(data, indent=2, ensure_ascii=ascii_only, default=str)
    click.echo(_RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def emit_json_items(items: Iterable[Any]) -> None:
    """`emit_json` of a list, written an item at a time as they come (the same bytes), so that a list read from a
    long file (`ledger --json`) is never held whole."""
    ascii_only = not _holds_all_of_unicode(sys.stdout)
    sep = "[\n"
    for item in items:
        text = json.dumps(item, indent=2, ensure_ascii=ascii_only, default=str).replace("\n", "\n  ")
        click.echo(sep + "  " + _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text), nl=False)
        sep = ",\n"
    click.echo("[]" if sep == "[\n" else "\n]")


def say(lines: Sequence[str]) -> None:
    """Lines for a person, plain, each one visible line."""
    click.echo("\n".join(terminal_line(line) for line in lines))


def say_line(line: str) -> None:
    """One line for a person, plain (what a long-running command, `site --serve`, prints as it goes)."""
    click.echo(terminal_line(line))


def tell(line: str) -> None:
    """A note while a command works, on stderr as a progress bar is, so that stdout keeps only the result."""
    click.echo(terminal_line(line), err=True)


class Reported(Protocol):
    """What a core function hands back for the command line to print: one value, so that the JSON a script reads
    and the lines a person reads are made in one place and never drift apart."""

    def to_json(self) -> Any:
        """What `--json` prints (any JSON data; a path or a date is printed as its string)."""

    def lines(self) -> Sequence[str]:
        """What a person reads, a line each."""


@dataclass(frozen=True)
class Said:
    """A result the command words itself, where the words need what only the command line knows: `blind-sheet`
    and `grade` name the sheet as the user can type it from the current folder."""

    data: Any
    said: tuple[str, ...]

    def to_json(self) -> Any:
        return self.data

    def lines(self) -> list[str]:
        return list(self.said)


def report(result: Reported, as_json: bool, *, colour: bool = False, ascii_only: bool = False) -> None:
    """A core function's result printed as --json asks: its JSON, or its lines (`colour`: through `coloured`, as
    the findings of `verdict`, `compare`, `replicate` and `run --gate` are)."""
    if as_json:
        emit_json(result.to_json(), ascii_only=ascii_only)
    elif colour:
        coloured(result.lines())
    else:
        say(result.lines())


def line_style(line: str) -> str:
    """The colour of one verdict line: a result green, a non-result yellow, a failed clause red, others plain. A
    finding may end in a note in brackets (`compare`'s `(unsealed comparison)`)."""
    if line.startswith("  FAILS"):
        return "red"
    finding = re.sub(r" \([^()]*\)$", "", line) if line.startswith("finding:") else line
    if finding.endswith("→ result"):
        return "bold green"
    if finding.endswith("→ non-result"):
        return "yellow"
    return ""


def coloured(lines: Sequence[str], console: Any = None) -> None:
    """Print a verdict's lines through rich, coloured by `line_style`. A default console writes to stdout and
    colours only on a terminal without NO_COLOR (FORCE_COLOR forces it); lines are never wrapped or re-marked."""
    from rich.console import Console
    from rich.text import Text

    console = console or Console(soft_wrap=True, highlight=False, emoji=False, markup=False)
    plain = console.no_color  # NO_COLOR: no bold either, so that nothing but the text reaches the terminal
    for line in lines:
        console.print(Text(terminal_line(line), style="" if plain else line_style(line)))


def terminal() -> Any:
    """The console a table is drawn on: piped, a wide one unless COLUMNS says otherwise; on a terminal, its width."""
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 200)


class PositiveNumber(click.FloatRange):
    """A number above 0 that is finite: click's FloatRange let `nan` through (no comparison holds for it) and
    `inf` (`--timeout inf` failed every call with OverflowError, and the run stopped after its first cells)."""

    name = "positive number"

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


F = TypeVar("F")

#: The options `run` and `replicate` share, written once so their help and limits never drift apart.
_CALL_LIMITS = (
    click.option("--timeout", type=PositiveNumber(), default=120.0, show_default=True,
                 help="Seconds allowed per call before it is retried."),
    click.option("--attempts", type=click.IntRange(min=1), default=4, show_default=True,
                 help="Attempts per cell on 429, 5xx, timeouts and dropped connections."),
)
_BATCH_OPTIONS = (
    click.option("--batch", is_flag=True, help="Through the vendor's batch API (openai, anthropic; docs/scale.md)."),
    click.option("--no-wait", is_flag=True, help="With --batch: submit and return; --resume collects."),
    click.option("--poll-interval", type=PositiveNumber(), default=30.0, show_default=True,
                 help="Seconds between polls of a batch."),
)


def _apply(options: tuple[Any, ...], command: F) -> F:
    for option in reversed(options):
        command = option(command)
    return command


def call_limits(command: F) -> F:
    """`--timeout` and `--attempts`, as every command that makes calls takes them."""
    return _apply(_CALL_LIMITS, command)


def batch_options(command: F) -> F:
    """`--batch`, `--no-wait` and `--poll-interval`, as every command that makes calls takes them."""
    return _apply(_BATCH_OPTIONS, command)
