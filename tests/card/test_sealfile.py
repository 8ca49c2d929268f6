"""The seal file's struct: every seal already on disk re-reads and re-encodes to its very bytes, and a seal with
a mistyped field is refused in one line naming the file and the field."""

from __future__ import annotations

import json
import re
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
    assert {k: v for k, v in printed.items() if k not in ("written", "path", "warnings")} == json.loads(raw)


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


def _sha512_seal(path: Path) -> None:
    """The seal as a benchcard hashing with sha512 would write it: that algorithm named, each digest of its length."""
    text = path.read_text().replace('"algorithm": "sha256"', '"algorithm": "sha512"')
    path.write_text(re.sub(r"sha256:([0-9a-f]{64})", lambda m: "sha512:" + m.group(1) * 2, text))


@pytest.mark.parametrize("command", [["check", "one-word-sentiment"], ["seal", "one-word-sentiment"],
                                     ["run", "one-word-sentiment"]])
def test_a_seal_of_another_digest_algorithm_is_refused_as_newer_not_read_as_a_changed_card(
        project_dir: Path, command: list[str]) -> None:
    """Hostile audit (hostile23b): `algorithm` was never read. A seal from a benchcard hashing with another
    algorithm was compared as sha256 and said to be a card 'changed after sealing v3: … make it v4', which would
    strand its runs; it is one line naming the field and asking for a newer benchcard."""
    assert _run(project_dir, "seal", "one-word-sentiment")[0] == 0
    path = project_dir / "keys" / "one-word-sentiment" / "v3.seal.json"
    _sha512_seal(path)
    before = path.read_bytes()
    code, out, err = _run(project_dir, *command)
    assert code == 1
    said = [line for line in (out + err).splitlines() if "error" in line]
    assert said == ["error: keys/one-word-sentiment/v3.seal.json: field 'algorithm': digest algorithm 'sha512' is not "
                    "one this benchcard knows ('sha256'): the seal was written by a newer benchcard; upgrade "
                    "benchcard to read it"], out + err
    assert "changed after sealing" not in out + err and path.read_bytes() == before


def test_a_seal_with_a_field_this_benchcard_does_not_know_still_reads(project_dir: Path) -> None:
    """A field added by another benchcard is passed over, as in every record (design: an older file still reads)."""
    assert _run(project_dir, "seal", "one-word-sentiment")[0] == 0
    path = project_dir / "keys" / "one-word-sentiment" / "v3.seal.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "signed_by": "ci"}, indent=2))
    code, out, _ = _run(project_dir, "check", "one-word-sentiment")
    assert code == 0 and "v3 sealed sha256:" in out, out
