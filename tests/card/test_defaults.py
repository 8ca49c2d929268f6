"""A seal holds a card rewritten without a change of meaning: a field at its default written out where the sealed
card left it out, or left out where it was written (at any depth); any other change still breaks it, by name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchcard._util.hashing import digest
from benchcard.card._defaults import DEFAULT_SPENDING, DEFAULTS, default_of
from benchcard.card.load import load_card
from benchcard.card.model import WinRule
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import bc as bc_root
from ..helpers_cli import one_line_error
from ..helpers_project import REPO, make_ab_project
from ..helpers_run import PROBE, ab_project, bc, ok, only_run

CARD = "cards/colour-ab.yaml"


def _edit(root: Path, card: str, old: str, new: str) -> None:
    path = root / card
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _seal_bytes(root: Path, card_id: str, version: int = 1) -> bytes:
    return (root / "keys" / card_id / f"v{version}.seal.json").read_bytes()


def test_defaults_written_out_and_left_out_keep_the_seal_through_check_run_and_verdict(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "blue", "replies": [{"match": "Please.", "reply": "red"}]})
    project = ab_project(tmp_path, server.base_url, fixtures=6, repetitions=2)
    sealed = _seal_bytes(project.root, "colour-ab")
    # written out: the win rule's α and minimum effect (1 for 1.0 too), a top-level null; left out: effort: null
    _edit(project.root, CARD, "  equivalence_margin: 0.05\n",
          "  equivalence_margin: 0.05\n  alpha: 0.05\n  min_effect: 0\n  allow_failed: 0\n")
    _edit(project.root, CARD, ", effort: null}", "}")
    _edit(project.root, CARD, "baseline: baseline\n", "baseline: baseline\nsequential: null\n")
    checked = ok(bc(project, "check", "colour-ab"))
    assert "v1 sealed sha256:" in checked.stdout and "BROKEN" not in checked.stdout
    already = ok(bc(project, "seal", "colour-ab"))
    assert "already sealed" in already.stdout, already.stdout
    ok(bc(project, "run", "colour-ab"))
    run = only_run(project, "colour-ab").name
    judged = ok(bc(project, "verdict", run, "--gate"))
    assert "finding: win → result" in judged.stdout and "gate: win → exit 0" in judged.stdout
    assert ledger.read(project)[-1].run == run
    assert "gate: win → exit 0" in ok(bc(project, "verdict", run, "--show", "--gate")).stdout
    assert _seal_bytes(project.root, "colour-ab") == sealed


@pytest.mark.parametrize(("old", "new", "field"), [
    ("  equivalence_margin: 0.05\n", "  equivalence_margin: 0.05\n  alpha: 0.04\n", "win"),  # not its default
    ("  equivalence_margin: 0.05\n", "  equivalence_margin: 0.05\n  min_effect: 0.01\n", "win"),
    (", effort: null}", ", effort: high}", "rig"),
    ("baseline: baseline\n", "baseline: baseline\nsequential: {looks: 2}\n", "sequential"),
])
def test_a_change_of_meaning_still_breaks_the_seal_naming_the_field(tmp_path: Path, old: str, new: str,
                                                                      field: str) -> None:
    project = ab_project(tmp_path, repetitions=4)
    _edit(project.root, CARD, old, new)
    checked = bc(project, "check", "colour-ab")
    assert checked.exit_code == 1 and "v1 seal BROKEN" in checked.stdout, (checked.stdout, checked.stderr)
    assert f"{CARD} (field '{field}') changed after sealing v1" in checked.stdout
    refused = one_line_error(bc(project, "run", "colour-ab", "--scratch"))
    assert f"{CARD} (field '{field}') changed after sealing v1" in refused


def test_a_default_dropped_from_a_card_sealed_with_it_keeps_the_repository_seal(tmp_path: Path) -> None:
    """The published probe's seal (written before this rule) holds it with `repetitions: 1` and its rig's
    `effort: null` left out."""
    (tmp_path / "cards").mkdir()
    shutil.copy(REPO / "cards" / f"{PROBE}.yaml", tmp_path / "cards")
    shutil.copytree(REPO / "keys" / PROBE, tmp_path / "keys" / PROBE)
    before = {p.name: p.read_bytes() for p in (tmp_path / "keys" / PROBE).iterdir()}
    _edit(tmp_path, f"cards/{PROBE}.yaml", "repetitions: 1\n", "")
    _edit(tmp_path, f"cards/{PROBE}.yaml", ", effort: null}", "}")
    result = ok(bc_root(tmp_path, "check", PROBE))
    assert "sealed sha256:" in result.stdout and "BROKEN" not in result.stdout
    _edit(tmp_path, f"cards/{PROBE}.yaml", "kind: probe\n", "kind: probe\nrepetitions: 2\n")
    broken = bc_root(tmp_path, "check", PROBE)
    assert broken.exit_code == 1 and "(field 'repetitions') changed after sealing v3" in broken.stdout
    assert {p.name: p.read_bytes() for p in (tmp_path / "keys" / PROBE).iterdir()} == before


SEQUENTIAL = "baseline: baseline\nsequential: {looks: 2}\n"
WRITTEN = (f"baseline: baseline\nsequential: {{looks: 2, spending: {DEFAULT_SPENDING[0]}, "
           f"gamma: {DEFAULT_SPENDING[1]:g}, futility: false}}\n")


@pytest.mark.parametrize(("sealed_with", "checked_with"), [(SEQUENTIAL, WRITTEN), (WRITTEN, SEQUENTIAL)])
def test_a_nested_default_written_out_or_left_out_keeps_the_seal(tmp_path: Path, sealed_with: str,
                                                                  checked_with: str) -> None:
    make_ab_project(tmp_path)
    _edit(tmp_path, "cards/tiny-ab.yaml", "baseline: baseline\n", sealed_with)
    ok(bc_root(tmp_path, "seal", "tiny-ab"))
    sealed = _seal_bytes(tmp_path, "tiny-ab")
    _edit(tmp_path, "cards/tiny-ab.yaml", sealed_with, checked_with)
    assert "v1 sealed sha256:" in ok(bc_root(tmp_path, "check", "tiny-ab")).stdout
    _edit(tmp_path, "cards/tiny-ab.yaml", checked_with, checked_with.replace("2}", "2, spending: pocock}")
          if checked_with == SEQUENTIAL else checked_with.replace(f"gamma: {DEFAULT_SPENDING[1]:g}", "gamma: -2"))
    broken = bc_root(tmp_path, "check", "tiny-ab")
    assert broken.exit_code == 1 and "(field 'sequential') changed after sealing v1" in broken.stdout
    assert _seal_bytes(tmp_path, "tiny-ab") == sealed


def test_a_default_inside_a_list_item_and_a_dropped_written_default(tmp_path: Path) -> None:
    """`win.alpha: 0.05` written in the sealed card may go; a clause's `fixture: null` may come."""
    make_ab_project(tmp_path)
    ok(bc_root(tmp_path, "seal", "tiny-ab"))
    _edit(tmp_path, "cards/tiny-ab.yaml", "  alpha: 0.05\n", "")
    _edit(tmp_path, "cards/tiny-ab.yaml", "{metric: score, test: rises}", "{metric: score, test: rises, fixture: null}")
    assert "v1 sealed sha256:" in ok(bc_root(tmp_path, "check", "tiny-ab")).stdout


def test_a_new_seal_is_written_as_before(tmp_path: Path) -> None:
    """A card that writes no default out seals to the digests of its text as written (seals on disk agree)."""
    make_ab_project(tmp_path)
    ok(bc_root(tmp_path, "seal", "tiny-ab"))
    first = json.loads(_seal_bytes(tmp_path, "tiny-ab"))
    card = load_card(tmp_path / "cards" / "tiny-ab.yaml", Project(tmp_path))
    assert first["protocol"] == digest(card.protocol())


def test_the_reader_takes_left_out_fields_from_the_one_table(tmp_path: Path) -> None:
    """What the seal calls a default is what the card means when the field is left out."""
    make_ab_project(tmp_path)
    _edit(tmp_path, "cards/tiny-ab.yaml", "  alpha: 0.05\n", "")
    win = load_card(tmp_path / "cards" / "tiny-ab.yaml", Project(tmp_path)).win
    assert isinstance(win, WinRule)
    assert (win.alpha, win.min_effect, win.allow_failed) == (default_of(("win", "alpha")),
                                                             DEFAULTS[("win", "min_effect")],
                                                             DEFAULTS[("win", "allow_failed")])


def test_an_older_version_sealed_with_a_default_written_out_needs_no_history_for_it(tmp_path: Path) -> None:
    """v1 sealed `effort: null` and `win.alpha: 0.05`; v2 leaves both out: the history need not carry `rig`."""
    make_ab_project(tmp_path)
    ok(bc_root(tmp_path, "seal", "tiny-ab"))
    _edit(tmp_path, "cards/tiny-ab.yaml", ", effort: null}", "}")
    _edit(tmp_path, "cards/tiny-ab.yaml", "  alpha: 0.05\n", "")
    _edit(tmp_path, "cards/tiny-ab.yaml", "version: 1\n", "version: 2\n")
    _edit(tmp_path, "cards/tiny-ab.yaml", "  - {version: 1, note: Initial version.}\n",
          "  - {version: 1, note: Initial version.}\n  - {version: 2, note: Defaults left out.}\n")
    checked = ok(bc_root(tmp_path, "check", "tiny-ab"))
    assert "v2 not sealed" in checked.stdout and "must carry" not in checked.stdout
    _edit(tmp_path, "cards/tiny-ab.yaml", "model: test/model}", "model: test/model, effort: high}")
    carried = bc_root(tmp_path, "check", "tiny-ab")
    assert carried.exit_code == 1 and "v1 must carry 'rig'" in carried.stdout
