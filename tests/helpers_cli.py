"""The CLI as a user meets it: invoke `benchcard` on a project, and the shape of a user error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import benchcard
from benchcard.cli import cli


def bc(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), *args])


def one_line_error(result: Result) -> str:
    """A user error: exit 1, nothing on stdout, exactly one line on stderr starting `error:`, no traceback."""
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def exit_and_streams(project: Path, *args: str) -> tuple[int, str, str]:
    """`benchcard -C project args…` as (exit code, stdout, stderr)."""
    result = CliRunner().invoke(cli, ["-C", str(project), *args])
    return result.exit_code, result.stdout, result.stderr


# Commands as `benchcard …` gives them, all in one Python process (each started alone costs about a second of CPU
# to import benchcard): click's runner, with an uncaught exception's traceback on stderr as the interpreter prints it.
# argv[1] is the JSON list of the commands' arguments; it prints a JSON list of [exit code, stdout, stderr].
EACH_COMMAND = """
import json, sys, traceback
from click.testing import CliRunner
from benchcard.cli import cli
said = []
for args in json.loads(sys.argv[1]):
    done = CliRunner().invoke(cli, args, prog_name="benchcard")
    crash = done.exception if not isinstance(done.exception, (SystemExit, type(None))) else None
    trace = "".join(traceback.format_exception(crash)) if crash else ""
    said.append([done.exit_code, done.stdout, done.stderr + trace])
json.dump(said, sys.stdout)
"""


def each_command(started: subprocess.CompletedProcess[str], commands: Sequence[Sequence[str]]
                 ) -> list[subprocess.CompletedProcess[str]]:
    """What `EACH_COMMAND`, run as `started`, said of each of `commands`, as each would have been alone."""
    assert started.returncode == 0, started.stderr
    return [subprocess.CompletedProcess(["benchcard", *args], code, out, err)
            for args, (code, out, err) in zip(commands, json.loads(started.stdout), strict=True)]


def as_a_user(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m benchcard args…` in a child process that file permissions hold for: as root (a container) without
    the capabilities that override them, which `setpriv` drops; as any other user, as it is."""
    return subprocess.run([*_unprivileged(), sys.executable, "-m", "benchcard", *args], capture_output=True,
                          text=True, timeout=120, env=_with_src(), check=False)


def as_a_user_each(*commands: Sequence[str]) -> list[subprocess.CompletedProcess[str]]:
    """`as_a_user` of each of `commands` (each `benchcard` arguments), one after the other in one child process."""
    started = subprocess.run([*_unprivileged(), sys.executable, "-c", EACH_COMMAND, json.dumps(commands)],
                             capture_output=True, text=True, timeout=300, env=_with_src(), check=False)
    return each_command(started, commands)


def _unprivileged() -> list[str]:
    """The command prefix that drops root's capabilities over file permissions (none for another user)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root, and no setpriv to drop the capabilities that pass over file permissions")
    caps = "-dac_override,-dac_read_search,-fowner"
    return [setpriv, "--bounding-set", caps, "--inh-caps", caps]


def _with_src() -> dict[str, str]:
    src = str(Path(benchcard.__file__).parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
