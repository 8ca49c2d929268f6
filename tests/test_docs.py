"""The docs a new user starts from: docs/cards.md's minimal cards run as they are, and nothing points outside
the repository."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from benchcard.card.load import load_card
from benchcard.cli import cli
from benchcard.errors import CardError
from benchcard.project import Project
from benchcard.testing.fakeserver import FakeServer

from .helpers_project import REPO, copy_project
from .helpers_run import write_config

CARDS_DOC = REPO / "docs" / "cards.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def from_the_doc(root: Path) -> list[str]:
    """Write every card the doc shows (a yaml block opening `# cards/<file>`) and run its file-making shell
    blocks (opening `# fixtures and keys of`) in `root`, exactly as a user pasting them would."""
    root.mkdir(parents=True, exist_ok=True)
    cards = []
    for lang, text in BLOCK.findall(CARDS_DOC.read_text(encoding="utf-8")):
        first = text.splitlines()[0]
        if lang == "yaml" and first.startswith("# cards/"):
            path = root / first[2:].strip()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            cards.append(path.stem)
        elif lang == "sh" and first.startswith("# fixtures and keys of"):
            subprocess.run(["bash", "-euc", text], cwd=root, check=True, timeout=30)
    return cards


def bc(root: Path, *args: str) -> Result:
    result = CliRunner().invoke(cli, ["-C", str(root), *args])
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result


def test_the_minimal_cards_check_seal_run_and_give_a_verdict(tmp_path: Path, server: FakeServer, key: str) -> None:
    root = tmp_path / "proj"
    assert from_the_doc(root) == ["hello-probe", "hello-ab", "hello-data"]
    assert sorted(p.name for p in (root / "keys" / "hello-ab").iterdir()) == [f"r{i}.json" for i in range(1, 5)]
    write_config(root, server.base_url)  # the fake server stands in for the local model: runs marked scratch
    server.configure({"default_reply": "positive"})
    assert "3 card(s) ok, 0 failed" in bc(root, "check").output

    # the loop before sealing: a scratch run of the unsealed card, and its verdict, outside the ledger
    ran = bc(root, "run", "hello-ab", "--scratch", "--provider", "fake", "--json")
    [s] = json.loads(ran.stdout)["runs"]
    assert s["finished"] and s["cells"] == 16 and s["rig"].endswith(" · scratch")
    assert "scratch: a trial verdict, not entered in the ledger" in bc(root, "verdict", s["run"]).output
    assert not (root / "keys" / "hello-ab" / "v1.seal.json").exists()

    for card in ("hello-probe", "hello-ab", "hello-data"):
        bc(root, "seal", card)
        [s] = json.loads(bc(root, "run", card, "--provider", "fake", "--json").stdout)["runs"]
        assert s["finished"]
        bc(root, "verdict", s["run"])
    for card in ("hello-ab", "hello-data"):  # fixtures and keys from files, then from one data file
        scores = [(s["fixture"], s["score"]) for s in map(json.loads, next(
            (root / "results" / card / "v1").glob("*/scores.jsonl")).read_text().splitlines())]
        # "positive" is right for r1 and r3 only: keys are read per fixture
        assert sorted(set(scores)) == [("r1", 1.0), ("r2", 0.0), ("r3", 1.0), ("r4", 0.0)]


def test_the_docs_need_nothing_outside_the_repository() -> None:
    """No page points to the project's planning notes, nor names a folder of the machine it was written on: a
    command run as written (docs/performance.md's `/work/floorvenv22` until 2026-12-07) works in any clone."""
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        assert "../shared" not in text, path
        assert re.findall(r"(?<![\w.~])/(?:work|root|home/\w+)/", text) == [], path


@pytest.mark.local_model
def test_the_minimal_probe_runs_on_the_embedded_model(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    from_the_doc(root)
    bc(root, "seal", "hello-probe")
    [s] = json.loads(bc(root, "run", "hello-probe", "--json").stdout)["runs"]
    assert s["finished"] and s["rig"] == "SmolLM2-135M-Instruct · local"
    assert "ledger: seq 1" in bc(root, "verdict", s["run"]).output


@pytest.mark.local_model
def test_the_api_pages_example_runs_as_written_in_a_new_project(tmp_path: Path) -> None:
    """docs/api.md's `py` block, pasted into Python beside a project `benchcard init my-project` made: it ran
    bench-01 on the embedded model until 2026-12-08 (hours, into the clone's published results and ledger)."""
    [block] = [text for lang, text in BLOCK.findall((REPO / "docs" / "api.md").read_text(encoding="utf-8"))
               if lang == "py"]
    made = CliRunner().invoke(cli, ["-C", str(tmp_path), "init", "my-project"])
    assert made.exit_code == 0, made.output
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert done.returncode == 0, done.stderr
    calls, judged = done.stdout.splitlines()
    assert calls == "18" and judged.endswith(" non-result")  # three fixtures can never win
    assert not (tmp_path / "my-project" / "results" / "ledger.jsonl").exists()  # a trial: nothing in the ledger


# ------------------------------------------------------------------ what the docs name, checked against the code

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
#: `benchcard [-C DIR] <command> …`, up to the end of the command line (a comment, `;`, `&&`, `|`, the next
#: `benchcard`).
COMMAND = re.compile(r"\bbenchcard(?:\s+(?:-C|--project)\s+\S+)?\s+([a-z][a-z-]*)((?:(?!benchcard\b)[^#;&|])*)")
FLAG = re.compile(r"(?<![\w/-])(--?[A-Za-z][\w-]*)")
LEADING = re.compile(r"^\s*(?:\$\s+)?(?:\w+=\S*\s+)*(?:\S*/)?benchcard\s")
BENCHMARK = re.compile(r"\bpython3?\s+(benchmarks/[\w/]+\.py)((?:(?!python)[^#;&|`])*)")


def code_of(text: str) -> list[str]:
    """What a reader would paste: each line of a fenced block, and each inline `code` span of the prose."""
    lines = [line for block in FENCE.findall(text) for line in block.splitlines()[1:-1]]
    return lines + FENCE.sub("", text).split("`")[1::2]


def snippets() -> list[tuple[str, str]]:
    return [(path.name, code) for path in DOCS for code in code_of(path.read_text(encoding="utf-8"))]


def options_of() -> dict[str, set[str]]:
    """Every command of the command line and the options it takes, as `benchcard CMD --help` lists them."""
    return {name: {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")} | {"--help"}
            for name, cmd in cli.commands.items()}


def test_every_command_and_flag_the_docs_show_exists() -> None:
    """`benchcard CMD --flag …` anywhere in the README or docs/ (a code block's line or an inline span), and an
    inline `CMD --flag` naming a command without the program: the command is one `benchcard --help` lists and
    each flag one its `--help` lists, so a renamed or removed option cannot stay in the docs."""
    options = options_of()
    root = {o for p in cli.params for o in p.opts} | {"--help", "--version"}
    wrong = []
    for doc, code in snippets():
        for command, rest in COMMAND.findall(code):
            if command not in options:  # a command line that starts with benchcard, not a sentence quoted
                if LEADING.match(code):
                    wrong.append(f"{doc}: `benchcard {command}` is no command: {code!r}")
                continue
            wrong += [f"{doc}: `benchcard {command}` has no {flag}: {code!r}"
                      for flag in FLAG.findall(rest) if flag not in options[command] | root]
        words = code.split()
        if words and words[0] in options and "benchcard" not in code:
            wrong += [f"{doc}: `{words[0]}` has no {flag}: {code!r}"
                      for flag in FLAG.findall(code) if flag.startswith("--") and flag not in options[words[0]]]
    assert wrong == []
    shown = {command for _, code in snippets() for command, _ in COMMAND.findall(code)}
    assert set(options) - shown == set()  # and every command is shown somewhere


def test_every_option_a_command_takes_is_named_on_a_page_that_shows_the_command() -> None:
    """The reverse of the test above: each long option `benchcard CMD --help` lists (and the program's own) is
    named on a page of the README or docs/ that shows CMD in its code, so that no option is found only by
    reading `--help` (`curl --variant`, `run --rpm` and `--poll-interval` were, until 2026-12-07)."""
    pages = [(path.read_text(encoding="utf-8"), code_of(path.read_text(encoding="utf-8"))) for path in DOCS]

    def named(option: str, command: str | None) -> bool:
        return any(re.search(rf"{re.escape(option)}(?![\w-])", text) and (command is None or any(
            re.search(rf"(?<![\w-]){re.escape(command)}(?![\w-])", code) for code in codes)) for text, codes in pages)

    unnamed = [f"benchcard {command} {option}" for command, options in sorted(options_of().items())
               for option in sorted(options) if option.startswith("--") and option != "--help"
               and not named(option, command)]
    unnamed += [f"benchcard {option}" for p in cli.params for option in p.opts
                if option.startswith("--") and not named(option, None)]
    assert unnamed == []


def test_every_benchmark_the_docs_run_exists_with_its_flags() -> None:
    """`python benchmarks/X.py --flag …` in the docs: the script is there and declares each flag."""
    wrong = []
    seen = 0
    for doc, code in snippets():
        for script, rest in BENCHMARK.findall(code):
            seen += 1
            path = REPO / script
            if not path.is_file():
                wrong.append(f"{doc}: no {script}")
                continue
            source = path.read_text(encoding="utf-8")
            wrong += [f"{doc}: {script} has no {flag}" for flag in FLAG.findall(rest)
                      if flag.startswith("--") and f'"{flag}"' not in source]
    assert wrong == [] and seen > 50


#: A path inside the repository as the docs write one: from its root (`tests/…`, `benchmarks/…`) or from the
#: package (`run/_calls.py`), optionally with a name in it (`run/store.RunStore`, `tests/x.py::test_y`).
REPO_PATH = re.compile(r"(?<![\w./<-])((?:[\w.-]+/)+[\w.-]*\w)(?:::(\w+))?")
PACKAGE = REPO / "src" / "benchcard"
FILE_SUFFIXES = (".py", ".md", ".yaml", ".json", ".jsonl", ".csv", ".txt", ".toml", ".html", ".css", ".js")


def defines(source: str, name: str) -> bool:
    return re.search(rf"^\s*(?:async def|def|class) {name}\b|^{name}\s*[:=]", source, re.M) is not None


def pointer_problem(written: str, test: str | None) -> str | None:
    """What is wrong with a path the docs write, or None: a folder or file that must exist, and the function,
    class or constant named after it (`module.name` or `file::test`) that must be defined there."""
    first = written.split("/")[0]
    if first in ("tests", "src", "benchmarks", "docs"):
        target = REPO / written
    elif (PACKAGE / first).is_dir() and not first.startswith("__"):
        target = PACKAGE / written
    else:
        return None
    names: list[str] = [test] if test else []
    if not target.exists() and "." in target.name and not target.name.endswith(FILE_SUFFIXES):
        module, *names = target.name.split(".")
        target = target.with_name(module + ".py")
    if not target.exists() and target.suffix != ".py" and target.with_name(target.name + ".py").exists():
        target = target.with_name(target.name + ".py")  # a module named without its suffix (`run/judging`)
    if not target.exists():
        return "no such file or folder"
    if names and not defines(target.read_text(encoding="utf-8"), names[0]):
        return f"{target.relative_to(REPO)} defines no {names[0]}"
    return None


def test_every_path_and_name_the_docs_point_to_exists() -> None:
    """Each repository path in an inline span of the README or docs/ (`tests/records/test_ledger.py`,
    `run/_calls.py`) exists, and the name it points to in a module or test file is defined there: a module
    moved, renamed or merged shows here, not to a reader who follows the pointer."""
    wrong = []
    for path in DOCS:
        for code in FENCE.sub("", path.read_text(encoding="utf-8")).split("`")[1::2]:
            for match in REPO_PATH.finditer(code):
                written, test = match.groups()
                if code[match.end():match.end() + 1] in ("*", "<"):  # a pattern (`tests/helpers_*.py`)
                    continue
                if problem := pointer_problem(written, test):
                    wrong.append(f"{path.name}: `{match.group(0)}`: {problem}")
    assert wrong == []


def test_every_module_is_on_the_architecture_map() -> None:
    """docs/architecture.md names every module of the package: by its path (`run/_calls.py`), by its file name
    on a line that names its folder (the `_cli/` row's `replicate.py`), or inside a subpackage named as a whole
    (`run/batch/`)."""
    lines = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines()
    missing = []
    for module in sorted(PACKAGE.rglob("*.py")):
        parts = module.relative_to(PACKAGE).parts
        if module.name in ("__init__.py", "__main__.py") or len(parts) == 1:
            continue
        folder = "/".join(parts[:-1])
        wholes = [f"`{'/'.join(parts[:i])}/`" for i in range(2, len(parts))]
        if not any(f"{folder}/{module.name}" in line or (f"`{folder}/" in line and f"`{module.name}`" in line)
                   or any(whole in line for whole in wholes) for line in lines):
            missing.append(f"{folder}/{module.name}")
    assert missing == []


def test_every_floor_in_pyproject_is_the_one_the_readme_says_was_checked() -> None:
    """Each `name>=X` of pyproject.toml's dependencies is in README's "The lower bounds, checked" as raised to it
    (`name `>=X``) or verified at it (`name X.0`): a floor moved without the check (`make floors`) shows here."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    checked = readme[readme.index("**The lower bounds, checked"):readme.index("## Docs")]
    floors = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    unsaid = []
    for floor in floors:
        name, version = floor.split(">=")
        said = rf"(?<![\w-]){re.escape(name)}\s+(?:`>={re.escape(version)}`|{re.escape(version)}(?:\.0)*(?![\w.]))"
        if not re.search(said, checked):
            unsaid.append(floor)
    assert unsaid == [] and len(floors) == 15


# ----------------------------------------------------------- the card fields: docs/cards.md and the reader agree

UNKNOWN = "zz_not_a_field"
REFUSED = re.compile(rf"field '(?:[\w.]+\.)?{UNKNOWN}': unknown (?:field|parameter)[^;]*; expected (?:one of )?(.+)$",
                     re.M)


def accepted(root: Path, card: str, where: tuple[str | int, ...], extra: dict[str, Any] | None = None) -> set[str]:
    """The fields the reader accepts at `where` in a card, as `benchcard check` names them to a user who wrote
    one it does not know (`field 'rig.x': unknown field; expected provider, model, effort or surface`)."""
    path = root / "cards" / f"{card}.yaml"
    original = path.read_text(encoding="utf-8")
    raw = {**yaml.safe_load(original), **copy.deepcopy(extra or {})}
    place: Any = raw
    for step in where:
        place = place[step]
    place[UNKNOWN] = 1
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    try:
        result = CliRunner().invoke(cli, ["-C", str(root), "check", "--no-rig", card])
    finally:
        path.write_text(original, encoding="utf-8")
    found = REFUSED.search(result.output)
    assert result.exit_code == 1 and found, (card, where, result.output)
    return set(re.split(r",\s*|\s+or\s+", found.group(1).strip()))


def row_of(doc: str, field: str) -> str:
    """The row of the Fields table of docs/cards.md whose first cell names `field`."""
    [row] = [line for line in doc.splitlines() if line.startswith("| ") and f"`{field}`" in line.split(" | ")[0]]
    return row


def spans_of(text: str) -> set[str]:
    return {name for span in text.split("`")[1::2] for name in re.findall(r"[A-Za-z_][\w]*", span)}


def test_every_card_field_the_reader_accepts_is_documented_and_no_other(tmp_path: Path) -> None:
    """docs/cards.md's Fields table names exactly the fields a card may have, and each field's row names every
    field the reader accepts inside it (and docs/judge.md a judge's): a field added to the reader and not to
    the table, or documented and refused, fails here."""
    root = copy_project(tmp_path / "proj")
    from_the_doc(root)
    doc = CARDS_DOC.read_text(encoding="utf-8")
    table = [line.split(" | ")[0] for line in doc[doc.index("## Fields"):].splitlines()[2:]
             if line.startswith("| ")]
    top = accepted(root, "one-word-sentiment", ())
    assert {name for cell in table for name in cell.split("`")[1::2]} == top
    gate: dict[str, Any] = {"gate": {"min_score": 0.5}, "sequential": {"looks": 1}, "repetitions": 2}
    Case = tuple[str, tuple[str | int, ...], dict[str, Any] | None]
    # a field's row: (card, where in it, what the card needs added for the reader to get there)
    inside: dict[str, list[Case]] = {
        "rig": [("hello-probe", ("rig",), None)],
        "params": [("hello-probe", ("params",), None)],
        "prompt": [("hello-probe", ("prompt",), None)],
        "scoring": [("one-word-sentiment", ("scoring",), None), ("demo-answer-cue", ("scoring",), None),
                    ("demo-answer-cue", ("scoring", "rules", 0), None),
                    ("bench-01", ("scoring",), None), ("hello-ab", ("scoring",), None)],
        "examples": [("hello-probe", ("examples", 0), None)],
        "history": [("hello-probe", ("history", 0), None)],
        "win": [("hello-ab", ("win",), None), ("hello-ab", ("win", "all", 0), None)],
        "gate": [("hello-probe", ("gate",), gate)],
        "sequential": [("hello-probe", ("sequential",), gate)],
    }
    undocumented = {f"{field}: {name}" for field, cases in inside.items() for card, where, extra in cases
                    for name in accepted(root, card, where, extra) - spans_of(row_of(doc, field))}
    data = doc[doc.index("## Fixtures from one data file"):doc.index("## Required fields")]
    long_form = {"fixtures": {"file": "fixtures/hello-data.jsonl"}}
    undocumented |= {f"fixtures (data file): {name}"
                     for name in accepted(root, "hello-data", ("fixtures",), long_form) - spans_of(data)}
    judge = spans_of((REPO / "docs" / "judge.md").read_text(encoding="utf-8"))
    undocumented |= {f"judge {where}: {name}" for where in [("scoring",), ("scoring", "rig"), ("scoring", "prompt"),
                                                            ("examples", 0)]
                     for name in accepted(root, "demo-judge-colour", where) - judge}
    assert not undocumented, sorted(undocumented)


def fragments(doc: Path) -> list[dict[str, Any]]:
    """The card fragments a doc's yaml blocks show (`gate: {min_score: 0.8}`, a `scoring:` block), each line
    of a block that writes one field twice (the short and the long form of `fixtures:`) taken apart."""
    out: list[dict[str, Any]] = []
    for block in re.findall(r"```yaml\n(.*?)```", doc.read_text(encoding="utf-8"), re.S):
        if block.startswith("# cards/") or block.startswith("# .github/"):
            continue
        tops = re.findall(r"^(\w+):", block, re.M)
        parts = block.splitlines(keepends=True) if len(tops) != len(set(tops)) else [block]
        out += [part for part in map(yaml.safe_load, parts) if isinstance(part, dict)]
    return out


def test_every_card_field_the_docs_show_is_accepted(tmp_path: Path) -> None:
    """The reverse: each card fragment in docs/*.md's yaml blocks, put on the minimal card of its kind (a judge's
    on the demo judge card), is refused for no field the reader does not know."""
    root = copy_project(tmp_path / "proj")
    from_the_doc(root)
    top = accepted(root, "hello-probe", ())
    shown = 0
    for doc in DOCS:
        for fragment in fragments(doc):
            if not set(fragment) <= top:
                continue  # benchcard.yaml's blocks, a compare rule file
            shown += 1
            judged = (fragment.get("scoring") or {}).get("method") == "judge"
            card = "demo-judge-colour" if judged else "hello-probe" if fragment.get("kind") == "probe" else "hello-ab"
            path = root / "cards" / f"{card}.yaml"
            original = path.read_text(encoding="utf-8")
            path.write_text(yaml.safe_dump({**yaml.safe_load(original), **fragment}, allow_unicode=True),
                            encoding="utf-8")
            try:  # the reader alone: what `check` says first of a card, without its design checks
                load_card(path, Project(root))
                problem = ""
            except CardError as error:
                problem = str(error)
            finally:
                path.write_text(original, encoding="utf-8")
            assert not re.search(r": unknown (field|parameter)", problem), (doc.name, fragment, problem)
    assert shown >= 7


def test_every_shipped_card_on_the_embedded_model_names_the_surface_it_runs_on() -> None:
    """The embedded model runs in a worker process since 2026-12-01 (README); a shipped card's rig line saying
    `in-process` (demo-judge-colour's, until 2026-12-07) would be printed on every run and page it made."""
    surfaces = {path.name: yaml.safe_load(path.read_text(encoding="utf-8"))["rig"].get("surface")
                for path in sorted((REPO / "cards").glob("*.yaml"))
                if yaml.safe_load(path.read_text(encoding="utf-8"))["rig"]["provider"] == "local"}
    assert surfaces == {"demo-answer-cue.yaml": "llama-cpp-python worker process",
                        "demo-judge-colour.yaml": "llama-cpp-python worker process"}


@pytest.mark.long
def test_the_table_of_what_a_design_can_show_is_what_the_rule_gives_now() -> None:
    """docs/cards.md's "No dead designs" table (fixtures × repetitions by variants) is `best_power` as it is: the
    table was drawn under an earlier rule (ce5a5dd) and eight of its 80 cells had moved by 0.01–0.03 (12 × 3 with
    3 variants read 0.24 beside `seal`'s own line, quoted above it, of 23%)."""
    from benchcard.stats.reach import best_power

    rows = re.findall(r"^\| (\d+) × (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$",
                      CARDS_DOC.read_text(encoding="utf-8"), re.M)
    assert len(rows) == 20
    shown = {(int(f), int(r)): tuple(cells) for f, r, *cells in rows}
    drawn = {(f, r): tuple(f"{best_power(f, r, v):.2f}" for v in (1, 2, 3, 5)) for f, r in shown}
    assert shown == drawn


def test_the_readme_names_every_card_the_repository_ships() -> None:
    """README's "The cards shipped here" names each `cards/<id>.yaml` (it said "the demo card" of two)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shipped = readme[readme.index("The cards shipped here"):].split("\n\n")[0]
    assert [path.stem for path in sorted((REPO / "cards").glob("*.yaml"))
            if f"`{path.stem}`" not in shipped] == []
