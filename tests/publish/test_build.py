"""`build_site`: a site written whole into a folder it owns (never one it did not build), left as it was when a
build fails, its links relative, its JSON-LD unable to leave its script; and `benchcard site`."""

from __future__ import annotations

import json
import os
import re
import stat
import urllib.parse
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.project import Project
from benchcard.publish.build import MARKER, build_site, json_ld

from ..helpers_cli import as_a_user, one_line_error
from ..helpers_digits import NOT_NUMBERS, THIRTY_DIGITS
from ..helpers_project import copy_project, published_project
from ..helpers_run import killed_at
from ..helpers_site import (
    _Page,
)


def test_json_ld_cannot_break_out_of_its_script() -> None:
    evil = {"name": "</script><script>alert(1)</script> & <!-- \u2028"}
    text = str(json_ld(evil))
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == evil


def test_links_are_relative_and_resolve(built: tuple[Project, Path]) -> None:
    _, out = built
    pages = sorted(out.rglob("*.html"))
    assert len(pages) >= 12
    for html_file in pages:
        p = _Page(html_file.read_text(encoding="utf-8"))
        for link in p.links():
            if link.startswith("#") or link == "data:,":
                continue
            assert not re.match(r"^[a-z]+:", link) and not link.startswith("/"), (html_file, link)
            target = (html_file.parent / urllib.parse.unquote(link.split("#")[0])).resolve()  # as a browser reads it
            assert target.exists(), (html_file.relative_to(out), link)
        sheets = [a for t, a in p.tags if t == "link" and a.get("rel") == "stylesheet"]
        assert len(sheets) == 1 and (html_file.parent / str(sheets[0]["href"])).resolve() == out / "style.css"
    css = (out / "style.css").read_text(encoding="utf-8")
    assert "@import" not in css and "url(" not in css


def test_refuses_a_folder_it_did_not_build(tmp_path: Path) -> None:
    copy_project(tmp_path / "proj", ("emit-terminator",))
    project = Project((tmp_path / "proj").resolve())
    foreign = tmp_path / "docs"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    from benchcard.errors import BenchcardError

    with pytest.raises(BenchcardError, match="not built by benchcard site"):
        build_site(project, foreign)
    assert (foreign / "notes.txt").read_text() == "mine"
    with pytest.raises(BenchcardError, match="project folder"):
        build_site(project, project.root)
    with pytest.raises(BenchcardError, match=r"under results/, part of the project.s own records"):
        build_site(project, project.root / "results" / "site")
    site = tmp_path / "site"
    build_site(project, site)
    (site / "stale.html").write_text("old", encoding="utf-8")
    build_site(project, site)  # a site it built is rebuilt from scratch
    assert not (site / "stale.html").exists() and (site / MARKER).is_file()


def test_cli_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_project(tmp_path / "proj", ("emit-terminator", "one-word-sentiment"))
    result = CliRunner().invoke(cli, ["-C", str(tmp_path / "proj"), "site", "--out", str(tmp_path / "web")])
    assert result.exit_code == 0, result.output
    assert "index.html" in result.output and (tmp_path / "web" / "index.html").is_file()
    result = CliRunner().invoke(cli, ["-C", str(tmp_path / "proj"), "site", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["out"].endswith("site") and "cards/emit-terminator/index.html" in data["pages"]
    assert (tmp_path / "proj" / "site" / "index.html").is_file()
    # a user error is one line on stderr and exit 1, no traceback
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("x", encoding="utf-8")
    from benchcard.cli import main

    monkeypatch.setattr("sys.argv", ["benchcard", "-C", str(tmp_path / "proj"), "site", "--out",
                                     str(tmp_path / "taken")])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 1


def test_real_project_builds(tmp_path: Path) -> None:
    """The repository's own cards build as they stand, with the results they were published with."""
    report = build_site(Project(published_project(tmp_path / "proj")), tmp_path / "site")
    assert "cards/bench-01/index.html" in report.pages


def test_a_failed_build_leaves_the_last_good_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_project(tmp_path / "proj", ("emit-terminator",))
    web = tmp_path / "web"
    runner = CliRunner()
    assert runner.invoke(cli, ["-C", str(tmp_path / "proj"), "site", "--out", str(web)]).exit_code == 0
    before = {p.relative_to(web): p.read_bytes() for p in web.rglob("*") if p.is_file()}
    assert Path("index.html") in before

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("template blew up half-way")

    monkeypatch.setattr("benchcard.publish.build.ledger_context", broken)
    with pytest.raises(RuntimeError):
        build_site(Project((tmp_path / "proj").resolve()), web)
    after = {p.relative_to(web): p.read_bytes() for p in web.rglob("*") if p.is_file()}
    assert after == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging folder left behind


def test_a_full_disk_under_out_is_one_line_naming_the_page_and_the_last_site_stands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit (hostile21, disk): `site --out` on a full disk said `error: <project>/results/…/outputs.jsonl:
    No space left on device`, naming the project's run file (the copy's source, on a disk with room) as the file
    refused. The line names --out and the page as it would be there, and the site built before is untouched."""
    import errno
    import shutil

    project = published_project(tmp_path / "proj")
    web = tmp_path / "web"
    site = ["-C", str(project), "site", "--out", str(web)]
    assert CliRunner().invoke(cli, site).exit_code == 0
    before = {p.relative_to(web): p.read_bytes() for p in web.rglob("*") if p.is_file()}
    real = shutil.copyfile

    def full(src: str, dest: str, **kwargs: object) -> str:
        if Path(src).name == "outputs.jsonl":  # as shutil's sendfile says it: source, then destination
            raise OSError(errno.ENOSPC, "No space left on device", str(src), None, str(dest))
        return real(src, dest, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "copyfile", full)
    line = one_line_error(CliRunner().invoke(cli, site))
    assert re.fullmatch(
        rf"error: --out {re.escape(str(web))}: {re.escape(str(web))}/runs/bench-01/v1/[0-9TZa-f-]+/outputs\.jsonl "
        r"could not be written \(No space left on device: the disk is full or a file-size limit was reached\); "
        r"the site there before, if any, is as it was\. Make room, then build again", line), line
    assert {p.relative_to(web): p.read_bytes() for p in web.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj", "web"]


def test_a_page_write_that_names_no_file_names_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write's own error names no file (`error: No space left on device`, hostile21): the line names --out."""
    import errno

    def full(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    project = published_project(tmp_path / "proj")
    monkeypatch.setattr("benchcard.publish.build.copy_run", full)
    web = tmp_path / "web"
    assert one_line_error(CliRunner().invoke(cli, ["-C", str(project), "site", "--out", str(web)])) == (
        f"error: --out {web}: the pages could not be written (No space left on device: the disk is full or a "
        "file-size limit was reached); the site there before, if any, is as it was. Make room, then build again")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj"]


def test_a_build_killed_before_its_swap_leaves_a_hidden_folder_the_next_build_removes(tmp_path: Path) -> None:
    """SIGKILLed with every page written but not yet swapped in: the last good site stands, the staging folder is
    hidden, and the next build (its process gone) removes it rather than leave one behind at every kill."""
    copy_project(tmp_path / "proj", ("emit-terminator",))
    web = tmp_path / "web"
    site = ["-C", str(tmp_path / "proj"), "site", "--out", str(web)]
    assert CliRunner().invoke(cli, site).exit_code == 0
    assert killed_at("benchcard.publish.build:_swap_in:", *site) == -9
    assert sorted(p.name.split("-")[0] for p in tmp_path.iterdir()) == [".web.building", "proj", "web"]
    assert (web / "index.html").is_file()
    assert CliRunner().invoke(cli, site).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj", "web"]


def test_a_folder_named_like_a_killed_build_but_with_no_process_id_is_left_alone(tmp_path: Path) -> None:
    """A folder beside the site named `.web.building-²-x`: str.isdigit() took '²' for a process id and int()
    refused it, so `benchcard site` ended in a traceback; it is left alone, as is every name whose id is not ASCII
    digits alone ('٣', '', ' 1', '+1', '1_000'). One named with a number no process can have (os.kill
    overflowed: a traceback too), 30 digits of it, is removed like a dead build's, as is one naming a dead
    process with leading zeros."""
    import subprocess
    import sys

    copy_project(tmp_path / "proj", ("emit-terminator",))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    odd = [f".web.building-{pid}-x" for pid in (*NOT_NUMBERS, "0")]  # 0: os.kill reads it as this process's group
    for name in (*odd, ".web.old-99999999999999999999999-x", f".web.building-{THIRTY_DIGITS}-x",
                 f".web.old-00{int(dead.stdout)}-x"):
        (tmp_path / name).mkdir()
    result = CliRunner().invoke(cli, ["-C", str(tmp_path / "proj"), "site", "--out", str(tmp_path / "web")])
    assert result.exit_code == 0, (result.output, result.exception)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*odd, "proj", "web"])


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_the_site_folder_has_the_mode_the_umask_gives_every_folder(tmp_path: Path, umask: int) -> None:
    """The site is the staging folder renamed, and mkdtemp made that 0700 whatever the umask: under umask 022 a
    web server, or a colleague on the same machine, could read none of the pages, and a `chmod 755` of the site
    was undone by the next build."""
    copy_project(tmp_path / "proj", ("emit-terminator",))
    web = tmp_path / "web"
    previous = os.umask(umask)
    try:
        (tmp_path / "made-by-mkdir").mkdir()
        for _ in range(2):  # the first build, then a rebuild that swaps the new site in over the old one
            assert CliRunner().invoke(cli, ["-C", str(tmp_path / "proj"), "site", "--out", str(web)]).exit_code == 0
            modes = {stat.S_IMODE(p.stat().st_mode) for p in (web, *web.rglob("*")) if p.is_dir()}
            assert modes == {stat.S_IMODE((tmp_path / "made-by-mkdir").stat().st_mode)} == {0o777 & ~umask}
    finally:
        os.umask(previous)


def test_an_out_folder_not_writable_names_out_not_the_staging_folder(tmp_path: Path) -> None:
    """`site` where the user may not write (hostile21, permissions) said `error: <project>/.site.building-5320-
    21810b05: Permission denied`, the hidden staging folder's name: the line names --out and the folder that
    refused, and the site there before stands."""
    project = published_project(tmp_path / "proj")
    shut = tmp_path / "shut"
    shut.mkdir()
    (shut / "web").mkdir()
    (shut / "web" / MARKER).write_text("built by benchcard site\n", encoding="utf-8")
    shut.chmod(0o555)
    try:
        done = as_a_user("-C", str(project), "site", "--out", str(shut / "web"))
    finally:
        shut.chmod(0o755)
    assert (done.returncode, done.stderr) == (1, (
        f"error: --out {shut / 'web'}: the pages could not be written: {shut} refused a new folder (Permission "
        "denied); the site there before, if any, is as it was. Put that right, then build again, or give another "
        "--out\n"))
    assert sorted(p.name for p in shut.rglob("*")) == sorted(["web", MARKER])
