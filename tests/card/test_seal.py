"""Seals lock a version: any later change is named with both digests, and resealing different content is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchcard._util.hashing import digest, file_digest
from benchcard.card import seal
from benchcard.card.load import load_card
from benchcard.errors import SealError
from benchcard.project import Project
from benchcard.records.rows import LEGACY_GRID, Rules
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import as_a_user_each, bc
from ..helpers_project import copy_project, make_ab_project


def _card(project: Path, name: str = "tiny-ab"):
    return load_card(project / "cards" / f"{name}.yaml", Project(project))


def test_seal_format(project_dir: Path) -> None:
    project = Project(project_dir)
    path, data, written = seal.seal(_card(project_dir, "one-word-sentiment"), project)
    assert written
    assert path == project_dir / "keys" / "one-word-sentiment" / "v3.seal.json"
    on_disk = json.loads(path.read_text())
    assert on_disk == data.fields()
    assert on_disk["card"] == "one-word-sentiment" and on_disk["version"] == 3
    assert on_disk["algorithm"] == "sha256"
    assert on_disk["sealed_at"].endswith("Z")
    for value in [on_disk["protocol"], on_disk["root"], *on_disk["protocol_fields"].values()]:
        assert value.startswith("sha256:") and len(value) == 7 + 64
    card = _card(project_dir, "one-word-sentiment")
    assert on_disk["protocol"] == digest(card.protocol())
    assert set(on_disk["protocol_fields"]) == {"id", "version", "kind", "rig", "params", "prompt", "repetitions",
                                                "scoring"}


def test_ab_seal_covers_fixtures_and_keys(tmp_path: Path) -> None:
    project_dir = make_ab_project(tmp_path)
    (project_dir / "keys" / "tiny-ab").mkdir(parents=True)
    _, data, _ = seal.seal(_card(project_dir), Project(project_dir))
    assert sorted(data.fixtures) == [f"fixtures/tiny-ab/item-0{i}.txt" for i in range(1, 5)]


def test_reseal_same_content_is_a_no_op(project_dir: Path) -> None:
    project = Project(project_dir)
    card = _card(project_dir, "reordered-input")
    _, first, _ = seal.seal(card, project)
    _, second, written = seal.seal(card, project)
    assert not written and second == first


def test_changed_fixture_is_named_with_both_digests(tmp_path: Path) -> None:
    project_dir = make_ab_project(tmp_path)
    project = Project(project_dir)
    _, data, _ = seal.seal(_card(project_dir), project)
    fixture = project_dir / "fixtures" / "tiny-ab" / "item-02.txt"
    fixture.write_text("a green tomato\n")
    with pytest.raises(SealError) as info:
        seal.verify(_card(project_dir), project)
    message = str(info.value)
    assert message.startswith("fixtures/tiny-ab/item-02.txt changed after sealing v1: sealed sha256:")
    assert data.fixtures["fixtures/tiny-ab/item-02.txt"] in message
    assert message.endswith(f"now {file_digest(fixture)}; a sealed version never changes: undo the change, or "
                            "make it v2 (raise `version` in cards/tiny-ab.yaml, add a history note, `benchcard seal "
                            "tiny-ab`)")


@pytest.mark.parametrize(
    ("again", "old", "new", "message"),
    [
        # verifying names the protocol field that changed
        (seal.verify, "max_tokens: 1020", "max_tokens: 1021",
         r"cards/one-word-sentiment.yaml \(field 'params'\) changed after sealing v3"),
        # resealing the same version with other content is refused
        (seal.seal, "temperature: 0}", "temperature: 0.5}",
         r"v3 is already sealed and its content differs .*make a new version"),
    ],
    ids=["verify-names-the-field", "reseal-refused"],
)
def test_a_protocol_changed_after_sealing_is_refused(project_dir: Path, again: Any, old: str, new: str,
                                                       message: str) -> None:
    project = Project(project_dir)
    seal.seal(_card(project_dir, "one-word-sentiment"), project)
    path = project_dir / "cards" / "one-word-sentiment.yaml"
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))
    with pytest.raises(SealError, match=message):
        again(_card(project_dir, "one-word-sentiment"), project)


def test_prose_edits_do_not_break_the_seal(project_dir: Path) -> None:
    project = Project(project_dir)
    _, data, _ = seal.seal(_card(project_dir, "one-word-sentiment"), project)
    path = project_dir / "cards" / "one-word-sentiment.yaml"
    path.write_text(path.read_text().replace("A trivial classification question", "A trivial question"))
    assert seal.verify(_card(project_dir, "one-word-sentiment"), project) == data.root


def test_added_and_removed_fixture(tmp_path: Path) -> None:
    project_dir = make_ab_project(tmp_path)
    project = Project(project_dir)
    seal.seal(_card(project_dir), project)
    extra = project_dir / "fixtures" / "tiny-ab" / "item-05.txt"
    extra.write_text("new\n")
    with pytest.raises(SealError, match=r"fixtures/tiny-ab/item-05\.txt was added after sealing v1"):
        seal.verify(_card(project_dir), project)
    extra.unlink()
    (project_dir / "fixtures" / "tiny-ab" / "item-01.txt").unlink()
    with pytest.raises(SealError, match=r"fixtures/tiny-ab/item-01\.txt was sealed in v1 and is now missing"):
        seal.verify(_card(project_dir), project)


def test_new_version_seals_beside_the_old(project_dir: Path) -> None:
    project = Project(project_dir)
    seal.seal(_card(project_dir, "one-word-sentiment"), project)
    path = project_dir / "cards" / "one-word-sentiment.yaml"
    text = path.read_text().replace("temperature: 0}", "temperature: 0.5}").replace("version: 3\n", "version: 4\n", 1)
    text = text.replace("history:\n", "history:\n  - {version: 4, note: Sampled at temperature 0.5.}\n")
    path.write_text(text)
    new_path, _, written = seal.seal(_card(project_dir, "one-word-sentiment"), project)
    assert written and new_path.name == "v4.seal.json"
    assert (project_dir / "keys" / "one-word-sentiment" / "v3.seal.json").is_file()


def test_unsealed_card_is_refused(project_dir: Path) -> None:
    with pytest.raises(SealError) as info:
        seal.verify(_card(project_dir, "reordered-input"), Project(project_dir))
    assert str(info.value) == ("cards/reordered-input.yaml: v1 is not sealed; run `benchcard seal reordered-input` "
                               "first (or try it unsealed: `benchcard run reordered-input --scratch`, a trial never "
                               "entered in the ledger)")


def test_seal_names_files_as_the_project_sees_them(tmp_path: Path) -> None:
    """Keys through a linked folder or as links keep the names `Project.relative` gives (the real paths)."""
    project_dir = make_ab_project(tmp_path / "proj")
    real_keys = project_dir / "keys" / "real"
    real_keys.mkdir(parents=True)
    (project_dir / "keys" / "tiny-ab").symlink_to(real_keys)
    (real_keys / "item-01.json").write_text('{"a": 1}\n', encoding="utf-8")
    (project_dir / "spare.json").write_text('{"b": 2}\n', encoding="utf-8")
    (real_keys / "item-02.json").symlink_to(project_dir / "spare.json")
    (real_keys / "item-03.json").mkdir()  # a folder is not a key
    project = Project(project_dir)
    content = seal.compute(_card(project_dir), project)
    assert sorted(content.keys) == ["keys/real/item-01.json", "spare.json"]
    assert sorted(content.fixtures) == [f"fixtures/tiny-ab/item-0{i}.txt" for i in range(1, 5)]
    keys_dir = project.keys_dir("tiny-ab")
    expected = sorted(project.relative(keys_dir / f"item-0{i}.json") for i in (1, 2))
    assert sorted(content.keys) == expected


RULES = {"futility_level": 0.035, "decide_from": 3, "grid": {"points": 801, "sds": 9.0, "cap": 12.0},
         "default_spending": "hsd", "default_gamma": -6.0}


@pytest.mark.long
def test_a_sequential_card_is_sealed_with_its_rule_and_its_runs_follow_the_seal(
        tmp_path: Path, server: Any, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from benchcard.stats import sequential as seq

    from ..helpers_run import bc, only_run
    from ..helpers_sequential import futile, futile_ab

    server.configure(futile())
    project = futile_ab(tmp_path, server.base_url, min_effect=0.3)  # a design `check` need not search a change for
    path = tmp_path / "keys" / "colour-ab" / "v1.seal.json"
    sealed = json.loads(path.read_text())
    assert sealed["sequential"] == RULES
    monkeypatch.setattr(seq, "FUTILITY_BETAS", {**seq.FUTILITY_BETAS, "obrien-fleming": 0.001})  # a later default
    checked = bc(project, "check", "colour-ab")
    assert checked.exit_code == 0, checked.output
    assert ("; sealed with futility level 0.035, this benchcard uses 0.001: its runs follow the seal"
            in checked.output)
    ran = bc(project, "run", "colour-ab")
    assert ran.exit_code == 0, ran.output
    assert "stopped at look 2 of 3: futility" in ran.output  # at 0.001 look 2 would go on
    manifest = json.loads((only_run(project, "colour-ab") / "manifest.json").read_text())
    assert {k: manifest["sequential"][k] for k in RULES if not k.startswith("default_")} == \
        {k: v for k, v in RULES.items() if not k.startswith("default_")}
    planned = bc(project, "plan", "colour-ab", "--json")
    assert planned.exit_code == 0, planned.output
    edited = {**sealed, "sequential": {**RULES, "futility_level": 0.001}}  # the seal's rule edited by hand
    path.write_text(json.dumps(edited, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    broken = bc(project, "check", "colour-ab")
    assert broken.exit_code == 1 and "v1.seal.json: root does not match its contents" in broken.output


def test_a_sequential_card_sealed_before_its_rule_was_recorded_verifies_as_before(tmp_path: Path) -> None:
    from benchcard.card._sealfile import decode_seal, encode_seal

    from ..helpers_run import bc
    from ..helpers_sequential import sequential_ab

    project = sequential_ab(tmp_path)
    path = tmp_path / "keys" / "colour-ab" / "v1.seal.json"
    written = json.loads(path.read_text())
    # as the benchcard before it wrote the seal: its root over the rest (no slot or text rule: recorded since)
    for name in ("sequential", "slots", "unicode", "whitespace", "json_keys"):
        del written[name]
    body = {"card": "colour-ab", "version": 1, "protocol": written["protocol"], "fixtures": written["fixtures"],
            "keys": written["keys"]}
    written["root"] = digest(body)
    old = json.dumps(written, indent=2, sort_keys=True, ensure_ascii=False).encode() + b"\n"
    path.write_bytes(old)
    assert encode_seal(decode_seal(old, "v1.seal.json")) == old  # read and written back byte for byte
    card = _card(tmp_path, "colour-ab")
    assert seal.verify(card, Project(tmp_path)) == written["root"]
    assert seal.seal(card, Project(tmp_path))[2] is False and path.read_bytes() == old
    # its runs: the values every benchcard gave such a seal until 2026-12-06, not a later default
    assert seal.sequential_rules(card, Project(tmp_path)) == Rules(futility_level=0.035, decide_from=3,
                                                                   grid=LEGACY_GRID, default_spending="obrien-fleming")
    checked = bc(project, "check", "colour-ab")
    assert checked.exit_code == 0 and "its runs follow the seal" not in checked.output


def _as_sealed_before_the_default_spending(path: Path) -> bytes:
    """A seal rewritten as a benchcard before 2026-12-06 wrote it: its rules without the default spending, its root
    over them; the bytes written."""
    written = json.loads(path.read_text())
    for name in ("default_spending", "default_gamma"):
        del written["sequential"][name]
    for name in ("slots", "unicode", "whitespace", "json_keys"):  # recorded since 2026-12-07 and -08
        del written[name]
    body = {"card": written["card"], "version": written["version"], "protocol": written["protocol"],
            "fixtures": written["fixtures"], "keys": written["keys"], "sequential": written["sequential"]}
    written["root"] = digest(body)
    old = json.dumps(written, indent=2, sort_keys=True, ensure_ascii=False).encode() + b"\n"
    path.write_bytes(old)
    return old


def test_a_card_naming_no_spending_keeps_the_spending_its_seal_was_written_under(
        tmp_path: Path, server: Any, key: str) -> None:
    """A card that names no spending spends this benchcard's default when sealed now, and obrien-fleming (the
    default until 2026-12-06) when its seal was written before: check, plan, run and verdict follow the seal."""
    from benchcard.card._defaults import DEFAULT_SPENDING

    from ..helpers_run import bc, only_run
    from ..helpers_sequential import clear_win, sequential_ab

    server.configure(clear_win())
    new = sequential_ab(tmp_path / "new", server.base_url, block="sequential: {looks: 3, futility: true}\n")
    spends = f"α spent {DEFAULT_SPENDING[0]} (γ = {DEFAULT_SPENDING[1]:g}) (the default)"
    assert spends in bc(new, "check", "colour-ab").output
    project = sequential_ab(tmp_path / "old", server.base_url, block="sequential: {looks: 3, futility: true}\n")
    path = project.root / "keys" / "colour-ab" / "v1.seal.json"
    old = _as_sealed_before_the_default_spending(path)
    checked = bc(project, "check", "colour-ab")
    assert checked.exit_code == 0, checked.output
    assert "α spent obrien-fleming (the default); may stop for futility; sealed with α spent obrien-fleming, " \
           f"this benchcard uses {DEFAULT_SPENDING[0]} (γ = {DEFAULT_SPENDING[1]:g}): its runs follow the seal" \
           in checked.output
    planned = bc(project, "plan", "colour-ab", "--json")
    assert planned.exit_code == 0, planned.output
    assert json.loads(planned.output)["sequential"]["spending"] == "obrien-fleming"
    ran = bc(project, "run", "colour-ab")
    assert ran.exit_code == 0 and "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)" in ran.output
    manifest = json.loads((only_run(project, "colour-ab") / "manifest.json").read_text())
    assert manifest["sequential"]["spending"] == "obrien-fleming" and "gamma" not in manifest["sequential"]
    assert bc(project, "verdict", only_run(project, "colour-ab").name).exit_code == 0
    card = project.root / "cards" / "colour-ab.yaml"  # the spending it meant, written out: the same protocol
    card.write_text(card.read_text().replace("{looks: 3,", "{looks: 3, spending: obrien-fleming,"))
    assert "v1 sealed sha256:" in bc(project, "check", "colour-ab").output
    card.write_text(card.read_text().replace("spending: obrien-fleming,",
                                             f"spending: {DEFAULT_SPENDING[0]}, gamma: {DEFAULT_SPENDING[1]:g},"))
    broken = bc(project, "check", "colour-ab")  # today's default written out is another rule for this seal
    assert broken.exit_code == 1 and "(field 'sequential') changed after sealing v1" in broken.output
    assert path.read_bytes() == old


@pytest.mark.usefixtures("key")
def test_a_seal_file_removed_and_written_again_over_changed_content_is_caught_by_the_versions_runs(
        tmp_path: Path, server: FakeServer) -> None:
    """Hostile audit: with v1's seal file deleted, `seal` wrote a new one over an edited prompt (it had nothing
    to compare with), and `check`, `run` and `ledger --verify` took it: v1's judged run then stood under a prompt
    it was never sent. A sealed run records the root it verified, so both `seal` and the seal's checks see it."""
    from ..helpers_replicate import judged_ab
    from ..helpers_run import bc

    project, run = judged_ab(tmp_path / "p", server)
    path = project.seal_path("colour-ab", 1)
    old_root = json.loads(path.read_text(encoding="utf-8"))["root"]
    sealed = path.read_bytes()
    path.unlink()
    missing = bc(project, "check", "colour-ab")
    assert missing.exit_code == 1 and (f"keys/colour-ab/v1.seal.json: missing, but results/colour-ab/v1/{run} was "
                                       f"run on v1 sealed with root {old_root}") in missing.output, missing.output
    card = project.card_path("colour-ab")
    card.write_text(card.read_text(encoding="utf-8").replace("Name the colour.", "Name the colour now."),
                    encoding="utf-8")
    refused = bc(project, "seal", "colour-ab")
    assert refused.exit_code == 1 and not path.exists(), refused.output
    assert refused.stderr == (
        f"error: cards/colour-ab.yaml: v1 has no seal file, but results/colour-ab/v1/{run} was run on v1 sealed "
        f"with root {old_root}, and the card now seals to {seal.compute(load_card(card, project), project).root}: "
        "v1's sealed content changed (its seal file was removed); put the seal file back and undo the change, or "
        "make a new version: raise `version` and add a history note\n")
    elsewhere = Project(tmp_path / "copy")  # the seal written where the version has no runs, copied in by hand
    for folder in ("cards", "fixtures"):
        shutil.copytree(project.root / folder, elsewhere.root / folder)
    seal.seal(load_card(elsewhere.card_path("colour-ab"), elsewhere), elsewhere)
    shutil.copyfile(elsewhere.seal_path("colour-ab", 1), path)
    for args in (["check", "colour-ab"], ["run", "colour-ab"]):
        said = " ".join(bc(project, *args).output.split())
        assert "keys/colour-ab/v1.seal.json: root sha256:" in said, (args, said)
        assert (f"but results/colour-ab/v1/{run} was run on v1 sealed with root {old_root}: the seal file was "
                "replaced after runs were made") in said, (args, said)
    assert len(list(project.results_dir.glob("colour-ab/v1/*"))) == 1  # the run refused before any folder
    path.write_bytes(sealed)  # the seal put back, the prompt undone: all is as it was
    card.write_text(card.read_text(encoding="utf-8").replace("Name the colour now.", "Name the colour."),
                    encoding="utf-8")
    assert bc(project, "check", "colour-ab").exit_code == 0
    path.unlink()  # a seal file lost with the content unchanged is written again, as it was
    assert bc(project, "seal", "colour-ab").exit_code == 0
    assert json.loads(path.read_text(encoding="utf-8"))["root"] == old_root


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["fixtures"].update({"fixtures/tiny-ab/item-01.txt": "sha256:" + "1" * 64}),
     "fixtures.fixtures/tiny-ab/item-01.txt"),
    (lambda d: d.update(protocol="sha256:" + "2" * 64), "protocol"),
    (lambda d: d["protocol_fields"].update(prompt="sha256:" + "3" * 64), "protocol_fields.prompt"),
])
def test_a_digest_edited_in_the_seal_file_is_named_though_its_root_still_matches(tmp_path: Path, edit: Any,
                                                                                 field: str) -> None:
    """Hostile audit: a seal file whose listed digest was changed by hand (its root left as it was) passed
    `check`, which compared the root alone: the published seal then listed a digest the fixture never had."""
    from ..helpers_cli import exit_and_streams

    root = make_ab_project(tmp_path)
    project = Project(root)
    path, _, _ = seal.seal(load_card(project.card_path("tiny-ab"), project), project)
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    code, out, _ = exit_and_streams(root, "check", "tiny-ab")
    assert code == 1, out
    assert (f"keys/tiny-ab/v1.seal.json: {field} is sha256:" in out
            and "while the file's root still matches: the seal file was edited by hand" in " ".join(out.split())), out


def test_two_seals_at_once_never_replace_each_others_seal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two `benchcard seal` at once, the card edited between them: both found no seal file and the later one
    replaced the first's, so the version was sealed twice with different content, silently (the first may
    already have been run on). The second now finds the first's seal when it writes, and compares."""
    project_dir = make_ab_project(tmp_path)
    card_path = project_dir / "cards" / "tiny-ab.yaml"
    first = seal.seal(_card(project_dir), Project(project_dir))[0]
    sealed_first = first.read_bytes()
    first.unlink()
    card_path.write_text(card_path.read_text().replace("Name the colour.", "Name the colour, one word."))
    other_process = seal.run_on_another_root

    def meanwhile(*args: Any) -> Any:  # the other `seal` writes its file after this one looked for a seal
        first.write_bytes(sealed_first)
        return other_process(*args)

    monkeypatch.setattr(seal, "run_on_another_root", meanwhile)
    result = bc(project_dir, "seal", "tiny-ab")
    assert result.exit_code == 1
    assert "v1 is already sealed and its content differs" in result.stderr
    assert first.read_bytes() == sealed_first


@pytest.mark.parametrize("stray", ["vbackup.seal.json", "v1_0.seal.json", "v\u0663.seal.json", "v01.seal.json"])
def test_a_file_in_keys_not_named_as_seal_names_one_is_no_seal(tmp_path: Path, stray: str) -> None:
    """Hostile audit 11 (int() on text from outside): `vbackup.seal.json` beside the seals made seal and check end
    in a traceback, and `v1_0.seal.json` (or an Arabic-Indic three) read as a sealed v10 (v3), so sealing v1
    was refused as going down; only `v<N>.seal.json` in ASCII digits is a seal."""
    root = make_ab_project(tmp_path / "proj")
    (root / "keys" / "tiny-ab").mkdir(parents=True, exist_ok=True)
    (root / "keys" / "tiny-ab" / stray).write_text("{}", encoding="utf-8")
    sealed = bc(root, "seal", "tiny-ab")
    assert sealed.exit_code == 0, (sealed.output, sealed.exception)
    assert (root / "keys" / "tiny-ab" / "v1.seal.json").is_file()
    checked = bc(root, "check", "tiny-ab")
    assert checked.exit_code == 0 and "1 card(s) ok, 0 failed" in checked.stdout, (checked.output, checked.exception)


@pytest.mark.parametrize(("sealed", "now", "said"), [
    (b"a ripe tomato\nnumber 2\n", b"a ripe tomato\r\nnumber 2\r\n", "LF when sealed, CRLF now"),
    (b"a ripe tomato\r\nnumber 2\r\n", b"a ripe tomato\nnumber 2\n", "CRLF when sealed, LF now"),
])
def test_a_fixture_whose_line_endings_git_changed_is_named_as_such(tmp_path: Path, sealed: bytes, now: bytes,
                                                                   said: str) -> None:
    """Git for Windows checks text out with CRLF (core.autocrlf), so every sealed fixture and key of a clone there
    read as 'changed after sealing', as if someone had edited them. The bytes are what was sent and stay the
    seal's; the message says that only the line endings differ, and where they come from."""
    project_dir = make_ab_project(tmp_path)
    fixture = project_dir / "fixtures" / "tiny-ab" / "item-02.txt"
    fixture.write_bytes(sealed)
    seal.seal(_card(project_dir), Project(project_dir))
    fixture.write_bytes(now)
    result = bc(project_dir, "check", "tiny-ab", "--no-rig")
    assert result.exit_code == 1
    assert (f"fixtures/tiny-ab/item-02.txt changed after sealing v1: sealed {digest(sealed)}, now {digest(now)} "
            f"(only its line endings: {said}, as git converts them in a checkout with core.autocrlf, the default "
            "of Git for Windows; `* -text` in .gitattributes, which `benchcard init` writes, keeps the bytes as "
            "sealed); a sealed version never changes") in result.output, result.output
    fixture.write_bytes(b"a green tomato\r\n")
    assert "only its line endings" not in bc(project_dir, "check", "tiny-ab", "--no-rig").output


def test_a_seal_file_with_a_folder_in_its_place_is_said_so_by_check_seal_and_run(tmp_path: Path) -> None:
    """Hostile audit (hostile21): keys/<id>/v1.seal.json made a folder was `missing` to check and `not sealed` to
    run, and `seal` ended in `…/v1.seal.json: File exists (from …/.v1.seal.json.<pid>-<hex>.tmp)`. Each says in one
    line what stands there."""
    root = make_ab_project(tmp_path / "proj")
    assert bc(root, "seal", "tiny-ab").exit_code == 0
    path = root / "keys" / "tiny-ab" / "v1.seal.json"
    path.unlink()
    path.mkdir()
    said = ("keys/tiny-ab/v1.seal.json: not a regular file (a folder), where benchcard keeps one; move it aside and "
            "put the file back")
    for args in (("seal", "tiny-ab"), ("run", "tiny-ab", "--provider", "local")):
        result = bc(root, *args)
        assert (result.exit_code, result.stderr) == (1, f"error: {said}\n"), args
    check = bc(root, "check", "--no-rig", "tiny-ab")
    assert check.exit_code == 1 and f"error: {said}" in check.output, check.output


def test_a_keys_folder_that_may_be_entered_but_not_listed_is_named_as_the_project_names_it(tmp_path: Path) -> None:
    """Small audit (small21): `chmod 311 keys/<card>` made `seal` say '/abs/…/keys/bench-01: Permission denied'
    (its listing), and `check`, whose glob of stray keys saw an empty folder, said the card was ok."""
    root = copy_project(tmp_path / "proj", ("bench-01",))
    (root / "keys" / "bench-01").chmod(0o311)
    try:
        checked, sealed = as_a_user_each(*(("-C", str(root), command, "bench-01") for command in ("check", "seal")))
    finally:
        (root / "keys" / "bench-01").chmod(0o755)
    said = ("keys/bench-01: cannot list its files: Permission denied; expected a folder benchcard may list: chmod u+r "
            "keys/bench-01")
    assert (checked.returncode, sealed.returncode) == (1, 1)
    assert checked.stdout.splitlines()[-2:] == [f"  error: {said}", "0 card(s) ok, 1 failed"]
    assert sealed.stderr == f"error: refusing to seal: {said}\n"
    assert not (root / "keys" / "bench-01" / "v1.seal.json").exists()
