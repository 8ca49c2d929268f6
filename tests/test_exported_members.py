"""What `import benchcard` exports (`benchcard/__init__.py`): exactly the names docs/api.md lists, each the object
it names at run time, imported lazily, and seen by a user's type checker with its real type, not `Any`."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
from mypy import api as mypy_api

import benchcard

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api.md"
INIT = Path(benchcard.__file__)


def documented_exports() -> list[str]:
    """The backquoted names of docs/api.md's list of what `benchcard` exports."""
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("What `benchcard` exports")
    block = text[text.index("\n\n", start):text.index("`__version__`.", start) + len("`__version__`")]
    return sorted(re.findall(r"`(\w+)`", block))


def checked_imports() -> dict[str, str]:
    """Name -> module of the `if TYPE_CHECKING:` block of `benchcard/__init__.py`."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    [block] = [n for n in tree.body if isinstance(n, ast.If) and isinstance(n.test, ast.Name)
               and n.test.id == "TYPE_CHECKING"]
    return {alias.name: node.module or "" for node in block.body if isinstance(node, ast.ImportFrom)
            for alias in node.names}


def test_the_exported_members_are_what_the_docs_list() -> None:
    assert benchcard.__all__ == sorted(benchcard.__all__)
    assert benchcard.__all__ == documented_exports()
    assert dir(benchcard) == benchcard.__all__


def test_each_function_is_called_as_docs_api_md_writes_it() -> None:
    """A row of docs/api.md's table written whole (`give_verdict(run, project=None, *, allow_incomplete=False)`)
    is the function's signature, keyword-only marker and defaults included: it said `allow_incomplete=False` as a
    third positional parameter, which `give_verdict(run, None, True)` refused with a TypeError."""
    import inspect

    def written(function: object) -> str:
        parts, star = [], False
        for p in inspect.signature(function).parameters.values():  # type: ignore[arg-type]
            if p.kind is p.KEYWORD_ONLY and not star:
                parts.append("*")
                star = True
            parts.append(p.name if p.default is p.empty else f"{p.name}={p.default!r}")
        return ", ".join(parts)

    text = DOCS.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)\(([^`…]*)\)` →", text, re.M)
    assert len(rows) >= 6
    assert [f"{name}({args})" for name, args in rows] == [
        f"{name}({written(getattr(benchcard, name))})" for name, _ in rows]


def test_a_type_checker_imports_each_name_from_where_it_is_loaded_at_run_time() -> None:
    """The `TYPE_CHECKING` block and the lazy table name the same modules, and each name is defined there."""
    lazy = benchcard._LAZY
    assert checked_imports() == lazy
    assert sorted([*lazy, "__version__"]) == benchcard.__all__
    for name, module in lazy.items():
        value = getattr(benchcard, name)
        assert getattr(value, "__module__", module) in (module, "benchcard.api"), name


def _mypy(tmp_path: Path, code: str) -> list[str]:
    """`mypy --strict` on `code` as a user's file would be checked against this source tree; its lines about
    that file (benchcard's own modules and third-party libraries are followed silently, or skipped)."""
    (tmp_path / "user.py").write_text(code, encoding="utf-8")
    (tmp_path / "mypy.ini").write_text(
        "[mypy]\n"
        f"mypy_path = {INIT.parents[1]}\n"
        "strict = True\n"
        "follow_imports = silent\n"
        "[mypy-pandas.*,numpy.*,scipy.*,matplotlib.*,pyarrow.*,httpx.*,httpx_aiohttp.*,aiohttp.*,jinja2.*,rich.*,"
        "yaml.*,click.*,msgspec.*,filelock.*,jsonlines.*,regress.*,llama_cpp.*,inspect_ai.*]\n"
        "follow_imports = skip\n", encoding="utf-8")
    limit = sys.getrecursionlimit()
    try:
        out, err, _ = mypy_api.run(["--config-file", str(tmp_path / "mypy.ini"), "--cache-dir",
                                    str(tmp_path / "cache"), "--no-error-summary", "--show-error-codes",
                                    str(tmp_path / "user.py")])
    finally:  # mypy raises the limit for its own process; this worker's later tests expect Python's own
        sys.setrecursionlimit(limit)
    assert err == ""
    return [line.split(": ", 1)[1] for line in out.splitlines() if line.startswith(str(tmp_path / "user.py"))]


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """One mypy run over every case below (each line numbered as the case's index)."""
    lines = [f"reveal_type(benchcard.{name})" for name in benchcard.__all__]
    code = "\n".join(["import benchcard", *lines,
                      "benchcard.give_verdict(1, 2, 3, 4)",
                      "benchcard.run_card('bench-01', provder='local')",
                      "benchcard.nope", "v: benchcard.Verdict = benchcard.verdict_of('x')", ""])
    return _mypy(tmp_path_factory.mktemp("mypy"), code)


@pytest.mark.long  # its module fixture runs mypy
def test_a_type_checker_sees_every_exported_name_with_its_type(checked: list[str]) -> None:
    revealed = {line.split('"')[1] for line in checked if line.startswith("note: Revealed type is")}
    assert len([line for line in checked if line.startswith("note: Revealed type is")]) == len(benchcard.__all__)
    assert "Any" not in revealed
    assert ("def (run: str | os.PathLike[str], project: benchcard.project.Project | str | os.PathLike[str] | None =, "
            "*, allow_incomplete: bool =) -> benchcard.verdict.give.Verdict") in revealed


def test_a_wrong_call_is_a_type_error(checked: list[str]) -> None:
    """`benchcard.give_verdict(1, 2, 3, 4)` passed `mypy --strict` while the names were lazy and `Any`."""
    assert [line for line in checked if line.startswith("error:")] == [
        'error: Too many arguments for "give_verdict"  [call-arg]',
        'error: Too many positional arguments for "give_verdict"  [call-arg]',
        'error: Argument 1 to "give_verdict" has incompatible type "int"; expected "str | PathLike[str]"  [arg-type]',
        'error: Argument 2 to "give_verdict" has incompatible type "int"; expected "Project | str | PathLike[str] | '
        'None"  [arg-type]',
        'error: Argument 3 to "give_verdict" has incompatible type "int"; expected "bool"  [arg-type]',
        'error: Unexpected keyword argument "provder" for "run_card"; did you mean "provider"?  [call-arg]',
        'error: Module has no attribute "nope"  [attr-defined]',
    ]  # and nothing about the last line: `verdict_of` returns a `Verdict`


def test_the_statistics_a_user_imports_are_those_design_md_promises() -> None:
    """design.md: `benchcard.stats` exposes `paired_gap`, `noise_floor`, `tost` and `wilson` as plain functions;
    `from benchcard.stats import paired_gap` failed (they lived in its modules, and no `tost` took arrays). The
    line docs/api.md gives a user is those names, the stage's `__all__` holds them beside its modules, a type
    checker is shown each where it is loaded from, and docs/statistics.md's heading of each is its signature."""
    import importlib
    import inspect

    import benchcard.stats as stats

    [line] = re.findall(r"`from benchcard\.stats import ([\w, ]+)`", DOCS.read_text(encoding="utf-8"))
    given = sorted(name.strip() for name in line.split(","))
    assert given == ["noise_floor", "paired_gap", "tost", "wilson"]
    init = Path(stats.__file__)
    modules = {p.stem for p in init.parent.glob("*.py")}
    assert sorted(n for n in stats.__all__ if n not in modules) == given == sorted(stats._LAZY)
    tree = ast.parse(init.read_text(encoding="utf-8"))
    [block] = [n for n in tree.body if isinstance(n, ast.If) and isinstance(n.test, ast.Name)
               and n.test.id == "TYPE_CHECKING"]
    assert {a.name: n.module for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names} == stats._LAZY
    page = (DOCS.parent / "statistics.md").read_text(encoding="utf-8")
    for name in given:
        function = getattr(stats, name)
        assert function is getattr(importlib.import_module(stats._LAZY[name]), name)
        positional = ", ".join(p.name if p.default is p.empty else f"{p.name}={p.default!r}"
                               for p in inspect.signature(function).parameters.values() if p.kind is not p.KEYWORD_ONLY)
        assert re.search(rf"^### `{name}\({re.escape(positional)}[,)]", page, re.M), (name, positional)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        stats.nope  # type: ignore[attr-defined]  # noqa: B018  (mypy too: the names are typed, not Any)
