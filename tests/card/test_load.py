"""Finding and loading card files: by id or by path, one or all, and a duplicate id refused naming both files."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from benchcard.card.load import card_of_run, check_seal_root, load_cards, resolve_card_path
from benchcard.errors import BenchcardError, CardError, RunError, SealError, VerdictError
from benchcard.project import Project
from benchcard.records.rows import Manifest

from ..helpers_cli import bc, one_line_error
from ..helpers_project import AB_CARD, make_ab_project


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
    with pytest.raises(CardError, match=r"^tiny-abc: no such card \(looked for cards/tiny-abc\.yaml\)$"):
        resolve_card_path(project, "tiny-abc")
    with pytest.raises(CardError, match=r"^elsewhere/x\.yml: no such card"):
        resolve_card_path(project, "elsewhere/x.yml")


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
        ({"version": 2}, VerdictError, f"run {run} was made with tiny-ab v2 but cards/tiny-ab.yaml is now v1; a run "
                                       "is judged and replicated only by the version that produced it"),
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
