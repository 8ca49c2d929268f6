"""The package's shape: stages import only downwards, no import cycle (deferred and TYPE_CHECKING imports
included), functions kept small (not files), only the CLI imports click, and tests mirror the modules."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "benchcard"

# Lower ranks never import higher ones; a stage may import its own rank and below.
RANKS: list[tuple[str, int]] = [
    ("benchcard._util", 0),
    ("benchcard.errors", 0),
    ("benchcard.stats", 0),
    ("benchcard.project", 1),
    ("benchcard.records", 1),
    ("benchcard.testing", 1),
    ("benchcard.scoring", 2),
    ("benchcard.card", 3),
    ("benchcard.run", 4),
    ("benchcard.grading", 4),
    ("benchcard.verdict", 5),
    ("benchcard.planning", 6),
    ("benchcard.compare", 6),
    ("benchcard.publish", 7),
    ("benchcard.api", 8),
    ("benchcard.fakeserver", 8),
    ("benchcard.cli", 9),
    ("benchcard._cli", 9),
    ("benchcard", 9),
]


def rank(module: str) -> int:
    for prefix, value in RANKS:
        if module == prefix or module.startswith(prefix + "."):
            return value
    raise AssertionError(f"{module}: no layer declared for it in tests/test_architecture.py")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in PKG.rglob("*.py")}


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once per test process: the source does not change while the tests run, and
    the checks below read every module many times over (once per stage, per check)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def imports_of(path: Path, modules: dict[str, Path]) -> set[str]:
    """Every benchcard module `path` imports, wherever the import stands (top, function, TYPE_CHECKING)."""
    me = module_name(path)
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("benchcard"):
                    found.add(_longest(alias.name, modules))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = me.split(".") if is_pkg else me.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if not target.startswith("benchcard"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else _longest(target, modules))
    found.discard(me)
    return found


def _longest(name: str, modules: dict[str, Path]) -> str:
    parts = name.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts)


def graph() -> dict[str, set[str]]:
    """Every benchcard module and the benchcard modules it imports (a copy: the tests below may keep it)."""
    return {m: set(targets) for m, targets in _graph().items()}


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    """Parsed once per test process: the source does not change while the tests run, and a dozen tests read it."""
    modules = all_modules()
    return {m: frozenset(imports_of(p, modules)) for m, p in modules.items()}


def test_no_upward_import() -> None:
    upward = [
        f"{m} (layer {rank(m)}) imports {t} (layer {rank(t)})"
        for m, targets in graph().items()
        for t in targets
        if rank(t) > rank(m) and not m.startswith(t + ".")
    ]
    assert upward == []


def test_no_import_cycle() -> None:
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert cycles == []


# Functions are kept small, not files: ruff's complexity (C901, at most 10 branches) and statement count
# (PLR0915, at most 50), as pyproject.toml selects them for `ruff check`, and at most 80 lines. TO_BREAK_UP held the
# functions that were over a limit when the module cap was dropped (issue 26.4); all are broken up now, and it may
# only stay empty (an entry within limits fails).
LIMITS = ("C901", "PLR0915")
MAX_FUNCTION_LINES = 80
TO_BREAK_UP: frozenset[str] = frozenset()


def ruff_limits() -> list[str]:
    """pyproject.toml's limits as ruff options: the same numbers `ruff check` holds the package to."""
    lint = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert set(LIMITS) <= set(lint["select"]), "pyproject.toml's ruff selects the function limits"
    return ["--config", f"lint.mccabe.max-complexity = {lint['mccabe']['max-complexity']}",
            "--config", f"lint.pylint.max-statements = {lint['pylint']['max-statements']}"]


def over_limits() -> set[str]:
    """Every function over a limit, as 'path under src/benchcard:function': ruff run on the package alone, with no
    per-file ignore and no `noqa` honoured, so that nothing hides a function from the limits."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", *ruff_limits(), "--select",
                          ",".join(LIMITS), "--ignore-noqa", "--output-format", "json", "--exit-zero", str(PKG)],
                         capture_output=True, text=True, check=True).stdout
    found = set()
    for item in json.loads(out):
        name = item["message"].split("`")[1] if "`" in item["message"] else _function_at(item)
        found.add(f"{Path(item['filename']).resolve().relative_to(PKG).as_posix()}:{name}")
    for path in PKG.rglob("*.py"):
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                    (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_FUNCTION_LINES:
                found.add(f"{path.relative_to(PKG).as_posix()}:{node.name}")
    return found


def _function_at(item: dict[str, object]) -> str:
    """The function a ruff finding without a name in its message (PLR0915) stands in, from its line."""
    path = Path(str(item["filename"]))
    row = item["location"]["row"]  # type: ignore[index]
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno == row:
            return node.name
    return f"line {row}"


def test_functions_stay_small() -> None:
    found = over_limits()
    assert sorted(found - TO_BREAK_UP) == [], "new functions over a limit: split them by what they do"
    assert sorted(TO_BREAK_UP - found) == [], "now within the limits: take them off TO_BREAK_UP"


def test_only_the_cli_imports_click() -> None:
    """click is the command line's alone: only modules of `benchcard._cli` import it (`cli.py` is its door)."""
    users = sorted(
        module_name(p)
        for p in PKG.rglob("*.py")
        if any(
            (isinstance(n, ast.Import) and any(a.name == "click" for a in n.names))
            or (isinstance(n, ast.ImportFrom) and n.module == "click")
            for n in ast.walk(parsed(p))
        )
    )
    assert users and [u for u in users if not u.startswith("benchcard._cli.")] == []


@pytest.mark.parametrize("package", ["card", "scoring", "grading", "run", "verdict", "publish", "testing", "_util",
                                     "records", "stats", "planning", "compare", "_cli"])
def test_each_stage_says_what_it_owns(package: str) -> None:
    doc = ast.get_docstring(ast.parse((PKG / package / "__init__.py").read_text(encoding="utf-8")))
    assert doc and len(doc) > 40


def test_the_statistics_import_nothing_of_benchcards() -> None:
    """`stats/` is pure: numpy and scipy over arrays, so every figure can be checked on its own."""
    edges = graph()
    outside = sorted(f"{m} imports {t}" for m, targets in edges.items() if m.startswith("benchcard.stats")
                     for t in targets if not t.startswith("benchcard.stats"))
    assert outside == []


def test_the_top_level_is_only_the_door() -> None:
    """Top-level modules are the package's door; everything else lives in a stage package."""
    door = {"__init__", "__main__", "api", "cli", "errors", "project"}
    assert sorted(p.stem for p in PKG.glob("*.py") if p.stem not in door) == []


def test_the_checker_sees_a_cycle_and_an_upward_import(tmp_path: Path) -> None:
    """The checks above must be able to fail: a planted cycle and upward import are found."""
    pkg = tmp_path / "benchcard"
    (pkg / "card").mkdir(parents=True)
    (pkg / "run").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "card" / "__init__.py").write_text("")
    (pkg / "run" / "__init__.py").write_text("")
    (pkg / "card" / "a.py").write_text("def f():\n    from benchcard.run import b\n")
    (pkg / "run" / "b.py").write_text("from benchcard.card.a import f\n")
    modules = {
        "benchcard.card.a": pkg / "card" / "a.py",
        "benchcard.run.b": pkg / "run" / "b.py",
        "benchcard.card": pkg / "card" / "__init__.py",
        "benchcard.run": pkg / "run" / "__init__.py",
    }
    global SRC
    saved = SRC
    SRC = tmp_path
    try:
        a = imports_of(pkg / "card" / "a.py", modules)
        b = imports_of(pkg / "run" / "b.py", modules)
    finally:
        SRC = saved
    assert a == {"benchcard.run.b"} and b == {"benchcard.card.a"}
    assert rank("benchcard.run.b") > rank("benchcard.card.a")


TESTS = SRC.parent / "tests"

# Modules with no logic of their own, and why; every other module has tests/<its path>/test_<its name>.py.
NO_LOGIC: dict[str, str] = {
    "benchcard.__main__": "runs the CLI's main; tests/test_main.py runs `python -m benchcard`",
    "benchcard.cli": "the door of `benchcard._cli` (the script's `benchcard.cli:main`, the tests' `cli`); "
                     "tests/_cli/test_main.py drives it",
    "benchcard.fakeserver.__main__": "the documented `python -m benchcard.fakeserver` entry point, one call",
    "benchcard.testing.fakeserver.__main__": "one call into fakeserver._app; tests/testing/fakeserver run it",
    "benchcard._util.version": "the version string",
    "benchcard.testing.cards": "one card template (COLOUR_AB), no code; the runs in tests/run and benchmarks/ use it",
}

# Every stage is checked, the top level ("") and each subpackage, so a new stage cannot slip past.
MIRRORED_STAGES: tuple[str, ...] = ("", *sorted(d.name for d in PKG.iterdir() if (d / "__init__.py").is_file()))


def mirror_of(path: Path, pkg: Path = PKG, tests: Path = TESTS) -> Path:
    """tests/<package path>/test_<module>.py for src/benchcard/<package path>/<module>.py."""
    rel = path.relative_to(pkg)
    return tests.joinpath(*rel.parts[:-1], f"test_{rel.stem.lstrip('_')}.py")  # _x.py, a private module: test_x.py


def unmirrored(stages: tuple[str, ...], pkg: Path = PKG, tests: Path = TESTS) -> list[str]:
    missing = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg)
        name = ".".join(["benchcard", *rel.with_suffix("").parts])
        stage = rel.parts[0] if len(rel.parts) > 1 else ""
        if path.name == "__init__.py" or name in NO_LOGIC or stage not in stages:
            continue
        mirror = mirror_of(path, pkg, tests)
        if not mirror.exists():
            missing.append(f"{name}: no {mirror.relative_to(tests.parent)}")
    return missing


def test_each_module_with_logic_has_its_own_test_module() -> None:
    assert {"", "card", "run", "verdict", "publish"} <= set(MIRRORED_STAGES)
    assert unmirrored(MIRRORED_STAGES) == []


def test_a_test_module_does_not_import_another_test_module() -> None:
    """Shared fixtures and builders live in tests/helpers_*.py or a conftest.py, never in a test module, so
    that moving or deleting one module's tests cannot break another's."""
    offenders = []
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[-1].startswith("test_"):
                offenders.append(f"{path.relative_to(TESTS)}: from {'.' * node.level}{node.module}")
    assert offenders == []


def test_the_mirror_check_names_a_module_without_tests(tmp_path: Path) -> None:
    """The check above can fail: a planted module without its test module is named, one with it is not."""
    pkg, tests = tmp_path / "src" / "benchcard", tmp_path / "tests"
    for rel in ("__init__.py", "ledger.py", "run/__init__.py", "run/providers/openai.py", "run/grid.py"):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text("def f() -> None: ...\n")
    (tests / "run").mkdir(parents=True)
    (tests / "run" / "test_grid.py").write_text("")
    assert unmirrored(("", "run"), pkg, tests) == [
        "benchcard.ledger: no tests/test_ledger.py",
        "benchcard.run.providers.openai: no tests/run/providers/test_openai.py",
    ]
    assert unmirrored(("card",), pkg, tests) == []


def test_mypy_checks_the_tests_and_benchmarks_too_relaxed_only_for_unannotated_tests() -> None:
    """`make lint` runs `mypy` with pyproject.toml's settings: strict over the package and the benchmarks; the
    tests too, where only the rules asking every function for annotations are relaxed (pytest calls them)."""
    config = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["files"] == ["src/benchcard", "tests", "benchmarks"] and config["strict"] is True
    [tests] = [o for o in config["overrides"] if "tests.*" in o["module"]]
    assert tests == {"module": ["tests.*"], "disallow_untyped_defs": False, "disallow_incomplete_defs": False,
                     "disallow_untyped_calls": False}
    assert "\t$(BIN)/mypy\n" in (SRC.parent / "Makefile").read_text(encoding="utf-8")


STAGES = ("card", "scoring", "grading", "run", "verdict", "publish", "records", "stats", "planning", "compare",
          "testing")


def surface(package: str) -> list[str]:
    """A stage's `__all__`: its modules (or, for `compare`, names) that other stages, the door and users import."""
    for node in ast.parse((PKG / package / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value: list[str] = ast.literal_eval(node.value)
            return value
    return []


def reached_from_outside(package: str) -> set[str]:
    """The modules of a stage imported by another stage, the door or a benchmark, by their name in the stage."""
    modules, prefix = all_modules(), f"benchcard.{package}."
    importers = dict(graph())
    for script in sorted((SRC.parent / "benchmarks").glob("*.py")):
        importers[script.name] = {_longest(f"{module}.{name}", modules) for module, name in from_imports(script)
                                  if module.startswith("benchcard")}
    return {t[len(prefix):].split(".")[0] for m, targets in importers.items()
            if not m.startswith(prefix) and m != prefix[:-1]
            for t in targets if t.startswith(prefix)}


def names_imported_from_outside(package: str) -> set[str]:
    """The names imported from a stage's package itself (`from benchcard.compare import compare`) by another stage,
    the door or a benchmark: a surface of names (`compare`) is reached this way, not through its modules."""
    stage = f"benchcard.{package}"
    files = [p for p in PKG.rglob("*.py") if not module_name(p).startswith(stage)]
    files += sorted((SRC.parent / "benchmarks").glob("*.py"))
    return {name for f in files for module, name in from_imports(f) if module == stage}


def names_given_to_users(package: str) -> set[str]:
    """The names docs/api.md tells a user to import from a stage itself (`from benchcard.stats import tost`): a
    user's import is one from outside the stage too (design.md promises `benchcard.stats`' functions)."""
    text = (SRC.parent / "docs" / "api.md").read_text(encoding="utf-8")
    return {name.strip() for names in re.findall(rf"`from benchcard\.{package} import ([\w, ]+)`", text)
            for name in names.split(",")}


@functools.cache
def from_imports(path: Path) -> tuple[tuple[str, str], ...]:
    """Each `from <module> import <name>` in a file, as (module, name), gathered once: every stage's check reads
    every file's."""
    return tuple((n.module or "", a.name) for n in ast.walk(parsed(path)) if isinstance(n, ast.ImportFrom)
                 for a in n.names)


@pytest.mark.parametrize("package", STAGES)
def test_each_stage_lists_what_is_imported_from_outside_it(package: str) -> None:
    """The stage's `__all__` names every module that anything outside it imports, and nothing else: a module not
    listed is the stage's own, and a module listed is imported from outside (else it is the stage's own too, named
    `_x.py`). Each entry is a module or subpackage of the stage, or a name its `__init__` binds. A name docs/api.md
    gives a user to import from the stage is imported from outside it."""
    listed = surface(package)
    reached = reached_from_outside(package) | names_imported_from_outside(package) | names_given_to_users(package)
    unlisted = sorted(reached - set(listed))
    assert unlisted == [], f"imported from outside the stage: list them in benchcard/{package}/__init__.py's __all__"
    unused = sorted(set(listed) - reached)
    assert unused == [], f"listed in benchcard/{package}/__init__.py's __all__ but imported only inside the stage"
    assert listed == sorted(listed)
    init = (PKG / package / "__init__.py").read_text(encoding="utf-8")
    missing = [name for name in listed if not (PKG / package / f"{name}.py").is_file()
               and not (PKG / package / name / "__init__.py").is_file() and f"import {name}" not in init
               and f", {name}" not in init]
    assert missing == [], f"listed in benchcard/{package}/__init__.py's __all__ but not in the stage"


def test_a_private_module_is_imported_only_inside_its_package() -> None:
    """`_x.py` is its package's own: nothing outside the package imports it (its tests do). (`_util/` is the
    package's shared helpers, for every stage.)"""
    outside = sorted(f"{m} imports {t}" for m, targets in graph().items() for t in targets
                     if t.split(".")[-1].startswith("_") and t != "benchcard._util"
                     and not m.startswith(t.rsplit(".", 1)[0] + ".") and m != t.rsplit(".", 1)[0])
    assert outside == []


def surface_of(package: Path) -> list[str]:
    """A package's `__all__` as written in its `__init__.py` (none: an empty list)."""
    for node in ast.parse((package / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value: list[str] = ast.literal_eval(node.value)
            return value
    return []


def unlisted_plain_names(pkg: Path = PKG) -> list[str]:
    """Modules and subpackages of every package below the top level that its `__all__` does not list and whose name
    has no `_`. A package named `_x` (`_util/`, `_cli/`) is private as a whole and keeps plain names inside it."""
    found = []
    for init in sorted(pkg.rglob("__init__.py")):
        package = init.parent
        rel = package.relative_to(pkg)
        if package == pkg or any(part.startswith("_") for part in rel.parts):
            continue
        listed = set(surface_of(package))
        for child in sorted(package.iterdir()):
            name = child.stem if child.suffix == ".py" else child.name
            is_module = child.suffix == ".py" or (child / "__init__.py").is_file()
            if is_module and not name.startswith("_") and name not in listed:
                found.append(f"{rel.as_posix()}/{child.name}")
    return found


def test_a_module_its_package_does_not_list_is_named_private() -> None:
    """Each package's own modules read as such: what its `__all__` does not list is named `_x.py` (its tests keep
    `test_x.py`), so the surface of a stage is its `__all__` and the rest is visibly its own."""
    assert unlisted_plain_names() == [], "name them _x.py, or list them in the package's __all__"


def test_the_private_name_check_names_a_plain_unlisted_module(tmp_path: Path) -> None:
    """The check above can fail: an unlisted plain module is named; a listed one, a `_x.py` and a `_util/`'s are not."""
    pkg = tmp_path / "benchcard"
    for rel in ("__init__.py", "api.py", "run/__init__.py", "run/grid.py", "run/calls.py", "run/_pool.py",
                "_util/__init__.py", "_util/files.py"):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text("")
    (pkg / "run" / "__init__.py").write_text('__all__ = ["grid"]\n')
    assert unlisted_plain_names(pkg) == ["run/calls.py"]


# What verdict/ and publish/ import from run/, and why: they read a run's files through records/ (issue 26.1), and
# these are computing or orchestration, not reading. docs/architecture.md ("Layers") says the same.
FROM_RUN: dict[str, str] = {
    "benchcard.run.grid": "the verdict re-derives the assignment from the card and the seed with the code that drew "
                          "it (integrity.check_sealed, give), to check the one the run recorded",
    "benchcard.run.griddraws": "the same grid's per-block draws made as arrays for that check (give, columns)",
    "benchcard.run.replicate": "`benchcard replicate`'s core (verdict/replicate) runs the replication, then judges it",
    "benchcard.run.options": "the options verdict/replicate and verdict/gate.run_gated pass to the runs they make",
    "benchcard.run.summary": "what the runs verdict/replicate and verdict/gate.run_gated made did, returned with "
                             "their verdicts",
    "benchcard.run.runner": "`benchcard run`'s core (verdict/gate.run_gated) runs the card, then gates the runs",
    "benchcard.run.curl": "a card's page shows the exact request the run stage sends, built by the code that sends it",
}


def test_verdict_and_publish_import_from_run_only_what_is_named() -> None:
    """A module of run/ that verdict/ or publish/ newly imports fails here, and so does an entry no longer used."""
    found = sorted({t for m, targets in graph().items() if m.startswith(("benchcard.verdict.", "benchcard.publish."))
                    for t in targets if t == "benchcard.run" or t.startswith("benchcard.run.")})
    assert found == sorted(FROM_RUN), "read a run's files through records/; name any other need in FROM_RUN"


# What the repository's root holds, each with why: a file a hand-run leaves there (a blind sheet, a scratch
# export) fails the suite before it is committed, and after, in CI.
ROOT_FILES = {
    ".gitattributes": "line endings of the byte-exact fixtures and keys",
    ".gitignore": "what a run, a build or the demo leaves locally",
    "Makefile": "make demo, make test, make lint",
    "README.md": "what benchcard is and how to use it",
    "pyproject.toml": "the package, its dependencies, ruff, mypy and pytest settings",
}
ROOT_FOLDERS = {
    ".ci": "the CI workflow",
    "benchmarks": "timed runs whose figures docs/ quotes",
    "cards": "the repository's own cards",
    "docs": "the documentation",
    "fixtures": "the cards' fixtures",
    "keys": "the cards' answer keys and seals",
    "results": "the ledger and the runs it points to",
    "src": "the package",
    "tests": "the suite",
}


def strays_at_root(repo: Path) -> list[str]:
    """Every file at the root that git tracks or would offer to add (ignored ones excluded) and that is not in
    ROOT_FILES, and every top folder not in ROOT_FOLDERS."""
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.split("\0")
    strays = set()
    for path in filter(None, listed):
        top, _, rest = path.partition("/")
        known = ROOT_FOLDERS if rest else ROOT_FILES
        if top not in known:
            strays.add(top + ("/" if rest else ""))
    return sorted(strays)


def test_the_repository_root_holds_only_what_is_listed() -> None:
    """A blind sheet a hand-run of blind-sheet left at the root was committed once (1f9c69e); a file or folder
    the lists above do not name fails here, named."""
    assert strays_at_root(SRC.parent) == []


def test_the_root_check_names_a_stray_file_and_folder(tmp_path: Path) -> None:
    """The check above can fail: a planted sheet and an unknown folder are named; an ignored file is not."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)
    for name in (*ROOT_FILES, "src/benchcard/__init__.py", "blind-x-human.csv", "scratch/out.csv", "a.tmp"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("*.tmp\n" if name == ".gitignore" else "")
    assert strays_at_root(tmp_path) == ["blind-x-human.csv", "scratch/"]
