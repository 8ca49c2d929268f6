"""A system error (a results/ folder that cannot be written, a full disk) is one line, never a traceback; the error
family is drawn in errors.py's docstring and defined there only."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import pytest

from benchcard import errors

from .helpers_cli import bc, one_line_error
from .helpers_run import KEY_ENV, ab_project


def test_a_results_folder_that_cannot_be_written_is_one_line(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run as root, whom a read-only mode does not stop: a file where results/ should be fails the same
    way (the run folder cannot be created) and must read the same."""
    monkeypatch.setenv(KEY_ENV, "sk-test-0000")
    project = ab_project(tmp_path, "http://127.0.0.1:9/v1")
    project.results_dir.write_text("not a folder\n", encoding="utf-8")
    line = one_line_error(bc(project.root, "run", "colour-ab", "--json"))
    assert "results" in line and "Not a directory" in line


def _drawn_parents() -> dict[str, str]:
    """The tree in errors.py's docstring, read back: each class drawn and the class it hangs under."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        drawn = re.match(r"^(\s*(?:[│├└]\s*|── )*)(_?[A-Z]\w*)", line)
        if not drawn or not line.startswith("    ") or ("──" not in line and drawn.group(2) != "Exception"):
            continue
        column, name = len(drawn.group(1)), drawn.group(2)
        while stack and stack[-1][0] >= column:
            stack.pop()
        if stack:
            parents[name] = stack[-1][1]
        stack.append((column, name))
    return parents


def test_the_docstring_draws_every_error_under_its_parent() -> None:
    classes = {name: cls for name, cls in vars(errors).items()
               if isinstance(cls, type) and issubclass(cls, BaseException) and cls.__module__ == errors.__name__}
    drawn = _drawn_parents()
    assert sorted(drawn) == sorted(classes)
    assert {name: drawn[name] for name, cls in classes.items() if drawn[name] not in
            {base.__name__ for base in cls.__bases__}} == {}


#: A library's exception, by its name (`httpx.HTTPError`, `click.ClickException`, `msgspec.ValidationError`).
THIRD_PARTY = r"(Error|Exception|Exit|Abort|Interrupt|Warning)$"


def test_every_exception_is_defined_in_errors_py() -> None:
    """No module but errors.py defines an exception class, so the family is the one drawn above (a subclass of a
    builtin exception, of one of errors.py's, of a library's, or of another class of its own module that is
    one)."""
    builtin = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    family = {n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, BaseException)}
    src = Path(errors.__file__).parent
    found = []
    for path in sorted(src.rglob("*.py")):
        if path == Path(errors.__file__):
            continue
        local: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {b.id if isinstance(b, ast.Name) else b.attr for b in node.bases
                     if isinstance(b, ast.Name | ast.Attribute)}
            if bases & (builtin | family | local) or any(re.search(THIRD_PARTY, b) for b in bases):
                local.add(node.name)
                found.append(f"{path.relative_to(src.parent)}: {node.name}({', '.join(sorted(bases))})")
    assert found == []


def test_a_control_flow_error_is_no_benchcard_error_and_a_user_facing_one_is() -> None:
    """The CLI's boundary catches BenchcardError: an internal signal must never pass it silently as a user's
    error, and the fake server's refusal of a config is one line like any other."""
    for internal in (errors.RetryableError, errors.CallError, errors.WorkerLost, errors.Fatal,
                     errors.UnreadableAnswer, errors.NotCanonicalError):
        assert not issubclass(internal, errors.BenchcardError)
    assert issubclass(errors.FakeServerError, errors.BenchcardError)
    assert issubclass(errors.RuleTimeout, errors.CardError)
    assert issubclass(errors.NotCanonicalError, ValueError) and issubclass(errors.UnreadableAnswer, ValueError)


def test_a_copy_or_a_move_the_system_refused_names_its_destination_first() -> None:
    """Hostile audit (hostile21, disk): `site --out` on a full disk said `error: <project>/results/…/outputs.jsonl:
    No space left on device`: a copy's error names its source first, and the line named the project's own run file
    (on a disk with room) as the one that was full. The destination is the file refused, the source beside it."""
    import errno

    copy = OSError(errno.ENOSPC, "No space left on device", "results/a/outputs.jsonl", None, "/mnt/full/outputs.jsonl")
    assert errors.one_line(copy) == "/mnt/full/outputs.jsonl: No space left on device (from results/a/outputs.jsonl)"
    one = OSError(errno.EROFS, "Read-only file system", "results/ledger.jsonl")
    assert errors.one_line(one) == "results/ledger.jsonl: Read-only file system"
