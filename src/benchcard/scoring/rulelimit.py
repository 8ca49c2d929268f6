"""Rules matched under a time limit, in a child process that can be stopped.

A backtracking engine (Python's `re`, or the `regress` crate) takes exponential time on a pattern such as
`/^(a+)+$/` against `aaaa…!`: `check` and blind scoring hung forever, and Ctrl-C did not stop them because the
match is one call into native code. Here every output's rules run in one long-lived child process; the parent
waits at most `RULE_TIME_LIMIT` seconds for the answer, and on overrun kills the child and raises a one-line
`CardError` naming the rule. The child compiles each `/pattern/flags` literal itself with `compile_js`, so the
limit holds whichever engine `compile_js` uses. A shared counter tells the parent which rule was running.
Blind scoring records an output a rule runs past the limit on as unscored, naming the rule (`scorers.py`);
`runaway` finds such a rule before sealing, on the inputs that make one backtrack: its own characters repeated,
then one that fails the match (`check` warns of it, `seal` refuses it).
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.sharedctypes import Synchronized
from typing import Any

from benchcard.errors import CardError, RuleTimeout
from benchcard.scoring.jsregex import compile_js

RULE_TIME_LIMIT = 2.0  # seconds for all the rules of one output; a sane rule takes microseconds
#: `runaway`'s inputs: a rule's own characters repeated to these lengths, then a character that ends the match
#: (a nested quantifier doubles its time with each character: `/^(\s*r+)+ed$/` took 0.04 s on 20 r's and '!',
#: 0.46 s on 24, here), each given `PUMP_LIMIT` seconds
PUMP_LENGTHS = (12, 24, 36, 48)
PUMP_LIMIT = 0.25
#: What an escape of a character class stands for in a pumped input (`\s` a space, `\d` a digit, …); any other
#: escape of a letter (`\b`, `\u…`) stands for nothing, an escaped symbol for itself
_CLASS_CHARS = {"s": " ", "d": "1", "w": "a", "S": "a", "D": "a", "W": " ", "n": "\n", "t": "\t", "r": "\r"}
_SYNTAX = frozenset("^$()*+?{}|[]")
_MOST_UNITS = 16


class _Matcher:
    """The child process and its pipe; started on first use, started again after a kill or in a forked child."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: Any = None
        self._conn: Connection | None = None
        self._current: Synchronized[int] | None = None
        self._pid = 0

    def _start(self) -> tuple[Connection, Synchronized[int]]:
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        current = ctx.Value("i", -1, lock=False)
        proc = ctx.Process(target=_serve, args=(child, current), daemon=True, name="benchcard-rules")
        proc.start()
        child.close()
        self._proc, self._conn, self._current, self._pid = proc, parent, current, os.getpid()
        return parent, current

    def _stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join()
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = self._current = None

    def test(self, literals: Sequence[str], text: str, limit: float) -> list[bool]:
        with self._lock:
            if self._conn is None or self._pid != os.getpid() or not self._proc.is_alive():
                if self._pid == os.getpid():
                    self._stop()
                conn, current = self._start()
            else:
                conn, current = self._conn, self._current  # type: ignore[assignment]
            try:
                conn.send((list(literals), text))
                if conn.poll(limit):
                    answer = conn.recv()
                    if isinstance(answer, list):
                        return answer
                    raise CardError(str(answer))  # the child could not compile a pattern
                index = current.value
            except BaseException:  # Ctrl-C while waiting, a dead child: never leave a match running
                self._stop()
                raise
            self._stop()
        literal = literals[index] if 0 <= index < len(literals) else "?"
        raise RuleTimeout(index, literal, limit)


def _serve(conn: Connection, current: Any) -> None:
    """The child: answer (literals, text) with each literal's `test(text)`, forever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it kills this process when it must
    # Forked, it shares every descriptor the parent had open: a run's locked outputs.jsonl, its sockets. Close all
    # but the pipe, so nothing stays open or locked on the parent's behalf for as long as this process lives.
    keep = conn.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)
    compiled = functools.lru_cache(maxsize=1024)(compile_js)
    while True:
        try:
            literals, text = conn.recv()
        except (EOFError, OSError):
            return
        results = []
        try:
            for i, literal in enumerate(literals):
                current.value = i
                results.append(compiled(literal).test(text))
        except ValueError as exc:
            conn.send(str(exc))
            continue
        conn.send(results)


_MATCHER = _Matcher()


def test_rules(rules: Sequence[tuple[str, str]], text: str, limit: float = RULE_TIME_LIMIT) -> list[bool]:
    """`compile_js(literal).test(text)` for each (rule id, literal), all within `limit` seconds; over it, a
    `RuleTimeout` naming the rule."""
    try:
        return _MATCHER.test([literal for _, literal in rules], text, limit)
    except RuleTimeout as exc:
        rule_id = rules[exc.index][0] if 0 <= exc.index < len(rules) else "?"
        raise RuleTimeout(exc.index, exc.literal, exc.limit, rule_id) from None


def _characters(literal: str) -> list[str]:
    """The characters a `/pattern/flags` literal's pattern matches as written, each once, in order: its literal
    characters, a stand-in for each class escape (`_CLASS_CHARS`) and for `.`."""
    body = literal[1:literal.rindex("/")] if literal.count("/") >= 2 else literal
    chars: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            after = body[i + 1]
            chars.append(_CLASS_CHARS.get(after, "" if after.isalnum() else after))
            i += 2
            continue
        chars.append("a" if c == "." else "" if c in _SYNTAX else c)
        i += 1
    return [c for c in dict.fromkeys(chars) if c]


def pumped(literal: str) -> list[str]:
    """The inputs `runaway` tries, shortest first: each of the pattern's characters (and all of them in order)
    repeated to each of `PUMP_LENGTHS`, then a character the pattern does not hold, so that the match fails at
    the end and a nested quantifier tries every way of splitting the run before it."""
    chars = _characters(literal)
    tail = next(t for t in ("!", "#", "~", "\x00") if t not in chars)
    units = [*chars[:_MOST_UNITS], "".join(chars)] if len(chars) > 1 else chars
    return [(unit * n)[:n] + tail for n in PUMP_LENGTHS for unit in dict.fromkeys(units)]


def runaway(literal: str, limit: float = PUMP_LIMIT) -> str | None:
    """The shortest of `pumped(literal)`'s inputs the rule takes longer than `limit` seconds on; None when it
    takes no time on any (a rule that backtracks catastrophically on a reply of its own characters is found
    here, before sealing, not by a run whose outputs it leaves unscored). Only the match is timed: the child is
    started and the pattern compiled first (`_warm`), and an input over the limit is tried once more in a child
    started again, so that a loaded machine's slow start or pause does not name a sane rule."""
    _warm(literal)
    for text in pumped(literal):
        if _over(literal, text, limit):
            _warm(literal)
            if _over(literal, text, limit):
                return text
    return None


def _warm(literal: str) -> None:
    """The matcher's child started (again, after a kill) and the rule compiled in it, outside any timed test."""
    _MATCHER.test([literal], "", RULE_TIME_LIMIT)


def _over(literal: str, text: str, limit: float) -> bool:
    """Whether the rule takes longer than `limit` seconds to test `text` (the child is then killed)."""
    try:
        _MATCHER.test([literal], text, limit)
    except RuleTimeout:
        return True
    return False
