"""Finding and loading card files: by id or by path, one or all, and a duplicate id refused naming both files."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from benchcard.card._sealfile import decode_seal, encode_seal
from benchcard.card.load import card_of_run, check_seal_root, load_card, load_cards, resolve_card_path
from benchcard.card.model import Card
from benchcard.card.reader import read_card
from benchcard.card.seal import compute, seal, verify
from benchcard.errors import BenchcardError, CardError, RunError, SealError, VerdictError
from benchcard.project import Project
from benchcard.records.rows import Manifest
from benchcard.testing.cards import COLOUR_AB
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import bc, one_line_error
from ..helpers_project import AB_CARD, make_ab_project
from ..helpers_run import only_run, write_config


def test_duplicate_card_id(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path)
    (project / "cards" / "copy.yaml").write_text(AB_CARD, encoding="utf-8")
    with pytest.raises(CardError) as info:
        load_cards(Project(project))
    assert str(info.value) == "cards/copy.yaml:1: field 'id': duplicate card id 'tiny-ab', also in cards/tiny-ab.yaml"


def test_a_card_is_found_by_id_or_by_path_and_a_missing_one_says_where_it_looked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_ab_project(tmp_path / "proj")
    project = Project(root)
    assert resolve_card_path(project, "tiny-ab") == root / "cards" / "tiny-ab.yaml"
    monkeypatch.chdir(root)
    assert resolve_card_path(project, "cards/tiny-ab.yaml") == root / "cards" / "tiny-ab.yaml"
    # a typo is told the card it is near; another name, the cards there are (a newcomer's next command)
    with pytest.raises(CardError, match=r"^tiny-abc: no such card \(looked for cards/tiny-abc\.yaml; did you mean "
                                        r"tiny-ab\?\)$"):
        resolve_card_path(project, "tiny-abc")
    with pytest.raises(CardError, match=r"^bench-01: no such card \(looked for cards/bench-01\.yaml; the cards "
                                        r"here: tiny-ab\)$"):
        resolve_card_path(project, "bench-01")
    (root / "cards" / "tiny-ab.yaml").rename(root / "cards" / "x\x1b[2J.yaml")  # no such name is listed as a card
    with pytest.raises(CardError, match=r"^bench-01: no such card \(looked for cards/bench-01\.yaml; cards/ holds no "
                                        r"card yet\)$"):
        resolve_card_path(project, "bench-01")
    with pytest.raises(CardError, match=r"^elsewhere/x\.yml: no such card"):
        resolve_card_path(project, "elsewhere/x.yml")


@pytest.mark.parametrize(("target", "expected"), [
    ("loop.yaml", "error: cards/loop.yaml: a symbolic link that leads back to itself (a loop); expected the file: put "
                  "it in the link's place"),
    ("moved.yaml", "error: cards/loop.yaml: a symbolic link to moved.yaml, which is not there; expected the file: "
                   "point the link at it or put the file in its place"),
])
def test_a_card_linked_to_itself_or_to_nothing_is_said_not_missing(tmp_path: Path, target: str,
                                                                    expected: str) -> None:
    """Small audit (small21): `check loop`, its card a link to itself, said 'loop: no such card (looked for
    cards/loop.yaml)' of a file the user sees in cards/; a link to nothing named where it led as the card. `check`
    with no card named says it alike (it said 'cannot read: Too many levels of symbolic links', and named a link to
    nothing by where it led)."""
    root = make_ab_project(tmp_path)
    (root / "cards" / "loop.yaml").symlink_to(target)
    assert one_line_error(bc(root, "check", "loop")) == expected
    every = bc(root, "check", "--no-rig")
    assert every.exit_code == 1 and f"FAIL cards/loop.yaml\n  {expected}\n" in every.stdout, every.output


def test_named_cards_load_in_the_order_given_and_all_cards_in_file_order(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path)
    (root / "cards" / "another.yaml").write_text(AB_CARD.replace("id: tiny-ab", "id: another"), encoding="utf-8")
    project = Project(root)
    assert [c.id for c in load_cards(project)] == ["another", "tiny-ab"]
    assert [c.id for c in load_cards(project, ["tiny-ab", "another"])] == ["tiny-ab", "another"]


def test_the_runs_card_is_checked_once_for_a_verdict_a_gate_and_a_replication(tmp_path: Path) -> None:
    """One check of the card a run was made with, raised in the caller's error family: gone, another version,
    another kind; then its seal as it is now against the run's."""
    project = Project(make_ab_project(tmp_path))
    run = "20261205T120000Z-0a0b"
    manifest = Manifest(run=run, card="tiny-ab", version=1, kind="ab", seal_root="sha256:aa")
    card = card_of_run(project, run, manifest, RunError)
    assert (card.id, card.version) == ("tiny-ab", 1)
    cases: list[tuple[dict[str, object], type[BenchcardError], str]] = [
        ({"version": 2}, VerdictError, f"run {run} is of tiny-ab v2, but cards/tiny-ab.yaml is now v1, whose text is "
                                       "not the one v2 was sealed with; a run is resumed, judged and replicated only "
                                       "by the version that produced it: to judge it, put back cards/tiny-ab.yaml as "
                                       "v2 was sealed (its seal, keys/tiny-ab/v2.seal.json, checks it), or start a "
                                       "run of v1 with `benchcard run tiny-ab`"),
        ({"kind": "probe"}, RunError, f"run {run} is a probe run but tiny-ab is now a ab card"),
        ({"card": "gone"}, VerdictError, f"run {run}: its card cards/gone.yaml is not in this project; cannot check "
                                         "its seal (a run copied in needs its card, fixtures, keys and "
                                         "keys/gone/v1.seal.json)"),
    ]
    for changed, error, said in cases:
        with pytest.raises(error) as info:
            card_of_run(project, run, msgspec.structs.replace(manifest, **changed), error)
        assert str(info.value) == said
    check_seal_root(project, run, card, manifest, lambda: "sha256:aa", VerdictError)
    with pytest.raises(SealError, match=rf"^seal changed since run {run}: keys/tiny-ab/v1\.seal\.json has root "
                                        "sha256:bb but the run was made under sha256:aa$"):
        check_seal_root(project, run, card, manifest, lambda: "sha256:bb", SealError)


def test_a_card_named_by_a_path_is_read_only_from_the_projects_cards_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`benchcard seal /elsewhere/tiny-ab.yaml` sealed the project's tiny-ab v1 over another file's protocol: the
    project's own card was then 'changed after sealing v1' for good, a version burnt by a path. A card named by
    a path is the project's `cards/<id>.yaml` or nothing; no seal is written for any other file."""
    root = make_ab_project(tmp_path / "proj")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "tiny-ab.yaml").write_text(AB_CARD.replace("max_tokens: 50", "max_tokens: 51"), encoding="utf-8")
    (root / "cards" / "sub").mkdir()
    (root / "cards" / "sub" / "tiny-ab.yaml").write_text(AB_CARD, encoding="utf-8")
    (root / "tiny-ab.yaml").write_text(AB_CARD, encoding="utf-8")
    (root / "cards" / "tiny-ab.yml").write_text(AB_CARD, encoding="utf-8")
    monkeypatch.chdir(root)
    for name in (str(elsewhere / "tiny-ab.yaml"), "cards/sub/tiny-ab.yaml", "tiny-ab.yaml", "cards/tiny-ab.yml",
                 "../proj/cards/../tiny-ab.yaml", "../tiny-ab", "../../elsewhere/tiny-ab"):
        said = one_line_error(bc(root, "seal", name))
        assert said == (f"error: {name}: not a card of this project: a card is read from cards/<id>.yaml "
                        f"({root / 'cards'}), where its seal, runs and ledger rows belong; copy it to "
                        "cards/tiny-ab.yaml, or name its project with -C"), said
    assert not (root / "keys").exists()
    for name in ("tiny-ab", "cards/tiny-ab.yaml", str(root / "cards" / "tiny-ab.yaml"),
                 "cards/../cards/tiny-ab.yaml"):
        assert resolve_card_path(Project(root), name).resolve() == (root / "cards" / "tiny-ab.yaml").resolve()
    assert bc(root, "seal", "cards/../cards/tiny-ab.yaml").exit_code == 0
    assert (root / "keys" / "tiny-ab" / "v1.seal.json").is_file()


@pytest.mark.parametrize(("card_id", "said"), [
    ("tiny-ab\n", r"expected \[a-z0-9-\]\+, got 'tiny-ab\\n'"),
    ("con", "the id 'con' is a device name on Windows"),
    ("lpt1", "the id 'lpt1' is a device name on Windows"),
    ("-ab", r"the id '-ab' starts with '-', so a command given it \(benchcard run -ab\) reads it as an option; "
            "expected a letter or a digit first"),
    ("a" * 65, "the id is 65 characters long; expected at most 64, since it names the folders of every path of "
               r"the card \(results/aaaaaaaa…/v<N>/<run>/…\), which a Windows clone holds in 260 characters in all"),
])
def test_a_card_id_is_refused_when_its_files_could_not_be_named_anywhere(tmp_path: Path, card_id: str,
                                                                       said: str) -> None:
    """The id names cards/<id>.yaml, fixtures/<id>/, keys/<id>/ and results/<id>/: `^[a-z0-9-]+$` read with
    `match` let a final newline through (a card `id: "tiny-ab\\n"` in `cards/tiny-ab\\n.yaml` was checked, sealed
    and run), and a device name (`con`, `aux`, `nul`, `lpt1`) made a project that a Windows clone cannot hold."""
    root = make_ab_project(tmp_path)
    path = root / "cards" / f"{card_id}.yaml"
    quoted = card_id.replace("\n", "\\n")
    path.write_text(AB_CARD.replace("id: tiny-ab", f'id: "{quoted}"'), encoding="utf-8")
    with pytest.raises(CardError, match=rf"^cards/{re.escape(path.name)}:1: field 'id': {said}"):
        load_cards(Project(root), [str(path)])


@pytest.mark.parametrize(("given", "looked", "said"), [
    ("TINY-AB", "cards/TINY-AB.yaml", "'tiny-ab.yaml' differs from 'TINY-AB.yaml' only by case: name it tiny-ab"),
    ("Cards/tiny-ab.yaml", "Cards/tiny-ab.yaml", "'cards' differs from 'Cards' only by case: name it cards"),
])
def test_a_card_named_in_another_case_is_told_its_name(tmp_path: Path, given: str, looked: str, said: str) -> None:
    """Hostile audit (hostile22): `benchcard seal TINY-AB` on macOS or Windows opened cards/tiny-ab.yaml (their
    disks fold case) and said the card's id must match the file name TINY-AB.yaml, as if the file were misnamed;
    on Linux it said only 'no such card'. Either way, one line names the card."""
    root = make_ab_project(tmp_path)
    assert one_line_error(bc(root, "seal", given)) == f"error: {given}: no such card (looked for {looked}; {said})"


# ------------------------------------------------------------------ a card sealed before the checks of 2026-12-07

#: An ab card that benchcard of 1926552 (the day before) checked and sealed as it is, and that three checks added
#: since would refuse: its id is a Windows device name, its rule has a field no scorer reads, its rig no model.
SEALED_BEFORE = (COLOUR_AB.format(provider="fake", reps=2, effort="null", max_tokens=50)
                 .replace("id: colour-ab", "id: aux").replace("fixtures/colour-ab/", "fixtures/colours/")
                 .replace("why: The only right answer.}", "why: The only right answer., note: kept}")
                 .replace("model: test/model", 'model: ""'))
#: The root `benchcard seal aux` of 1926552 wrote for that project (`git worktree add /tmp/old 1926552`, then
#: PYTHONPATH=/tmp/old/src python -m benchcard seal aux): the seal below is the one it wrote, bar `sealed_at`.
OLD_ROOT = "sha256:102dbf6e545c2188c075587618dc504f459c3f18d6e1481525dc61acbf037084"
LATER = ("cards/aux.yaml:1: field 'id': the id 'aux' is a device name on Windows",
         "cards/aux.yaml:21: field 'scoring.rules.0.note': unknown field; expected id, must_match, must_not_match or "
         "why",
         "cards/aux.yaml:7: field 'rig.model': empty; expected a model name")


def sealed_before(root: Path, card: str = SEALED_BEFORE) -> Project:
    """The project of SEALED_BEFORE, sealed as benchcard sealed it before those checks: the card read by the reader
    alone (`load_card` would refuse it unsealed) and sealed by `seal.seal`."""
    (root / "cards").mkdir(parents=True)
    (root / "cards" / "aux.yaml").write_text(card, encoding="utf-8")
    (root / "fixtures" / "colours").mkdir(parents=True)
    for i in range(3):
        (root / "fixtures" / "colours" / f"item-{i:03d}.txt").write_text(f"a ripe tomato, number {i}",
                                                                          encoding="utf-8")
    project = Project(root)
    path = root / "cards" / "aux.yaml"
    read = read_card(card, "cards/aux.yaml", project, path)
    seal(read, project)
    return as_written_before_the_slot_rule(project, read)


def as_written_before_the_slot_rule(project: Project, card: Card) -> Project:
    """The card's seal rewritten as benchcard wrote it before seals named their slot rule (2026-12-07 20:30 UTC):
    no `slots` (nor the text and trim rules, `unicode` and `whitespace`, recorded since 2026-12-08), its root over
    the rest."""
    path = project.seal_path(card.id, card.version)
    written = msgspec.json.decode(path.read_bytes())
    del written["slots"], written["unicode"], written["whitespace"], written["json_keys"]
    written["root"] = compute(card, project, decode_seal(msgspec.json.encode(written), path)).root
    path.write_bytes(encode_seal(decode_seal(msgspec.json.encode(written), path)))
    return project


def test_a_card_sealed_before_a_check_still_reads_and_the_same_content_unsealed_does_not(tmp_path: Path) -> None:
    """A check added after a version was sealed would strand it: editing the card to pass breaks its seal. The
    version reads while its seal holds, and `check` warns of each problem; once its material changed, or as a new
    version not yet sealed, the card is refused for the first of them, as before."""
    project = sealed_before(tmp_path)
    assert msgspec.json.decode((tmp_path / "keys" / "aux" / "v1.seal.json").read_bytes())["root"] == OLD_ROOT
    card = load_card(project.card_path("aux"), project)
    assert (card.rig.model, card.id) == ("", "aux") and len(card.later_checks) == 3
    assert all(got.startswith(want) for got, want in zip(card.later_checks, LATER, strict=True))
    checked = bc(tmp_path, "check", "aux")
    assert checked.exit_code == 0, checked.output
    warned = [line for line in checked.stdout.splitlines() if "sealed before this check" in line]
    assert [line.removeprefix("  warning: ")[:len(want)] for line, want in zip(warned, LATER, strict=True)] == \
        list(LATER)
    assert warned[0].endswith("(v1 was sealed before this check and is read as sealed; fix it in v2)")
    assert bc(tmp_path, "seal", "aux").stdout.startswith("already sealed, unchanged: aux v1")
    fixture = tmp_path / "fixtures" / "colours" / "item-000.txt"
    fixture.write_text("a green tomato", encoding="utf-8")  # the seal no longer holds: the check's refusal
    with pytest.raises(CardError, match=f"^{re.escape(LATER[0])}"):
        load_card(project.card_path("aux"), project)
    fixture.write_text("a ripe tomato, number 0", encoding="utf-8")
    newer = SEALED_BEFORE.replace("version: 1", "version: 2", 1).replace(
        "history:\n", "history:\n  - {version: 2, note: Not sealed.}\n")
    project.card_path("aux").write_text(newer, encoding="utf-8")
    refused = bc(tmp_path, "check", "aux")
    assert refused.exit_code == 1 and f"  error: {LATER[0]}" in refused.stdout, refused.output
    assert one_line_error(bc(tmp_path, "seal", "aux")).startswith(f"error: {LATER[0]}")
    assert not (tmp_path / "keys" / "aux" / "v2.seal.json").exists()


def test_a_card_sealed_before_a_check_reads_only_while_its_seal_holds_as_a_run_verifies_it(tmp_path: Path) -> None:
    """Whether such a card reads is what `seal.verify` says of its seal, not a looser test of its own: a seal file
    whose listed fixture digest was edited by hand (its root left as it was) is a seal every run refuses, and the
    card was read as sealed, its newer checks passed over. It is refused for the first of them."""
    project = sealed_before(tmp_path)
    path = project.seal_path("aux", 1)
    data = msgspec.json.decode(path.read_bytes())
    fixture = sorted(data["fixtures"])[0]
    data["fixtures"][fixture] = "sha256:" + "0" * 64
    path.write_bytes(msgspec.json.encode(data))
    card = read_card(SEALED_BEFORE, "cards/aux.yaml", project, project.card_path("aux"))
    with pytest.raises(SealError, match="the seal file was edited by hand"):
        verify(card, project)
    with pytest.raises(CardError, match=f"^{re.escape(LATER[0])}"):
        load_card(project.card_path("aux"), project)


def test_a_run_of_a_card_sealed_before_a_check_is_resumed_shown_and_judged(tmp_path: Path, server: FakeServer,
                                                                          key: str) -> None:
    """The commands that work on a sealed version and its runs: `run` (naming the model its rig left empty; without
    one it is refused in one line, never a model named ''), `run --resume --retry-failed`, `status` and `verdict`."""
    project = sealed_before(tmp_path)
    write_config(tmp_path, server.base_url)
    assert one_line_error(bc(tmp_path, "run", "aux")) == (
        "error: aux v1: the card's rig names no model (rig.model is ''); name one with --model")
    server.configure({"default_reply": "red", "faults": [{"kind": "500", "times": 999, "match": "number 0"}]})
    first = bc(tmp_path, "run", "aux", "--model", "test/model", "--attempts", "1")
    assert first.exit_code == 0 and "12 cells: 8 ok, 0 truncated, 4 failed" in first.stdout, first.output
    run = only_run(project, "aux").name
    server.configure({"default_reply": "red"})
    resumed = bc(tmp_path, "run", "aux", "--resume", run, "--retry-failed")
    assert resumed.exit_code == 0, resumed.output
    status = bc(tmp_path, "status", run, "--json")
    assert status.exit_code == 0, status.output
    given = bc(tmp_path, "verdict", run)
    assert given.exit_code == 0 and given.stdout.startswith(f"aux v1 · run {run} · test/model · fake\n"), given.output
    assert "cells: planned 12 · scored 12 · truncated 0 · failed 0 · missing 0" in given.stdout  # the retry's
    assert bc(tmp_path, "verdict", run, "--show").stdout == given.stdout


# ------------------------------------------------------------------ the slot rule a seal is read by, and the clock

def _escaped_card(root: Path) -> Path:
    """The tiny ab project, its prompt asking for `\\{{fixture.input}}` as text (the escape), sealed now."""
    root = make_ab_project(root)
    card = root / "cards" / "tiny-ab.yaml"
    text = card.read_text(encoding="utf-8")
    assert "{{fixture}}" in text
    card.write_text(text.replace("{{fixture}}", "{{fixture}} (quote \\{{fixture.input}} as is)", 1), encoding="utf-8")
    assert bc(root, "seal", "tiny-ab").exit_code == 0
    return root


def _sent(root: Path) -> str:
    shown = bc(root, "curl", "tiny-ab")
    assert shown.exit_code == 0, shown.output
    return shown.stdout


def test_a_seal_made_with_the_clock_set_back_reads_the_escape_as_it_was_sealed(tmp_path: Path) -> None:
    """Hostile audit (hostile23b): whether a card reads `\\{{x}}` as the braces (the escape) or as a backslash and
    the slot filled was decided by the seal's `sealed_at` alone. A machine whose clock was behind (a dead RTC
    battery, a VM restored from a snapshot) sealed a version `sealed_at` 2026-12-06, and every run of it sent a
    backslash the author never wrote, with `check` calling the seal sound. A seal now names its slot rule."""
    root = _escaped_card(tmp_path)
    before = _sent(root)
    assert "(quote {{fixture.input}} as is)" in before
    path = root / "keys" / "tiny-ab" / "v1.seal.json"
    written = msgspec.json.decode(path.read_bytes())
    assert written["slots"] == "escape"
    written["sealed_at"] = "2026-12-06T12:00:00Z"  # what a clock a day behind writes
    path.write_bytes(encode_seal(decode_seal(msgspec.json.encode(written), path)))
    assert _sent(root) == before
    assert bc(root, "check", "tiny-ab").exit_code == 0


def test_a_seal_without_a_slot_rule_is_read_by_its_date_as_before(tmp_path: Path) -> None:
    """A seal written before seals named their rule keeps its root and its reading: before the escape, a backslash
    is text; after it, the escape."""
    root = _escaped_card(tmp_path)
    project = Project(root)
    card = load_card(project.card_path("tiny-ab"), project)
    as_written_before_the_slot_rule(project, card)
    assert "(quote {{fixture.input}} as is)" in _sent(root)
    path = project.seal_path("tiny-ab", 1)
    written = msgspec.json.decode(path.read_bytes())
    assert "slots" not in written
    written["sealed_at"] = "2026-12-06T12:00:00Z"
    path.write_bytes(encode_seal(decode_seal(msgspec.json.encode(written), path)))
    assert "(quote \\\\{{fixture.input}} as is)" in _sent(root)  # JSON's escape of the one backslash sent
    assert verify(load_card(project.card_path("tiny-ab"), project), project) == written["root"]


def test_a_seal_naming_a_slot_rule_from_a_newer_benchcard_is_refused_in_one_line(tmp_path: Path) -> None:
    """A rule this benchcard does not know is never read as one it knows: one line naming the file and the field."""
    root = _escaped_card(tmp_path)
    path = root / "keys" / "tiny-ab" / "v1.seal.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"escape"', '"handlebars-2"'), encoding="utf-8")
    assert one_line_error(bc(root, "check", "tiny-ab")) == (
        "error: keys/tiny-ab/v1.seal.json: field 'slots': slot rule 'handlebars-2' is not one this benchcard knows "
        "('escape'): the seal was written by a newer benchcard; upgrade benchcard to read it")
    assert bc(root, "run", "tiny-ab").exit_code == 1
