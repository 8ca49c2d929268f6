"""A card's name stands for one run by one rule (records/cardruns.py): its result is its latest verdict in the
ledger, so a scratch run never takes it over; a command acting on a run takes the newest. Checked as a user
meets it: over the fake server, through the command line and the pages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchcard.project import Project
from benchcard.records.cardruns import card_runs
from benchcard.testing.fakeserver import FakeServer
from benchcard.verdict.gate import EXIT_CODES

from ..helpers_cli import one_line_error
from ..helpers_run import ab_project, bc, next_second, ok, summary


def _run(project: Project, *args: str) -> str:
    """A run made as a user makes it; its id (a run id is to the second: two runs are a second apart)."""
    next_second()
    return str(summary(ok(bc(project, "run", "colour-ab", "--json", *args)))["runs"][0]["run"])


def _site(project: Project, tmp_path: Path) -> tuple[str, str]:
    out = tmp_path / "site"
    ok(bc(project, "site", "--out", str(out)))
    return ((out / "cards" / "colour-ab" / "index.html").read_text(encoding="utf-8"),
            (out / "index.html").read_text(encoding="utf-8"))


def _headline(page: str) -> str:
    import re

    line = re.search(r'<p class="result-line[^"]*">(.*?)</p>', page, re.S)
    assert line is not None
    return re.sub(r"<[^>]+>", "", line.group(1))


def test_a_scratch_run_after_a_ledgered_verdict_leaves_the_card_result_alone(tmp_path: Path, server: FakeServer,
                                                                               key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    sealed = _run(project)
    given = json.loads(ok(bc(project, "verdict", "colour-ab", "--json")).stdout)
    assert given["run"] == sealed and "scratch" not in given
    trial = _run(project, "--scratch")

    shown = ok(bc(project, "verdict", "colour-ab", "--show"))
    assert sealed in shown.stdout and trial not in shown.stdout and "scratch" not in shown.stdout
    gated = bc(project, "verdict", "colour-ab", "--show", "--gate")
    assert gated.exit_code == EXIT_CODES[given["finding"]], gated.output
    assert f"gate: {given['finding']}" in gated.stdout and "no verdict yet" not in gated.output

    page, index = _site(project, tmp_path)
    assert _headline(page) == f"Result: {given['outcome']} · {given['finding']} ({given['given_at'][:10]})"
    assert f'href="#run-{sealed}"' in page.split('class="result-line')[1].split("</p>")[0]
    assert "Scratch run (run with --scratch)" in page  # the trial is shown, marked, below

    # `verdict CARD` acts on the newest run: the trial's verdict is a trial's, marked, and the result stays
    trial_verdict = ok(bc(project, "verdict", "colour-ab"))
    assert trial in trial_verdict.stdout and "scratch" in trial_verdict.stdout
    assert sealed in ok(bc(project, "verdict", "colour-ab", "--show")).stdout
    status = ok(bc(project, "status", "colour-ab")).stdout
    assert f"{trial} · colour-ab v1 · interactive · scratch → " in status
    assert "  scratch run (run with --scratch): a trial, never entered in the ledger" in status
    exported = ok(bc(project, "export", "colour-ab", "--out", str(tmp_path / "trial.csv"))).stdout
    assert "a scratch run: a trial, never a result (column scratch)" in exported
    assert {line.rsplit(",", 1)[1] for line in (tmp_path / "trial.csv").read_text().splitlines()[1:]} == {"True"}
    assert "a trial" not in ok(bc(project, "export", sealed, "--out", str(tmp_path / "sealed.csv"))).stdout
    page, index = _site(project, tmp_path / "again")
    assert _headline(page).startswith(f"Result: {given['outcome']} · {given['finding']}")
    assert f"{given['outcome']} · {given['finding']}" in index


def test_a_card_with_only_scratch_runs_has_no_result_and_says_scratch(tmp_path: Path, server: FakeServer,
                                                                      key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    trial = _run(project, "--scratch")
    verdict = ok(bc(project, "verdict", "colour-ab"))
    assert "scratch" in verdict.stdout

    page, index = _site(project, tmp_path)
    headline = _headline(page)
    assert headline == ("Result: none yet · 1 scratch run, trials never entered in the ledger and never a "
                        "result")
    assert "inconclusive" not in headline and "no-effect" not in headline
    assert "no result yet · 1 scratch run (trials)" in index

    line = one_line_error(bc(project, "verdict", "colour-ab", "--show"))
    assert line == (f"error: colour-ab: no verdict of the card is in the ledger yet; its newest run, {trial}, has "
                    f"a scratch verdict, never a result (`benchcard verdict {trial} --show` prints it)")
    assert trial in ok(bc(project, "verdict", trial, "--show")).stdout


def test_a_sealed_run_awaiting_its_verdict_is_the_headline_not_a_later_trial(tmp_path: Path, server: FakeServer,
                                                                              key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    sealed = _run(project)
    _run(project, "--scratch")
    page, _ = _site(project, tmp_path)
    assert _headline(page) == f"Result: run {sealed}, awaiting its verdict"
    line = one_line_error(bc(project, "verdict", "colour-ab", "--show"))
    assert "no verdict of the card is in the ledger yet" in line and "scratch run awaiting its verdict" in line


def test_a_version_folder_named_with_other_digits_is_not_a_version(tmp_path: Path, server: FakeServer,
                                                                   key: str) -> None:
    """`results/<card>/v²/` holding a run: str.isdigit() took '²' for a version number and int() refused it, so
    every command that picks a card's run ended in a traceback; such a folder is not a version folder."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    run = _run(project, "--scratch")
    folder = project.results_dir / "colour-ab" / "v1" / run
    shutil.copytree(folder, project.results_dir / "colour-ab" / "v²" / run)
    result = bc(project, "status", "colour-ab")
    assert result.exit_code == 0, (result.output, result.exception)
    assert run in result.output
    # nor is `v01`, which `run_dir` never writes: int() read it as v1, a second folder of the same version
    shutil.copytree(folder, project.results_dir / "colour-ab" / "v01" / run)
    assert [r.folder for r in card_runs(project, "colour-ab")] == [folder]


def test_a_cards_result_is_read_from_its_own_rows_of_a_long_ledger(tmp_path: Path) -> None:
    """The card's runs are matched with its ledger rows by the lines holding its id (`ledger.card_rows`), not a
    decode of every row: over 3,000 rows of another card the result and the newest run are those the whole
    read gave. A row of the other card that does not read stopped every pick of this card with that row's
    error; the pick is now the same as before the row was spoiled, and `ledger --verify` still names the row. A
    spoiled row of this card's is the error it was."""
    from benchcard.errors import LedgerError
    from benchcard.records import ledger
    from benchcard.records.cardruns import pick

    from ..helpers_project import ledger_row
    from ..helpers_verdict import make_project, strong_run

    project = make_project(tmp_path / "proj")
    judged, newer = strong_run(project), strong_run(project)
    rows = [ledger_row(run=f"run-{i}", card="other-card", seq=i + 1) for i in range(3000)]
    rows[1234] = ledger_row(run=judged.name, card="extract-ab", seq=1235)
    lines = [ledger.encode_row(row) + "\n" for row in rows]
    project.ledger_path.write_text("".join(lines), encoding="utf-8")
    assert (pick(project, "extract-ab", "result"), pick(project, "extract-ab", "newest")) == (judged, newer)
    spoiled = [*lines[:2000], lines[2000][:-40] + "\n", *lines[2001:]]  # line 2001, another card's: not JSON
    project.ledger_path.write_text("".join(spoiled), encoding="utf-8")
    assert (pick(project, "extract-ab", "result"), pick(project, "extract-ab", "newest")) == (judged, newer)
    assert one_line_error(bc(project, "ledger", "--verify")) == (
        "error: results/ledger.jsonl: line 2001 is not JSON (an edited row)")
    own = [*lines[:1234], lines[1234][:-40] + "\n", *lines[1235:]]
    project.ledger_path.write_text("".join(own), encoding="utf-8")
    with pytest.raises(LedgerError, match=r"^results/ledger\.jsonl: line 1235 is not JSON \(an edited row\)$"):
        pick(project, "extract-ab", "result")


def test_a_folder_in_a_manifests_place_is_the_same_line_from_every_command(tmp_path: Path, server: FakeServer,
                                                                          key: str) -> None:
    """A run whose manifest.json was made a folder (hostile21): `status` named it, `verdict` said 'not a run
    folder', `verdict CARD` called it a run stopped while planned (and offered to delete it), `run --resume` failed
    writing a temporary, and `site` dropped the run unsaid. Every reader now says one line naming the file, within
    the project as `status`, `ledger` and `site` name it (the others named it by its absolute path)."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    run = _run(project, "--scratch")
    folder = project.results_dir / "colour-ab" / "v1" / run
    (folder / "manifest.json").unlink()
    (folder / "manifest.json").mkdir()
    relative = f"results/colour-ab/v1/{run}/manifest.json"
    said = f"{relative}: not a regular file (a folder), where benchcard keeps one; move it aside and put the file back"
    for args in (("status", run), ("verdict", run), ("verdict", "colour-ab"), ("verdict", "colour-ab", "--show"),
                 ("export", "colour-ab", "--out", str(tmp_path / "x.csv")), ("blind-sheet", run),
                 ("run", "colour-ab", "--resume", run), ("replicate", run), ("plan", "colour-ab", "--from", run),
                 ("status", str(folder)), ("status", str(folder.relative_to(project.root)))):
        assert one_line_error(bc(project, *args)) == f"error: {said}", args
    assert f"skipped: {said}; the run is left out" in ok(bc(project, "ledger")).output
    built = ok(bc(project, "site", "--out", str(tmp_path / "site")))
    assert (f"skipped: {relative}: not a regular file (a folder), where benchcard keeps one; move it aside and put "
            "the file back; the run is left out") in built.output
