"""The fixtures glob and the files behind it, as a careless user leaves them: one line each, never a hang."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from benchcard.card.load import load_card
from benchcard.card.reader import read_card
from benchcard.card.seal import seal
from benchcard.errors import CardError
from benchcard.project import Project

from ..helpers_cli import bc, one_line_error
from ..helpers_project import AB_CARD, make_ab_project
from ..helpers_run import copy_repo_card


def test_two_files_with_one_fixture_id_are_refused(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    (root / "fixtures" / "tiny-ab" / "item-01.md").write_text("another item one\n", encoding="utf-8")
    (root / "cards" / "tiny-ab.yaml").write_text(AB_CARD.replace("fixtures/tiny-ab/*.txt", "fixtures/tiny-ab/*"),
                                                 encoding="utf-8")
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert "item-01" in line and "item-01.md" in line and "item-01.txt" in line


def test_two_fixture_files_whose_names_differ_only_by_case_are_refused(tmp_path: Path) -> None:
    """item-01.txt and ITEM-01.txt are two fixtures here and one file on macOS and Windows: a clone there keeps
    one of them (and one key), and the card's seal then names a fixture changed that nobody changed."""
    root = make_ab_project(tmp_path / "proj")
    (root / "fixtures" / "tiny-ab" / "ITEM-01.txt").write_text("another item one\n", encoding="utf-8")
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert line == ("error: cards/tiny-ab.yaml: field 'fixtures': the fixture ids 'ITEM-01' and 'item-01' differ "
                    "only by case: on macOS and Windows their files (fixtures/tiny-ab/ITEM-01.txt and "
                    "fixtures/tiny-ab/item-01.txt) are one file; rename one")
    assert not (root / "keys" / "tiny-ab" / "v1.seal.json").exists()


@pytest.mark.parametrize(("name", "why"), [
    ("CON.txt", "is a device name on Windows"), ("nul.txt", "is a device name on Windows"),
    ("Com1.txt", "is a device name on Windows"), ("lpt1.draft.txt", "is a device name on Windows"),
    ("AUX .txt", "is a device name on Windows"), ("item:02.txt", "holds ':', which Windows does not allow"),
    ("what?.txt", "holds '?', which Windows does not allow"),
])
def test_a_fixture_file_windows_cannot_hold_is_refused(tmp_path: Path, name: str, why: str) -> None:
    """Hostile audit 11: a card sealed on Linux with fixtures/tiny-ab/CON.txt (or item:02.txt) cannot be checked
    out on Windows, so nobody there can check its seal; refused at seal and check, in one line."""
    root = make_ab_project(tmp_path / "proj")
    (root / "fixtures" / "tiny-ab" / name).write_text("another item\n", encoding="utf-8")
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert line.startswith(f"error: cards/tiny-ab.yaml: field 'fixtures': fixtures/tiny-ab/{name}: the name "
                           f"{name!r} {why}"), line
    assert line.endswith("so a clone of the project there cannot hold the file; rename it")
    assert not (root / "keys" / "tiny-ab" / "v1.seal.json").exists()
    checked = bc(root, "check", "tiny-ab")
    assert checked.exit_code == 1 and f"  {line}\n" in checked.stdout


def test_the_same_name_in_two_folders_is_refused(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    other = root / "fixtures" / "more"
    other.mkdir()
    (other / "item-02.txt").write_text("a second item two\n", encoding="utf-8")
    (root / "cards" / "tiny-ab.yaml").write_text(AB_CARD.replace("fixtures/tiny-ab/*.txt", "fixtures/*/*.txt"),
                                                 encoding="utf-8")
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert "fixture id 'item-02'" in line and "fixtures/more/item-02.txt" in line


def test_a_fifo_named_like_a_fixture_does_not_hang_check(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    os.mkfifo(root / "fixtures" / "tiny-ab" / "item-09.txt")
    result = bc(root, "check")
    assert result.exit_code == 1
    assert "fixtures/tiny-ab/item-09.txt, which is not a regular file" in result.output
    assert "Traceback" not in result.output


def test_a_fifo_named_like_a_card_does_not_hang_check(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    os.mkfifo(root / "cards" / "pipe.yaml")
    result = bc(root, "check")
    assert result.exit_code == 1
    assert "cards/pipe.yaml: not a regular file (a FIFO)" in result.output


def test_a_glob_matching_a_folder_is_one_line(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    (root / "fixtures" / "tiny-ab" / "nested").mkdir()
    (root / "cards" / "tiny-ab.yaml").write_text(AB_CARD.replace("fixtures/tiny-ab/*.txt", "fixtures/tiny-ab/*"),
                                                 encoding="utf-8")
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert "fixtures/tiny-ab/nested" in line and "not a regular file" in line


def test_a_fixture_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    (root / "fixtures" / "tiny-ab" / "item-03.txt").write_bytes(b"a ripe \xe9tomato\n")
    line = one_line_error(bc(root, "curl", "tiny-ab", "--fixture", "item-03"))
    assert "item-03.txt:1: not UTF-8 text" in line
    # named from the project as every other error names a file (hostile21: it was the absolute path)
    (root / "fixtures" / "tiny-ab" / "item-03.txt").write_bytes("a ripe tomato\n".encode("utf-16"))
    assert one_line_error(bc(root, "curl", "tiny-ab", "--fixture", "item-03")) == (
        "error: fixtures/tiny-ab/item-03.txt:1: not UTF-8 text (byte 0xff at offset 0) (it starts with UTF-16's "
        "byte-order mark); save the file as UTF-8")


@pytest.mark.parametrize("content", [b'{"fixture": "\xff"}', b"[" * 200_000 + b"]" * 200_000,
                                     b'{"a": ' * 200_000 + b"1" + b"}" * 200_000])
def test_a_broken_answer_key_is_one_line(tmp_path: Path, content: bytes) -> None:
    copy_repo_card(tmp_path, "bench-01")
    key = sorted((tmp_path / "keys" / "bench-01").glob("*.json"))[0]
    key.write_bytes(content)
    result = bc(tmp_path, "check", "bench-01")
    assert result.exit_code == 1
    assert "Traceback" not in result.output and result.exception is not None
    errors = [line for line in result.output.splitlines() if key.name in line]
    assert errors and ("not UTF-8" in errors[0] or "nested too deeply" in errors[0]), result.output


def test_an_output_nested_past_the_stack_is_scored_not_a_crash(tmp_path: Path) -> None:
    """A model's answer of 200,000 nested brackets is a wrong answer for the fields scorer, not a traceback."""
    copy_repo_card(tmp_path, "bench-01")
    card = tmp_path / "cards" / "bench-01.yaml"
    deep = '{"a": ' * 100_000 + '1' + '}' * 100_000
    card.write_text(card.read_text(encoding="utf-8").replace(
        "examples:\n", f"examples:\n  - {{label: Nested, fixture: excerpt-01, output: '{deep}', expect: fail}}\n", 1),
        encoding="utf-8")
    result = bc(tmp_path, "check", "bench-01")
    assert "Traceback" not in result.output and not isinstance(result.exception, RecursionError)
    assert "ok   0.00 expect fail    Nested" in result.output, result.output[-2000:]


def _fixtures_resolving_each(project: Project, pattern: str) -> dict[str, Path] | str:
    """The fixture rule as it was first written: every match resolved and checked on its own."""
    import glob

    try:
        project.inside(pattern.split("*")[0] or ".", source="s", field="fixtures")
        out = {}
        for m in sorted(glob.glob(str(project.root / pattern))):
            path = project.inside(str(Path(m).relative_to(project.root)), source="s", field="fixtures")
            if not path.is_file():
                return "not a file"
            if path.stem in out:
                return "duplicate id"
            out[path.stem] = path
        return out
    except CardError:
        return "refused"


@pytest.mark.parametrize("pattern", [
    "fixtures/tiny-ab/*.txt", "fixtures/*/*.txt", "fixtures/*/item-0?.txt", "fixtures/t[i]ny-ab/*.txt",
    "fixtures/tiny-ab/item-01.txt", "fixtures/links/*.txt", "fixtures/dirlink/*.txt", "fixtures/*/../../../*/*",
    "fixtures/*/.", "fixtures/*/", "fixtures/dirlink/../*/*.txt", "./fixtures//tiny-ab/*.txt", "*/*/*.txt",
    "fixtures/outdir/*.txt",
])
def test_fixture_glob_resolves_as_every_path_checked_alone(tmp_path: Path, pattern: str) -> None:
    """Checking the glob's folder once and each match for links gives what resolving each match gives."""
    root = make_ab_project(tmp_path / "proj")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    links = root / "fixtures" / "links"
    links.mkdir()
    (links / "inside.txt").symlink_to(root / "fixtures" / "tiny-ab" / "item-02.txt")
    (links / "plain.txt").write_text("plain\n", encoding="utf-8")
    (root / "fixtures" / "dirlink").symlink_to(root / "fixtures" / "tiny-ab")
    (root / "fixtures" / "outdir").symlink_to(outside)
    (links / "escape.txt").symlink_to(outside / "secret.txt")
    project = Project(root)
    expected = _fixtures_resolving_each(project, pattern)
    card = root / "cards" / "tiny-ab.yaml"
    card.write_text(AB_CARD.replace("fixtures/tiny-ab/*.txt", f"'{pattern}'"), encoding="utf-8")
    try:
        got: dict[str, Path] | str = dict(load_card(card, project).fixtures)
    except CardError as exc:
        assert "field 'fixtures'" in str(exc)
        got = ("refused" if "leaves the project" in str(exc) or "must be relative" in str(exc)
               else "duplicate id" if "two files have the fixture id" in str(exc)
               else "not a file" if "not a regular file" in str(exc) else {})
    assert got == expected
    if isinstance(got, dict):
        assert all(outside not in p.parents for p in got.values())


@pytest.mark.parametrize("how", ["file", "folder"])
def test_an_answer_key_that_is_a_link_out_of_the_project_is_refused(tmp_path: Path, how: str) -> None:
    """A fixture that leaves the project is refused; a key file linked to a file outside (or a keys folder that is
    such a link) was read, sealed and scored as the card's own by `check` and `seal` (hostile audit, round 20)."""
    root = tmp_path / "proj"
    copy_repo_card(root, "bench-01")
    keys = root / "keys" / "bench-01"
    outside = tmp_path / "elsewhere"
    if how == "file":
        outside.mkdir()
        (keys / "excerpt-03.json").rename(outside / "excerpt-03.json")
        (keys / "excerpt-03.json").symlink_to(outside / "excerpt-03.json")
        first = "excerpt-03"
    else:
        keys.rename(outside)
        keys.symlink_to(outside)
        first = "excerpt-01"
    said = (f"keys/bench-01/{first}.json: leaves the project (a link to {outside / f'{first}.json'}); an answer key "
            "is a file of the project's own, as a fixture is: copy it in")
    assert one_line_error(bc(root, "seal", "bench-01")) == f"error: refusing to seal: {said}"
    checked = bc(root, "check", "bench-01")
    assert checked.exit_code == 1 and f"error: {said}" in checked.output
    assert not list(outside.glob("*.seal.json"))


def test_an_answer_key_that_is_a_link_in_a_loop_is_one_line_naming_it(tmp_path: Path) -> None:
    """Review21b: a key linked to itself ended `check`, `seal` and every command that loads the card in a
    RuntimeError traceback (`Path.resolve` on a loop, since load_card looks for keys leaving the project); the
    key's reader names it."""
    root = tmp_path / "proj"
    copy_repo_card(root, "bench-01")
    key = root / "keys" / "bench-01" / "excerpt-03.json"
    key.unlink()
    key.symlink_to(key)
    said = "keys/bench-01/excerpt-03.json: cannot read: Too many levels of symbolic links"
    assert one_line_error(bc(root, "seal", "bench-01")) == f"error: refusing to seal: {said}"
    checked = bc(root, "check", "bench-01")
    assert checked.exit_code == 1 and f"  error: {said}\n" in checked.stdout, checked.output


@pytest.mark.parametrize(("target", "why"), [("excerpt-01.txt", "Too many levels of symbolic links"),
                                             ("nowhere.txt", "No such file or directory")])
def test_a_fixture_that_is_a_link_in_a_loop_or_to_nothing_is_one_line_naming_it(tmp_path: Path, target: str,
                                                                                why: str) -> None:
    """Review21b: a fixture linked to itself ended `check` and `seal` in a RuntimeError traceback (`Path.resolve`
    on a loop), and one linked to nothing said '/abs/…/excerpt-01.txt: No such file or directory'."""
    root = tmp_path / "proj"
    copy_repo_card(root, "bench-01")
    fixture = root / "fixtures" / "bench-01" / "excerpt-01.txt"
    fixture.unlink()
    fixture.symlink_to(target)
    said = (f"cards/bench-01.yaml: field 'fixtures': the glob matches fixtures/bench-01/excerpt-01.txt, which cannot "
            f"be read ({why})")
    assert one_line_error(bc(root, "seal", "bench-01")) == f"error: {said}"
    checked = bc(root, "check", "bench-01")
    assert checked.exit_code == 1 and f"  error: {said}\n" in checked.stdout, checked.output


def _linked_key_run(tmp_path: Path) -> tuple[Project, Path, Path, str]:
    """A BENCH-01 run whose version was sealed, as benchcard sealed it before the key-link check, with one answer
    key a link to a file outside the project: the project, the run, the key's target and the link's line."""
    from ..helpers_project import copy_project
    from ..helpers_site import write_bench_run

    copy_project(tmp_path / "proj")
    project = Project((tmp_path / "proj").resolve())
    keys, outside = project.keys_dir("bench-01"), tmp_path / "elsewhere"
    outside.mkdir()
    (keys / "excerpt-03.json").rename(outside / "excerpt-03.json")
    (keys / "excerpt-03.json").symlink_to(outside / "excerpt-03.json")
    run_dir = write_bench_run(project, verdict=False)  # seals v1 through `seal.seal`, which reads no key
    said = (f"keys/bench-01/excerpt-03.json: leaves the project (a link to {outside / 'excerpt-03.json'}); an answer "
            "key is a file of the project's own, as a fixture is: copy it in")
    return project, run_dir, outside / "excerpt-03.json", said


def test_a_version_sealed_with_a_key_linked_out_of_the_project_still_reads_with_one_warning(tmp_path: Path) -> None:
    """The key-link check came after cards were sealed: a version sealed with such a link failed `check` (its
    examples too, as keyless) and could not score its run again. While its seal holds (the seal hashes the linked
    file) it reads, and `check` warns in one line; `seal` keeps the version's seal as it is."""
    from benchcard.run.runner import score_blind

    project, run_dir, _, said = _linked_key_run(tmp_path)
    card = load_card(project.card_path("bench-01"), project)
    assert card.later_checks == (said,)
    checked = bc(project.root, "check", "bench-01")
    assert checked.exit_code == 0, checked.output
    warnings = [line for line in checked.stdout.splitlines() if "excerpt-03" in line]
    assert warnings == [f"  warning: {said} (v1 was sealed before this check and is read as sealed; fix it in v2)"]
    again = tmp_path / "again.jsonl"
    assert score_blind(run_dir / "outputs.jsonl", again, card, project) == 120  # the run scored again, key and all
    rows = [json.loads(line) for line in again.read_text(encoding="utf-8").splitlines()]
    assert {"field_recall", "unsupported_values"} <= set(next(r for r in rows if r["fixture"] == "excerpt-03"
                                                              and r["status"] == "ok")["metrics"])
    assert bc(project.root, "seal", "bench-01").exit_code == 0  # "already sealed, unchanged"


def test_sealing_anew_or_a_seal_that_no_longer_holds_refuses_a_key_linked_out_of_the_project(tmp_path: Path) -> None:
    project, _, target, said = _linked_key_run(tmp_path)
    path = project.card_path("bench-01")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("version: 1\n", "version: 2\n").replace(
        "history:\n", "history:\n  - {version: 2, note: Another prompt.}\n"), encoding="utf-8")
    assert one_line_error(bc(project.root, "seal", "bench-01")) == f"error: refusing to seal: {said}"
    assert not project.seal_path("bench-01", 2).exists()
    path.write_text(text, encoding="utf-8")
    target.write_bytes(target.read_bytes() + b"\n")
    checked = bc(project.root, "check", "bench-01")  # the linked file changed: the seal no longer holds
    assert checked.exit_code == 1 and f"  error: {said}\n" in checked.stdout


# ----------------------------------------------- names a clone elsewhere, or the card's keys folder, cannot hold


def _keyed_project(root: Path, extra: str) -> Path:
    """A card that reads a key per fixture (exact with expected_from_key), its fixtures and keys, and one more
    fixture (and its key) named `extra`."""
    card = re.sub(r"scoring:\n.*?\nwin:", "scoring: {method: exact, expected_from_key: label}\nwin:", AB_CARD,
                  flags=re.S).replace("    - {metric: rule.says_red, test: not_falls, margin: 0.2}\n", "").replace(
        "expect: pass}", "expect: pass, fixture: item-01}").replace("expect: fail}", "expect: fail, fixture: item-01}")
    make_ab_project(root, card)
    keys = root / "keys" / "tiny-ab"
    keys.mkdir(parents=True)
    for path in (root / "fixtures" / "tiny-ab").glob("*.txt"):
        (keys / f"{path.stem}.json").write_text(json.dumps({"fixture": path.stem, "label": "red"}), encoding="utf-8")
    (root / "fixtures" / "tiny-ab" / f"{extra}.txt").write_text("one more tomato\n", encoding="utf-8")
    (keys / f"{extra}.json").write_text(json.dumps({"fixture": extra, "label": "red"}), encoding="utf-8")
    return root


@pytest.mark.parametrize("extra", ["v1.seal", "V2.Seal", "v12.SEAL"])
def test_a_fixture_whose_key_is_named_as_a_seal_is_refused(tmp_path: Path, extra: str) -> None:
    """A fixture v1.seal.txt has its key at keys/tiny-ab/v1.seal.json, the seal of v1 (V2.Seal.json is v2's on
    macOS and Windows): `seal` read the key as the card's seal ('not a seal: Object missing required field
    `card`') and could never seal the card; an id v<N>.seal in any case is refused, in one line naming the file."""
    root = _keyed_project(tmp_path / "proj", extra)
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert line == (f"error: cards/tiny-ab.yaml: field 'fixtures': fixtures/tiny-ab/{extra}.txt: the fixture id "
                    f"'{extra}' is named as a version's seal, so its answer key keys/tiny-ab/{extra}.json is named "
                    "as the card's seals are (keys/tiny-ab/v<N>.seal.json) and may be one of them; rename the file")
    assert json.loads((root / "keys" / "tiny-ab" / f"{extra}.json").read_text(encoding="utf-8"))["label"] == "red"
    checked = bc(root, "check", "tiny-ab")
    assert checked.exit_code == 1 and f"  {line}\n" in checked.stdout


@pytest.mark.parametrize("extra", ["harbor.seal", "Elephant.Seal", "v1.sealed", "draft.v1.seal"])
def test_a_fixture_id_ending_in_seal_named_as_no_seal_is_sealed(tmp_path: Path, extra: str) -> None:
    """review22: every id ending in '.seal' was refused since fbcd3c8 ('harbor.seal' ends in '.seal'), though only
    v<N>.seal's key is named as a seal is: harbor.seal.json is a key as any other, sealed under the fixture's name,
    so such a card seals, its key covered by the seal."""
    root = _keyed_project(tmp_path / "proj", extra)
    sealed = bc(root, "seal", "tiny-ab")
    assert sealed.exit_code == 0, sealed.output
    seal_file = json.loads((root / "keys" / "tiny-ab" / "v1.seal.json").read_text(encoding="utf-8"))
    assert f"keys/tiny-ab/{extra}.json" in seal_file["keys"], seal_file["keys"]
    checked = bc(root, "check", "tiny-ab")
    assert checked.exit_code == 0 and "seal'" not in checked.stdout, checked.stdout


@pytest.mark.parametrize(("name", "said"), [
    ("a" * 124 + ".txt", "is 128 bytes long"),  # not refused: the most a name may be
    ("a" * 125 + ".txt", "the name '" + "a" * 125 + ".txt' is 129 bytes long (UTF-8); expected at most 128 (128 "
                         "ASCII letters), so a clone elsewhere may not hold it or its key; rename it"),
    ("é" * 63 + ".txt", "the name '" + "é" * 63 + ".txt' is 130 bytes long (UTF-8); expected at most 128 (128 ASCII "
                        "letters, fewer letters beyond ASCII), so a clone elsewhere may not hold it or its key; "
                        "rename it"),
])
def test_a_fixture_name_too_long_for_a_clone_elsewhere_is_refused(tmp_path: Path, name: str, said: str) -> None:
    """A fixture file of 251 bytes was checked as 'keys/…/<its name>.json: cannot read: File name too long', a key
    no file system can hold, and one of 200 made paths (keys/<card>/<fixture>.json, the file in a folder or two)
    past Windows' 260 in a clone: the name is held to 128 bytes, as a data file's ids are."""
    root = make_ab_project(tmp_path / "proj")
    (root / "fixtures" / "tiny-ab" / name).write_text("one more tomato\n", encoding="utf-8")
    sealed = bc(root, "seal", "tiny-ab")
    if said == "is 128 bytes long":
        assert sealed.exit_code == 0, sealed.output
        return
    assert one_line_error(sealed) == f"error: cards/tiny-ab.yaml: field 'fixtures': fixtures/tiny-ab/{name}: {said}"


def test_a_fixture_path_too_long_for_a_windows_clone_is_refused(tmp_path: Path) -> None:
    """Each folder and name short, the path long: fixtures/<folders>/item.txt of 204 characters is a file Git for
    Windows cannot check out (260 in all, the clone's own folder among them, where long paths are off)."""
    deep = "/".join(["d" * 48] * 4)
    root = make_ab_project(tmp_path / "proj", AB_CARD.replace("fixtures/tiny-ab/*.txt", f"fixtures/{deep}/*.txt"))
    (root / "fixtures" / deep).mkdir(parents=True)
    (root / "fixtures" / deep / "item-1.txt").write_text("one more tomato\n", encoding="utf-8")
    (root / "fixtures" / deep / "item-2.txt").write_text("one more tomato\n", encoding="utf-8")
    path = f"fixtures/{deep}/item-1.txt"
    assert one_line_error(bc(root, "seal", "tiny-ab")) == (
        f"error: cards/tiny-ab.yaml: field 'fixtures': {path}: the path {path} is 215 characters long; expected at "
        "most 200, so that a clone's own folder on Windows keeps room within its 260 (long paths are off by "
        "default); shorten the fixture's name or its folders")


def test_a_version_sealed_with_such_a_name_still_reads_and_check_warns(tmp_path: Path) -> None:
    """A project sealed before these checks (2026-12-07) keeps its verdicts, resume and pages: the version reads
    while its seal holds, and `check` warns; a version not sealed yet is refused."""
    root = _keyed_project(tmp_path / "proj", "V7.Seal")
    project = Project(root)
    path = project.card_path("tiny-ab")
    seal(read_card(path.read_text(encoding="utf-8"), "cards/tiny-ab.yaml", project, path), project)
    checked = bc(root, "check", "tiny-ab")
    assert checked.exit_code == 0, checked.output
    assert ("  warning: cards/tiny-ab.yaml: field 'fixtures': fixtures/tiny-ab/V7.Seal.txt: the fixture id "
            "'V7.Seal' is named as a version's seal") in checked.stdout
    assert "(v1 was sealed before this check and is read as sealed; fix it in v2)" in checked.stdout
    assert "V7.Seal" in load_card(path, project).fixtures


@pytest.mark.parametrize("glob", ["Fixtures/tiny-ab/*.txt", "fixtures/Tiny-AB/item-*.txt"])
def test_a_glob_written_with_a_folder_in_another_case_names_the_folder(tmp_path: Path, glob: str) -> None:
    """Hostile audit (hostile22): a card written on macOS or Windows as `fixtures: Fixtures/tiny-ab/*.txt` is
    checked and sealed there (their disks open fixtures/ for Fixtures/), and a clone on Linux said only "the glob
    matches no file". The line names the folder as written and as it is on disk, and why it worked elsewhere."""
    root = make_ab_project(tmp_path / "proj", AB_CARD.replace("fixtures/tiny-ab/*.txt", glob))
    written, on_disk = ("Fixtures", "fixtures") if glob.startswith("F") else ("Tiny-AB", "tiny-ab")
    assert one_line_error(bc(root, "seal", "tiny-ab")) == (
        f"error: cards/tiny-ab.yaml: field 'fixtures': {glob}: the name '{written}' is '{on_disk}' on disk, which is "
        "opened for it on macOS and Windows and not on Linux, so a clone there finds no fixture; write it as it is "
        "on disk")


def test_fixture_ids_one_file_on_macos_alone_or_on_no_disk_are_told_apart(tmp_path: Path) -> None:
    """`é` as one letter and as `e` and an accent are one file on macOS alone (the line says which disk), and
    straße and strasse are two files everywhere (disks fold letter by letter: ß is no ss there), as before they
    were refused as differing only by case."""
    root = make_ab_project(tmp_path / "a")
    folder = root / "fixtures" / "tiny-ab"
    (folder / "caf\u00e9.txt").write_text("one\n", encoding="utf-8")
    (folder / "cafe\u0301.txt").write_text("two\n", encoding="utf-8")
    nfd, nfc = "cafe\u0301", "caf\u00e9"
    assert one_line_error(bc(root, "seal", "tiny-ab")) == (
        f"error: cards/tiny-ab.yaml: field 'fixtures': the fixture ids '{nfd}' ('cafe\\u0301') and '{nfc}' "
        f"('caf\\xe9') differ only by Unicode form: on macOS their files ('fixtures/tiny-ab/{nfd}.txt' "
        f"('fixtures/tiny-ab/cafe\\u0301.txt') and 'fixtures/tiny-ab/{nfc}.txt' ('fixtures/tiny-ab/caf\\xe9.txt')) "
        "are one file; rename one")
    root = make_ab_project(tmp_path / "b")
    folder = root / "fixtures" / "tiny-ab"
    (folder / "straße.txt").write_text("one\n", encoding="utf-8")
    (folder / "strasse.txt").write_text("two\n", encoding="utf-8")
    sealed = bc(root, "seal", "tiny-ab")
    assert sealed.exit_code == 0, sealed.output


def test_fixture_folders_that_differ_only_by_case_are_refused(tmp_path: Path) -> None:
    """fixtures/tiny-ab/A/ and fixtures/tiny-ab/a/ are one folder on macOS and Windows: a clone there holds
    a/item-06.txt as A/item-06.txt, and the seal, which names a/item-06.txt, reads as changed."""
    root = make_ab_project(tmp_path / "proj", AB_CARD.replace("fixtures/tiny-ab/*.txt", "fixtures/tiny-ab/*/*.txt"))
    for folder, name in (("A", "item-05"), ("a", "item-06")):
        (root / "fixtures" / "tiny-ab" / folder).mkdir()
        (root / "fixtures" / "tiny-ab" / folder / f"{name}.txt").write_text("a tomato\n", encoding="utf-8")
    assert one_line_error(bc(root, "seal", "tiny-ab")) == (
        "error: cards/tiny-ab.yaml: field 'fixtures': the folders 'fixtures/tiny-ab/A' and 'fixtures/tiny-ab/a' "
        "differ only by case: on macOS and Windows they are one folder, whose files a clone there would list under "
        "one of the names, not the names sealed; rename one")
