"""The seeded tables kept on disk: drawn once, then read by the next process with the same bytes; a corrupt or
foreign file is drawn again; a cache that is off or cannot be written changes nothing but the time."""

from __future__ import annotations

import dataclasses
import inspect
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from benchcard.stats import _tablecache, reach, simulate, worstcase

from ..helpers_project import AB_CARD, make_ab_project

SRC = Path(__file__).resolve().parents[2] / "src"
#: The null table drawn here, not the one the suite's workers share (tests/conftest.py, `helpers_once.drawn_once`).
DRAW_NULL = inspect.unwrap(worstcase.draw_null_scores)


def _counted(values: np.ndarray) -> tuple[list[int], Callable[[], np.ndarray]]:
    calls: list[int] = []

    def make() -> np.ndarray:
        calls.append(1)
        return values.copy()

    return calls, make


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(_tablecache.ENV, str(folder))
    return folder


def test_a_table_is_drawn_once_then_read_from_its_file(cache: Path) -> None:
    values = np.linspace(-3.0, 3.0, 12).reshape(2, 6)
    calls, make = _counted(values)
    first = _tablecache.table("demo", (4, 3), (2, 6), make)
    path = _tablecache.path_of("demo", (4, 3))
    assert path is not None and path.is_file() and path.parent.parent == cache
    again = _tablecache.table("demo", (4, 3), (2, 6), make)
    assert calls == [1] and again.tobytes() == first.tobytes() == values.tobytes()
    assert not again.flags.writeable and again.dtype == np.float64
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left behind


def _truncated(raw: bytes, other: bytes) -> bytes:
    return raw[:-8]


def _flipped(raw: bytes, other: bytes) -> bytes:
    return raw[:-1] + bytes([raw[-1] ^ 1])


def _foreign(raw: bytes, other: bytes) -> bytes:
    return other


def _garbage(raw: bytes, other: bytes) -> bytes:
    return b"\x00" * len(raw)


@pytest.mark.parametrize("damage", [_truncated, _flipped, _foreign, _garbage])
def test_a_corrupt_or_foreign_file_is_drawn_again_and_replaced(cache: Path,
                                                               damage: Callable[[bytes, bytes], bytes]) -> None:
    values = np.arange(12, dtype=np.float64).reshape(2, 6)
    calls, make = _counted(values)
    _tablecache.table("demo", (4, 3), (2, 6), make)
    _tablecache.table("demo", (5, 3), (2, 6), lambda: values + 1)
    path, other = _tablecache.path_of("demo", (4, 3)), _tablecache.path_of("demo", (5, 3))
    assert path is not None and other is not None
    path.write_bytes(damage(path.read_bytes(), other.read_bytes()))
    assert _tablecache.table("demo", (4, 3), (2, 6), make).tobytes() == values.tobytes()
    assert calls == [1, 1]
    assert _tablecache.table("demo", (4, 3), (2, 6), make).tobytes() == values.tobytes() and calls == [1, 1]


def test_an_empty_variable_turns_the_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_tablecache.ENV, "")
    calls, make = _counted(np.zeros((2, 3)))
    _tablecache.table("demo", (1,), (2, 3), make)
    _tablecache.table("demo", (1,), (2, 3), make)
    assert calls == [1, 1] and _tablecache.path_of("demo", (1,)) is None


def test_a_folder_that_cannot_be_written_only_costs_the_drawing(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv(_tablecache.ENV, str(blocker / "cache"))
    calls, make = _counted(np.ones((2, 3)))
    assert _tablecache.table("demo", (1,), (2, 3), make).tobytes() == np.ones((2, 3)).tobytes()
    assert _tablecache.table("demo", (1,), (2, 3), make).tobytes() == np.ones((2, 3)).tobytes()
    assert calls == [1, 1]


def test_the_folder_follows_xdg_then_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_tablecache.ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _tablecache.folder() == tmp_path / "xdg" / "benchcard"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/not/used")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _tablecache.folder() == tmp_path / "home" / ".cache" / "benchcard"
    monkeypatch.setenv(_tablecache.ENV, str(tmp_path / "mine"))
    assert _tablecache.folder() == tmp_path / "mine"


def test_a_relative_folder_is_the_working_directorys_at_first_use(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`BENCHCARD_CACHE_DIR=rel` is `rel` under the folder the process was in when it first named it, even after it
    changes directory (a notebook's `os.chdir`); `~` is the home folder, as a shell would read it."""
    _tablecache._named.cache_clear()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    monkeypatch.setenv(_tablecache.ENV, "rel-cache")
    try:
        assert _tablecache.folder() == tmp_path / "a" / "rel-cache"
        monkeypatch.chdir(tmp_path / "b")
        assert _tablecache.folder() == tmp_path / "a" / "rel-cache"
        path = _tablecache.path_of("demo", (4, 3))
        assert path is not None and path.is_absolute() and path.parent.parent == tmp_path / "a" / "rel-cache"
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.setenv(_tablecache.ENV, "~/tables-here")
        assert _tablecache.folder() == tmp_path / "home" / "tables-here"
    finally:
        _tablecache._named.cache_clear()


def test_a_file_is_named_by_the_kind_the_design_and_the_code(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = {_tablecache.path_of("null", (12, 12, 3)), _tablecache.path_of("null", (12, 11, 3)),
             _tablecache.path_of("evidence", (12, 12, 3))}
    assert len(names) == 3
    monkeypatch.setattr(_tablecache, "code_digest", lambda: "other code")
    assert _tablecache.path_of("null", (12, 12, 3)) not in names


def test_the_null_table_and_the_evidence_read_back_are_the_bytes_drawn(cache: Path) -> None:
    worstcase._null_scores.cache_clear()
    reach._evidence.cache_clear()
    try:
        kept = worstcase.null_scores(6, 5, 3)
        gap, p = reach._evidence(6, 3)
        worstcase._null_scores.cache_clear()
        reach._evidence.cache_clear()
        drawn_null = DRAW_NULL(6, 5, 3)
        assert worstcase.null_scores(6, 5, 3).tobytes() == kept.tobytes() == drawn_null.tobytes()
        drawn = reach.draw_evidence(6, 3)
        assert [a.tobytes() for a in reach._evidence(6, 3)] == [gap.tobytes(), p.tobytes()] == [
            a.tobytes() for a in drawn]
    finally:
        worstcase._null_scores.cache_clear()
        reach._evidence.cache_clear()


def _check(root: Path, cache: Path | str, cwd: Path | None = None) -> str:
    """`benchcard -C root check tiny-ab` in a process of its own (no table in memory), with `cache` as the cache."""
    env = {**os.environ, _tablecache.ENV: str(cache),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "benchcard", "-C", str(root), "check", "tiny-ab"], env=env,
                          capture_output=True, text=True, check=False, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_second_check_reads_the_tables_the_first_drew_and_redraws_a_corrupt_one(tmp_path: Path) -> None:
    """`check` judges the card's design (12 fixtures × 5 repetitions) on its simulated runs, drawing them and their
    null table; the next `check` prints the same, reading both files and rewriting neither. The first is run as
    `cd work && BENCHCARD_CACHE_DIR=cache benchcard -C ../proj check`: a relative folder is under the working
    directory, not the project (README). One cold draw for both promises: each cold `check` draws the same tables."""
    project = make_ab_project(tmp_path / "proj", AB_CARD.replace("repetitions: 3", "repetitions: 5"), n_fixtures=12)
    (tmp_path / "work").mkdir()
    cache = tmp_path / "work" / "cache"
    first = _check(project, "cache", cwd=tmp_path / "work")
    assert first.endswith("1 card(s) ok, 0 failed\n")
    assert not (project / "cache").exists()
    files = sorted((cache / "tables").iterdir())
    assert {p.name.split("-")[0] for p in files} == {"evidence", "null"}
    kept = {p.name: p.stat().st_ino for p in files}
    assert _check(project, cache) == first
    assert {p.name: p.stat().st_ino for p in sorted((cache / "tables").iterdir())} == kept  # read, not rewritten
    damaged = next(p for p in files if p.name.startswith("evidence"))
    damaged.write_bytes(damaged.read_bytes()[:100])
    assert _check(project, cache) == first
    assert damaged.stat().st_size > 100 and damaged.stat().st_ino != kept[damaged.name]


def test_a_plans_simulated_power_is_kept_for_seeded_draws_only(cache: Path) -> None:
    """`plan` asks for the power at a gap of draws that `simulate.draws` made from a model and a seed: kept, and
    read back as the same float; draws made any other way are never kept (nothing names what made them)."""
    model = simulate.Rates(rate=0.5, fixture_sd=0.1, run_sd=0.02)
    z = simulate.draws(model, 12, 3, seed=7, n=400)
    power = simulate.effect_power(z, 0.3, 0.05)
    path = _tablecache.path_of("power", (model, 12, 3, 7, 400, 0.3, 0.05, 0.0))
    assert path is not None and path.is_file()
    assert simulate.effect_power(z, 0.3, 0.05) == power == simulate._effect_power(z, 0.3, 0.05, 0.0)
    assert simulate.effect_power(simulate.draws(model, 12, 3, seed=7, n=400), 0.3, 0.05) == power
    unnamed = dataclasses.replace(z, made_of=None)
    assert simulate.effect_power(unnamed, 0.2, 0.05) == simulate._effect_power(z, 0.2, 0.05, 0.0)
    assert [p.name for p in path.parent.iterdir() if p.name.startswith("power")] == [path.name]  # the 0.2 not kept


def test_a_forged_null_table_advises_but_never_decides(cache: Path) -> None:
    """Whoever can write the folder can change what a file holds (the checksum catches a torn file, not a
    forger): a decision draws its own null table, and only advisory figures read the folder's."""
    design = (7, 7, 3)
    drawn = DRAW_NULL(*design)
    forged = np.full_like(drawn, -1e9)  # every null score tiny: any statistic would look extreme
    path = _tablecache.path_of("null", design)
    assert path is not None
    _tablecache._write(path, forged)
    worstcase._null_scores.cache_clear()
    try:
        with _tablecache.advisory():
            assert worstcase.null_scores(*design).tobytes() == forged.tobytes()
        # the decision draws its own (the advisory read serves it nothing), and keeps it over the forged file
        assert worstcase.null_scores(*design).tobytes() == drawn.tobytes()
        worstcase._null_scores.cache_clear()
        with _tablecache.advisory():
            assert worstcase.null_scores(*design).tobytes() == drawn.tobytes()
    finally:
        worstcase._null_scores.cache_clear()


def test_a_null_table_drawn_for_advice_serves_a_decision_and_one_read_from_disk_does_not(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that drew a table itself (no file yet) decides with it without drawing it again; one whose
    advisory figure read the table from the folder draws its own for the decision."""
    drawn: list[tuple[int, int, int]] = []

    def draw(n: int, complete: int, r: int) -> np.ndarray:
        drawn.append((n, complete, r))
        return np.full((2, worstcase.DRAWS), float(len(drawn)))

    monkeypatch.setattr(worstcase, "draw_null_scores", draw)
    design = (7, 6, 3)
    worstcase._null_scores.cache_clear()
    try:
        with _tablecache.advisory():
            advised = worstcase.null_scores(*design)
        assert worstcase.null_scores(*design) is advised and drawn == [design]
        worstcase._null_scores.cache_clear()
        with _tablecache.advisory():
            read_back = worstcase.null_scores(*design)
        assert read_back.tobytes() == advised.tobytes() and drawn == [design]
        decided = worstcase.null_scores(*design)
        assert drawn == [design, design] and decided[0, 0] == 2.0
        with _tablecache.advisory():
            assert worstcase.null_scores(*design) is read_back
    finally:
        worstcase._null_scores.cache_clear()


def test_tables_unused_for_a_month_and_temporary_files_left_by_a_kill_go_when_a_table_is_written(cache: Path) -> None:
    """The folder does not grow with each version of the statistics: a table neither read nor written for
    KEEP_SECONDS goes, one read lately stays, and so does a temporary file another process may be writing."""
    calls, make = _counted(np.zeros((2, 3)))
    _tablecache.table("demo", (1,), (2, 3), make)
    _tablecache.table("demo", (2,), (2, 3), make)
    old, used = _tablecache.path_of("demo", (1,)), _tablecache.path_of("demo", (2,))
    assert old is not None and used is not None
    long_ago = time.time() - _tablecache.KEEP_SECONDS - 60
    for path in (old, used):
        os.utime(path, (long_ago, long_ago))
    _tablecache.table("demo", (2,), (2, 3), make)  # read: in use again
    killed, writing = old.parent / f".{old.name}.killed", old.parent / f".{old.name}.writing"
    killed.write_bytes(b"half a table")
    writing.write_bytes(b"a table being written")
    os.utime(killed, (long_ago, long_ago))
    _tablecache.table("demo", (3,), (2, 3), make)  # a write prunes
    names = sorted(p.name for p in old.parent.iterdir())
    assert old.name not in names and killed.name not in names
    assert used.name in names and writing.name in names and len(calls) == 3
