"""The one atomic write: a reader sees the old file or the new one, never half; no other module renames by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import benchcard
from benchcard._util.files import AtomicFile, move_into_place, synced_file, write_atomic


def test_write_atomic_replaces_the_whole_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "results" / "run" / "manifest.json"
    write_atomic(target, "old\n")
    write_atomic(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["manifest.json"]


def test_a_stream_that_fails_part_way_leaves_the_old_file_untouched(tmp_path: Path) -> None:
    target = tmp_path / "scores.jsonl"
    target.write_bytes(b'{"cell":"c1"}\n')
    with pytest.raises(RuntimeError), AtomicFile(target) as fh:
        fh.write(b'{"cell":"c2"}\n')
        raise RuntimeError("killed mid-write")
    assert target.read_bytes() == b'{"cell":"c1"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.jsonl"]


def test_a_stream_is_invisible_until_committed(tmp_path: Path) -> None:
    target = tmp_path / "chunk-000.jsonl"
    fh = AtomicFile(target, suffix=".part")
    fh.write(b"a\n")
    assert not target.exists() and (tmp_path / "chunk-000.jsonl.part").is_file()
    fh.commit()
    assert target.read_bytes() == b"a\n" and not (tmp_path / "chunk-000.jsonl.part").exists()


def test_no_overwrite_keeps_the_first_file_and_says_so(tmp_path: Path) -> None:
    target = tmp_path / "sealed" / "sheet-human.jsonl"
    write_atomic(target, b"first\n", overwrite=False)
    with pytest.raises(FileExistsError):
        write_atomic(target, b"second\n", overwrite=False)
    assert target.read_bytes() == b"first\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["sheet-human.jsonl"]


def test_a_file_written_elsewhere_is_moved_into_place_whole(tmp_path: Path) -> None:
    tmp = tmp_path / "judge" / "judge-requests.jsonl.tmp"
    with synced_file(tmp) as fh:
        fh.write(b"plan\n")
    target = tmp_path / "judge" / "sealed" / "judge-requests.jsonl"
    move_into_place(tmp, target)
    assert target.read_bytes() == b"plan\n" and not tmp.exists()


# Renames that are not a whole-file write: a user's file kept as .bak, and the site folder swapped whole. And the
# statistics' table cache: stats/ imports nothing of benchcard's, and a cache needs no fsync (a table lost in a
# crash, or a half-written one, is drawn again).
_ALLOWED = {"_util/files.py", "_util/safewrite.py", "publish/build.py", "stats/_tablecache.py"}
_HAND_WRITTEN = re.compile(r"\bos\.(replace|rename)\(|\.rename\((?!columns=)")


def test_every_rename_into_place_goes_through_the_one_atomic_write() -> None:
    package = Path(benchcard.__file__).parent
    found = [f"{path.relative_to(package).as_posix()}:{n}: {line.strip()}"
             for path in sorted(package.rglob("*.py")) if path.relative_to(package).as_posix() not in _ALLOWED
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if _HAND_WRITTEN.search(line)]
    assert found == []


def test_no_overwrite_works_where_hard_links_do_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: object, dst: object) -> None:
        raise PermissionError("hard links not supported")

    monkeypatch.setattr("benchcard._util.files.os.link", no_links)
    target = tmp_path / "sheet-human.jsonl"
    write_atomic(target, b"first\n", overwrite=False)
    with pytest.raises(FileExistsError):
        write_atomic(target, b"second\n", overwrite=False)
    assert target.read_bytes() == b"first\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sheet-human.jsonl"]
