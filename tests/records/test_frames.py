"""`benchcard.read_run`, `benchcard.read_ledger` and `benchcard export`: one row per cell, blinded until the
verdict, the verdict's gap reproduced from the frame by the example of docs/api.md."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner, Result

import benchcard
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.testing.fakeserver import FakeServer
from benchcard.verdict.give import give_verdict

from ..helpers_run import ab_project, read_jsonl, write_config
from ..helpers_verdict import AB_CARD, BASE_A, STRONG_BASE, STRONG_VAR, ab_metrics, make_project, make_run, the_card

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """The verdict's tests' sealed ab project (tests/verdict/conftest.py): a frame unblinds only after a verdict."""
    return make_project(tmp_path / "proj")


def bc(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def test_a_judged_run_has_one_unblinded_row_per_cell(project: Project) -> None:
    status = {("A", "ex-02", 0): "failed", ("baseline", "ex-04", 1): "truncated"}
    run_dir = make_run(project, the_card(project), ab_metrics(), status=status)
    give_verdict(project, run_dir, allow_incomplete=True)
    frame = benchcard.read_run(run_dir)
    assert len(frame) == 36 and frame["cell"].is_unique
    assert list(frame.columns[:7]) == ["run", "cell", "variant", "fixture", "repetition", "status", "score"]
    assert {"field_recall", "unsupported_values", "abstains", "input_tokens", "output_tokens", "reasoning_tokens",
            "cost", "latency_ms", "attempts", "finish_reason", "model", "provider"} <= set(frame.columns)
    assert frame.attrs["blinded"] is False
    base = frame[(frame.variant == "baseline") & (frame.fixture == "ex-01")].sort_values("repetition")
    assert base["field_recall"].tolist() == BASE_A[0] and base["repetition"].tolist() == [0, 1, 2]
    failed = frame[(frame.variant == "A") & (frame.fixture == "ex-02") & (frame.repetition == 0)].iloc[0]
    assert failed["status"] == "failed" and np.isnan(failed["score"]) and np.isnan(failed["field_recall"])
    assert pd.isna(failed["cost"]) and pd.isna(failed["finish_reason"])
    truncated = frame[frame.status == "truncated"].iloc[0]
    assert (truncated["variant"], truncated["fixture"], truncated["finish_reason"]) == ("baseline", "ex-04", "length")
    assert np.isnan(truncated["field_recall"]) and truncated["output_tokens"] == 30
    assert set(frame["model"]) == {"test/model-1"} and frame["status"].value_counts()["ok"] == 34


def test_an_unjudged_run_is_read_blind(project: Project, tmp_path: Path) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    frame = benchcard.read_run(run_dir)
    assert frame.attrs["blinded"] is True
    assert "variant" not in frame.columns and "repetition" not in frame.columns
    assert len(frame) == 36 and frame["field_recall"].notna().all()
    export = bc(project, "export", run_dir.name)
    assert export.exit_code == 0, export.output
    assert ("(blinded: no verdict yet, so no variant or repetition, and none of the request's figures: input "
            "tokens, cached or not, cost, latency, attempts)") in export.stdout
    assert frame.attrs["withheld"] == ["variant", "repetition", "input_tokens", "cached_input_tokens",
                                       "cache_write_tokens", "cache_write_1h_tokens", "cost", "latency_ms", "attempts"]
    assert not set(frame.attrs["withheld"]) & set(frame.columns)
    as_json = bc(project, "export", run_dir.name, "--out", str(tmp_path / "cells.csv"), "--json")  # for a script
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == {"path": str(tmp_path / "cells.csv"), "format": "csv", "rows": 36,
                                          "blinded": True, "scratch": False, "finished": True, "planned": 36}
    assert len(pd.read_csv(tmp_path / "cells.csv")) == 36


def test_a_run_not_finished_is_exported_with_what_it_holds_and_said_so(project: Project, tmp_path: Path) -> None:
    """Hostile audit (hostile23b): `export` while the run was still calling wrote the 4 cells that had an output
    of 18 and said 'wrote 4 cells', a table another tool would take for the run; it now says the run is not
    finished and how many cells its plan holds (in `--json` too)."""
    run_dir = make_run(project, the_card(project), ab_metrics(), finished=False, drop_outputs=30)
    out = tmp_path / "partial.csv"
    export = bc(project, "export", run_dir.name, "--out", str(out))
    assert export.exit_code == 0, export.output
    assert export.stdout.strip().endswith(
        f" · run {run_dir.name} is not finished (still running, or stopped: `benchcard status {run_dir.name}`): a "
        "table of the cells of 36 planned that had an output then")
    assert export.stdout.startswith(f"wrote 6 cells → {out}") and len(pd.read_csv(out)) == 6
    as_json = bc(project, "export", run_dir.name, "--out", str(tmp_path / "again.csv"), "--json")
    assert json.loads(as_json.stdout)["finished"] is False and json.loads(as_json.stdout)["planned"] == 36


def test_a_run_id_or_card_id_is_found_in_the_project(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    give_verdict(project, run_dir)
    by_id = benchcard.read_run(run_dir.name, project)
    monkeypatch.chdir(project.root / "cards")  # the nearest project, from inside it
    by_card = benchcard.read_run("extract-ab")
    pd.testing.assert_frame_equal(by_id, by_card)
    with pytest.raises(benchcard.errors.RunError, match="no-such-run: no such run under results/"):
        benchcard.read_run("no-such-run", project)


def test_the_api_example_reproduces_the_verdict(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())  # Case A of docs/statistics.md
    verdict = give_verdict(project, run_dir).to_json()
    text = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    [code] = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    code = re.sub(r'run = "[^"]*"', f"run = {project.relative(run_dir)!r}", code)
    monkeypatch.chdir(project.root)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/api.md", "exec"), {})  # the documented example, as a user runs it
    printed = out.getvalue()
    m = verdict["metrics"]["field_recall"]
    assert m["run_var"] > 0  # the run term: the arms' run-to-run spread, which the paired t leaves out
    assert f"gap {m['gap']:+.6f}   verdict {m['gap']:+.6f}" in printed
    # ... and the verdict's p and interval, calibrated to the worst case over the variance components
    assert f"p   0.001457    verdict {m['p']:.6f}" in printed and m["p"] > 0.001457
    assert "CI  [0.065951, 0.156272]" in printed and m["ci"][0] < 0.065951 < 0.156272 < m["ci"][1]
    assert "gap +0.111111" in printed  # the page's words, not only self-agreement


def test_read_ledger(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    card = the_card(project)
    for metrics in (ab_metrics(STRONG_VAR, STRONG_BASE), ab_metrics(STRONG_BASE, STRONG_VAR)):
        give_verdict(project, make_run(project, card, metrics))
    frame = benchcard.read_ledger(project)
    assert frame["seq"].tolist() == [1, 2] and frame["finding"].tolist() == ["inconclusive", "win"]
    assert str(frame["at"].dtype) == "datetime64[ns, UTC]" or str(frame["at"].dtype).endswith(", UTC]")
    assert frame["metrics"][1]["field_recall"]["gap"] == pytest.approx(1 / 3)
    monkeypatch.chdir(project.root)
    pd.testing.assert_frame_equal(benchcard.read_ledger(), frame)
    pd.testing.assert_frame_equal(benchcard.read_ledger(project.ledger_path), frame)


def test_a_ledger_row_edited_to_hold_a_lone_surrogate_is_read(project: Project) -> None:
    """`read_ledger` reads; `ledger --verify` checks. A row edited to hold a lone surrogate's escape
    (`"card": "extract-ab\\ud800"`) ended read_ledger in pyarrow's UnicodeEncodeError, as read_run did before
    eeb5b58: it is U+FFFD in the frame, as in read_run."""
    give_verdict(project, make_run(project, the_card(project), ab_metrics(STRONG_VAR, STRONG_BASE)))
    path = project.ledger_path
    path.write_bytes(path.read_bytes().replace(b'"card":"extract-ab"', b'"card":"extract-ab\\ud800"', 1))
    assert benchcard.read_ledger(project)["card"].tolist() == ["extract-ab\ufffd"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_writes_the_frame_and_never_overwrites(project: Project, fmt: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), status={("A", "ex-03", 2): "failed"})
    give_verdict(project, run_dir, allow_incomplete=True)
    monkeypatch.chdir(project.root)
    result = bc(project, "export", run_dir.name, "--format", fmt)
    assert result.exit_code == 0, result.output
    path = project.root / f"extract-ab-v1-{run_dir.name}.{fmt}"
    assert result.stdout.strip() == f"wrote 36 cells → {path.name}"
    back = pd.read_csv(path) if fmt == "csv" else pd.read_parquet(path)
    frame = benchcard.read_run(run_dir)
    assert back["cell"].tolist() == frame["cell"].tolist()
    np.testing.assert_allclose(back["field_recall"], frame["field_recall"])  # NaN where failed, in both
    assert back.loc[back.status == "failed", "variant"].tolist() == ["A"]
    before = path.read_bytes()
    again = bc(project, "export", run_dir.name, "--format", fmt)
    assert again.exit_code == 1 and again.stderr.strip() == (
        f"error: {path.name}: already exists; export never overwrites (choose another --out)")
    assert path.read_bytes() == before
    out = project.root / "elsewhere.out"
    assert bc(project, "export", run_dir.name, "--format", fmt, "--out", str(out)).exit_code == 0 and out.is_file()


@pytest.mark.parametrize(("pyarrow", "said"), [
    ('raise ModuleNotFoundError("No module named \'pyarrow\'", name="pyarrow")',
     f"--format parquet needs pyarrow: {sys.executable} -m pip install -e '{REPO}[parquet]' (or use --format csv)"),
    ('raise ImportError("pyarrow requires NumPy 2.0 or newer, found 1.26.4")',
     "--format parquet: pyarrow is installed but does not import: pyarrow requires NumPy 2.0 or newer, found 1.26.4 "
     "(or use --format csv)")], ids=["absent", "numpy-1"])
def test_parquet_without_a_pyarrow_that_imports_is_one_line(project: Project, tmp_path: Path, pyarrow: str,
                                                            said: str) -> None:
    """pyarrow 26 imports under numpy 2 only and its requirements do not say so: `pip install 'benchcard[parquet]'`
    over numpy 1.26 (the floor) installs it, and export --format parquet ended in pandas' ImportError traceback.
    A process of its own, whose `pyarrow` is a package that fails as each would (pandas runs without one)."""
    run_dir = make_run(project, the_card(project), ab_metrics())
    give_verdict(project, run_dir)
    shadow = tmp_path / "shadow" / "pyarrow"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(pyarrow + "\n", encoding="utf-8")
    src = str(Path(benchcard.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(shadow.parent), src,
                                                                      os.environ.get("PYTHONPATH")]))}
    out = tmp_path / "cells.parquet"
    done = subprocess.run([sys.executable, "-m", "benchcard", "-C", str(project.root), "export", run_dir.name,
                           "--format", "parquet", "--out", str(out)], capture_output=True, text=True, timeout=120,
                          env=env, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: {said}\n") and not out.exists()


def test_export_errors_are_one_line(project: Project) -> None:
    bad = bc(project, "export", "nope")
    assert bad.exit_code == 1 and bad.stderr.startswith("error: nope: no such run") and "Traceback" not in bad.output
    fmt = bc(project, "export", "nope", "--format", "xlsx")
    assert fmt.exit_code == 1 and "'xlsx' is not one of 'csv', 'parquet'" in fmt.stderr
    run_dir = make_run(project, the_card(project), ab_metrics())
    (run_dir / "scores.jsonl").write_text('{"cell": "c1", "fixture": "f", "status": "failed"}\nnot json\n',
                                          encoding="utf-8")
    broken = bc(project, "export", run_dir.name)
    assert broken.exit_code == 1 and "scores.jsonl: line 2 is not JSON" in broken.stderr
    (run_dir / "scores.jsonl").write_text('{"cell": "c1", "fixture": "f", "status": "done"}\n', encoding="utf-8")
    broken = bc(project, "export", run_dir.name)
    assert broken.exit_code == 1 and "scores.jsonl: line 1: Invalid enum value 'done' - at `$.status`" in broken.stderr
    assert json.loads((run_dir / "manifest.json").read_text())["run"] == run_dir.name


def test_csv_export_writes_formula_like_text_as_text(tmp_path: Path) -> None:
    """A variant, fixture or model name that a spreadsheet would run as a formula is exported as text (a leading
    apostrophe, as in the blind sheets); numbers, negative ones included, stay numbers."""
    card_text = (AB_CARD.replace('A: "Score', '\'=HYPERLINK("http://evil","x")\': "Score')
                 .replace("model: test/model-1", "model: '@SUM(1+1)'"))
    fixtures = ["+cmd", "-2+3", "=ex-03", "ex-04", "ex-05", "ex-06"]  # a name with a tab: refused by the card
    project = make_project(tmp_path / "proj", card_text, fixtures)
    card = the_card(project)
    variant = next(v for v in card.variants if v != "baseline")
    metrics = {m: {"baseline" if v == "baseline" else variant: x for v, x in by.items()}
               for m, by in ab_metrics(recall_base=-np.asarray(BASE_A)).items()}
    run_dir = make_run(project, card, metrics)
    give_verdict(project, run_dir)
    out = tmp_path / "cells.csv"
    result = bc(project, "export", run_dir.name, "--out", str(out))
    assert result.exit_code == 0, result.output
    back = pd.read_csv(out, keep_default_na=False)
    assert set(back["variant"]) == {"baseline", "'=HYPERLINK(\"http://evil\",\"x\")"}
    assert set(back["fixture"]) == {"'+cmd", "'-2+3", "'=ex-03", "ex-04", "ex-05", "ex-06"}
    assert set(back["model"]) == {"'@SUM(1+1)"}
    frame = benchcard.read_run(run_dir)  # the frame itself keeps the names as they are
    assert set(frame["fixture"]) == set(fixtures) and set(frame["model"]) == {"@SUM(1+1)"}
    assert (back["field_recall"][back["variant"] == "baseline"] < 0).all()  # numbers are not guarded
    np.testing.assert_allclose(back["field_recall"], frame["field_recall"])
    with open(out, newline="", encoding="utf-8") as fh:
        cells = [cell for row in csv.reader(fh) for cell in row]
    formulas = [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r") and not _is_number(c)]
    assert formulas == []


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_before_the_verdict_no_column_tells_a_fixtures_cells_apart_by_variant(tmp_path: Path, server: FakeServer,
                                                                               key: str) -> None:
    """The two variants' prompts differ in length ("" against "Please.\\n"), so the request's figures differ by
    variant; before the verdict no column of read_run or of the export separates a fixture's cells by variant.
    (Every answer is "red" here, so the answer's side is the same for all.)"""
    server.configure({"default_reply": "red", "latency_ms": 1})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    [summary] = benchcard.run_card("colour-ab", project, provider="fake")
    run_dir = project.root / summary.folder
    variant_of = {r["cell"]: r["variant"] for r in read_jsonl(run_dir / "sealed" / "assignment.jsonl")}

    def separating(frame: pd.DataFrame) -> set[str]:
        """The columns whose values, within some fixture, are not the same for both variants' cells."""
        found = set()
        for column in frame.columns.drop("cell"):
            for _, cells in frame.groupby("fixture"):
                seen: dict[str, set[str]] = {}
                for cell, value in zip(cells["cell"], cells[column].astype(str), strict=True):
                    seen.setdefault(variant_of[cell], set()).add(value)
                if seen["A"] != seen["baseline"]:
                    found.add(str(column))
        return found

    blind = benchcard.read_run(summary.run, project)
    assert len(blind) == 12 and separating(blind) == set()
    assert blind["text"].tolist() == ["red"] * 12  # the output as recorded, blind or not
    out = tmp_path / "blind.csv"
    assert bc(project, "export", summary.run, "--out", str(out)).exit_code == 0
    assert separating(pd.read_csv(out)) == set()
    benchcard.give_verdict(summary.run, project)
    judged = benchcard.read_run(summary.run, project)
    assert {"variant", "input_tokens"} <= separating(judged)  # the test has teeth: the prompts do differ
    assert judged["text"].tolist() == ["red"] * 12


def test_a_run_killed_mid_write_exports_its_whole_rows(project: Project, tmp_path: Path) -> None:
    """Hostile audit: a run killed mid-write (or still writing) ends in a torn line, which `status` and
    `run --resume` skip; `export` refused the whole run ("line 37 is not JSON"). It now exports the whole rows."""
    run_dir = make_run(project, the_card(project), ab_metrics(), finished=False)
    with open(run_dir / "outputs.jsonl", "ab") as fh:
        fh.write(b'{"cell":"c-torn","fixture":"ex-0')
    result = bc(project, "export", run_dir.name, "--out", str(tmp_path / "cells.csv"), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows"] == 36
    assert len(pd.read_csv(tmp_path / "cells.csv")) == 36


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_an_output_holding_a_lone_surrogate_is_exported(tmp_path: Path, server: FakeServer, key: str,
                                                        fmt: str) -> None:
    """Hostile audit (round 12b): a reply may escape a lone surrogate (`"red \\ud800"`), which outputs.jsonl keeps
    as its JSON escape but no UTF-8 file can hold: `export`, and `read_run` (pandas' strings are UTF-8 too), ended
    in a UnicodeEncodeError traceback. Both give it as U+FFFD, as a blind sheet does; outputs.jsonl keeps the text
    as the reply gave it."""
    server.configure({"default_reply": "red \ud800"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    [summary] = benchcard.run_card("colour-ab", project, provider="fake")
    assert {r["text"] for r in read_jsonl(project.root / summary.folder / "outputs.jsonl")} == {"red \ud800"}
    assert benchcard.read_run(summary.run, project)["text"].tolist() == ["red \ufffd"] * 12
    out = tmp_path / f"cells.{fmt}"
    result = bc(project, "export", summary.run, "--format", fmt, "--out", str(out))
    assert result.exit_code == 0, result.output
    back = pd.read_csv(out) if fmt == "csv" else pd.read_parquet(out)
    assert back["text"].tolist() == ["red \ufffd"] * 12


def test_an_export_the_disk_refuses_names_the_file_and_leaves_nothing(project: Project, tmp_path: Path) -> None:
    """Hostile audit (hostile21, disk): `benchcard export RUN` on a full disk said `error: No space left on device`,
    naming no file (a write's error names none). The refusal, here a file-size limit as the kernel enforces one in
    a child process, names the file asked for, and no temporary is left beside it."""
    import resource

    run_dir = make_run(project, the_card(project), ab_metrics())
    out = tmp_path / "cells.csv"

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1_000, 1_000))

    src = str(Path(benchcard.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "benchcard", "-C", str(project.root), "export", run_dir.name,
                           "--out", str(out)], capture_output=True, text=True, timeout=120, preexec_fn=limited,
                          env=env, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: {out}: File too large\n")
    assert list(tmp_path.iterdir()) == [tmp_path / "proj"]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_export_carries_the_prompt_caches_tokens(tmp_path: Path, server: FakeServer, key: str, api: str) -> None:
    """Replies that read 1,000 input tokens from the prompt cache and wrote 300 to it (100 of those to Anthropic's
    1-hour cache), in each vendor's shape (OpenAI names only the read ones, inside prompt_tokens; Anthropic all
    three, beside input_tokens): the export has them as columns after input_tokens, where it had only the input,
    so the cells whose cost is an upper bound, and what the cache saved, can be read from the table. A cell of a
    reply that says nothing of a cache has 0 in each; before the verdict they are withheld with the input tokens."""
    cache = {"cached_tokens": 1000, "cache_write_tokens": 300, "cache_write_1h_tokens": 100}
    server.configure({"replies": [{"match": "number 0", "reply": "red", **cache}, {"match": "", "reply": "red"}]})
    project = ab_project(tmp_path / "proj", None, fixtures=2, repetitions=1)
    write_config(project.root, server.base_url, type_=api)
    [summary] = benchcard.run_card("colour-ab", project)
    blind = tmp_path / "blind.csv"
    assert bc(project, "export", summary.run, "--out", str(blind)).exit_code == 0
    assert not {"cached_input_tokens", "cache_write_tokens", "cache_write_1h_tokens"} & set(pd.read_csv(blind))
    benchcard.give_verdict(summary.run, project)
    out = tmp_path / "cells.csv"
    exported = bc(project, "export", summary.run, "--out", str(out))
    assert exported.exit_code == 0, exported.output
    table = pd.read_csv(out)
    columns = list(table.columns)
    at = columns.index("input_tokens")
    assert columns[at:at + 5] == ["input_tokens", "cached_input_tokens", "cache_write_tokens", "cache_write_1h_tokens",
                                  "output_tokens"]
    # OpenAI's reply says nothing of cache writes: only the read ones are known there
    said = (1000, 300, 100) if api == "anthropic" else (1000, 0, 0)
    for fixture, expected in (("item-000", said), ("item-001", (0, 0, 0))):
        rows = table[table.fixture == fixture]
        assert len(rows) == 2
        assert {tuple(r) for r in rows[["cached_input_tokens", "cache_write_tokens", "cache_write_1h_tokens"]]
                .itertuples(index=False)} == {expected}, (fixture, rows)
    cached = table[table.fixture == "item-000"]
    assert (cached["input_tokens"] > 1300).all()  # each vendor's shape read as input tokens counting them
    assert str(benchcard.read_run(summary.run, project)["cached_input_tokens"].dtype) == "Int64"
