"""The seal file's struct: every seal already on disk re-reads and re-encodes to its very bytes, and a seal with
a mistyped field is refused in one line naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.card._sealfile import decode_seal, encode_seal

from ..helpers_cli import exit_and_streams as _run
from ..helpers_project import REPO

SEALS = sorted(p for p in REPO.rglob("*.seal.json") if ".git" not in p.parts and ".venv" not in p.parts)


def test_the_repository_has_seals_to_check() -> None:
    assert len(SEALS) >= 9  # keys/ and tests/data: the parametrised test below is not empty


@pytest.mark.parametrize("path", SEALS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_seal_in_the_repository_re_encodes_byte_for_byte(path: Path) -> None:
    raw = path.read_bytes()
    sealed = decode_seal(raw, path.name)
    assert encode_seal(sealed) == raw
    assert sealed.fields() == json.loads(raw)


def test_a_new_seal_reads_back_as_written(project_dir: Path) -> None:
    code, out, _ = _run(project_dir, "seal", "one-word-sentiment", "--json")
    assert code == 0, out
    printed = json.loads(out)
    raw = (project_dir / printed["path"]).read_bytes()
    assert encode_seal(decode_seal(raw, "x")) == raw
    assert {k: v for k, v in printed.items() if k not in ("written", "path")} == json.loads(raw)


@pytest.mark.parametrize("command", [["check", "one-word-sentiment"], ["seal", "one-word-sentiment"]])
def test_a_seal_with_a_mistyped_field_is_refused_in_one_line(project_dir: Path, command: list[str]) -> None:
    assert _run(project_dir, "seal", "one-word-sentiment")[0] == 0
    path = project_dir / "keys" / "one-word-sentiment" / "v3.seal.json"
    data = json.loads(path.read_text())
    data["version"] = "3"
    path.write_text(json.dumps(data, indent=2))
    code, out, err = _run(project_dir, *command)
    assert code == 1
    lines = [line for line in (out + err).splitlines() if "v3.seal.json" in line]
    assert len(lines) == 1, out + err
    assert "keys/one-word-sentiment/v3.seal.json: not a seal: Expected `int`, got `str` - at `$.version`" in lines[0]


def test_a_seal_that_is_not_json_is_named(project_dir: Path) -> None:
    assert _run(project_dir, "seal", "one-word-sentiment")[0] == 0
    path = project_dir / "keys" / "one-word-sentiment" / "v3.seal.json"
    path.write_text(path.read_text()[:40])
    code, out, err = _run(project_dir, "check", "one-word-sentiment")
    assert code == 1
    assert "keys/one-word-sentiment/v3.seal.json: unreadable seal:" in out + err
