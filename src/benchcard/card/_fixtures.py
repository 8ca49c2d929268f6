"""The fixtures glob of an A/B card: the files it matches, by stem, each inside the project."""

from __future__ import annotations

import contextlib
import fnmatch
import glob as globmod
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from benchcard._util.names import (
    differ_by,
    folded,
    length_problem,
    one_file_on,
    path_length_problem,
    windows_name_problem,
)
from benchcard._util.names import shown as shown_name
from benchcard._util.safeio import miscased
from benchcard.errors import CardError
from benchcard.project import Project


def fixture_files(project: Project, source: str, pattern: str) -> dict[str, Path]:
    """The files the fixtures glob matches, by stem, each resolved and inside the project.

    Resolving every match costs a dozen system calls each (seconds for 10,000 fixtures), so the glob's
    literal folder is resolved and checked once; below it, a match none of whose components is a symbolic
    link (one `lstat` per file, one per folder) is inside that folder as written. A match through a link,
    or any match when the glob has `..` after a wildcard or its folder is not inside, is resolved and
    checked in full: a path may not leave the project, by `..` or by a link.
    """
    project.inside(pattern.split("*")[0] or ".", source=source, field="fixtures")
    written = Path(pattern).parts
    fixed = next((i for i, part in enumerate(written) if globmod.has_magic(part)), len(written))
    depth = len(written) - fixed  # components of a match below the glob's literal folder
    raw = pattern.split("/")
    below = raw[next((i for i, part in enumerate(raw) if globmod.has_magic(part)), len(raw)):]
    base: Path | None = None
    if all(part not in ("", ".", "..") for part in below):  # else `lstat` of a match could follow a link
        with contextlib.suppress(CardError):
            base = project.inside(str(Path(*written[:fixed])), source=source, field="fixtures")
    if base is not None and depth == 1:
        listed = _one_folder(project, source, base, written[-1])
        if listed is not None:
            return _one_file_each(project, source, listed)
    skip = len((project.root / Path(*written[:fixed])).parts)
    links: dict[str, bool] = {}
    fixtures: dict[str, Path] = {}
    for m in sorted(globmod.glob(str(project.root / pattern))):
        if base is not None and not _through_link(m, depth, links):
            path = base.joinpath(*Path(m).parts[skip:])
        else:
            path = project.inside(str(Path(m).relative_to(project.root)), source=source, field="fixtures")
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)
        except OSError as exc:  # a link in a loop, or to nothing
            raise CardError(f"{source}: field 'fixtures': the glob matches {Path(m).relative_to(project.root)}, "
                            f"which cannot be read ({exc.strerror})") from None
        if not regular:
            _not_a_file(project, source, Path(m))
        _add(project, source, fixtures, path)
    return _one_file_each(project, source, fixtures)


#: A fixture id whose key would be named as a seal is (`keys/<card>/v<N>.seal.json`), once folded (`names.folded`).
_SEAL_NAMED = re.compile(r"v[0-9]+\.seal")


def _relative_of(project: Project) -> Callable[[Path], str]:
    """`project.relative` for the fixtures' paths, which are real paths inside it (`fixture_files` resolved their
    folder, or each one through a link): one resolve of the project, not a `realpath` of each, which took 2 s of
    `check`'s 4 for 10,000 fixtures."""
    root = os.path.join(str(project.root.resolve()), "")

    def relative(path: Path) -> str:
        text = str(path)
        return text[len(root):] if text.startswith(root) else project.relative(path)
    return relative


def _one_file_each(project: Project, source: str, fixtures: dict[str, Path]) -> dict[str, Path]:
    """The fixtures, when no two ids differ only by case: such files (and their keys) are one file on macOS and
    Windows, so a clone there would keep one of them and the seal would name a fixture changed."""
    relative = _relative_of(project)
    for path in fixtures.values():
        _windows_can_hold(relative(path), source)
    seen: dict[str, str] = {}
    for fixture in sorted(fixtures):
        other = seen.setdefault(folded(fixture), fixture)
        if other != fixture:
            raise CardError(f"{source}: field 'fixtures': the fixture ids {shown_name(other)} and "
                            f"{shown_name(fixture)} differ only by {differ_by(other, fixture)}: on "
                            f"{one_file_on(other, fixture)} their files "
                            f"({_path(project, fixtures[other])} and {_path(project, fixtures[fixture])}) are one "
                            "file; rename one")
    return fixtures


def _path(project: Project, path: Path) -> str:
    """A fixture's path in a line that sets it beside another that reads alike: not ASCII, its escapes too."""
    shown = project.relative(path)
    return shown if shown.isascii() else shown_name(shown)


def later_name_problems(project: Project, source: str, card_id: str, fixtures: dict[str, Path]) -> list[CardError]:
    """What a clone elsewhere, or the card's keys folder, makes of each fixture's name (checks of 2026-12-07, kept
    by the reader as newer than some seals): a file name longer than `MAX_NAME_BYTES`, a path (the file's, or its
    key's `keys/<card>/<fixture>.json`) longer than `MAX_PATH_CHARS`, an id `v<N>.seal` in any case, whose key
    `keys/<card>/v1.seal.json` would be the seal of v1 (or, told apart only by case, `V1.seal.json` on macOS and
    Windows; `harbor.seal.json` is a key as any other, sealed under the fixture's name), and
    two folders of fixtures one on macOS or Windows (`A/`, `a/`)."""
    problems: list[CardError] = []
    relative = _relative_of(project)
    for fixture, path in sorted(fixtures.items()):
        shown = relative(path)
        key = f"keys/{card_id}/{fixture}.json"
        if _SEAL_NAMED.fullmatch(folded(fixture)):
            why = (f"the fixture id {fixture!r} is named as a version's seal, so its answer key {key} is named as "
                   f"the card's seals are (keys/{card_id}/v<N>.seal.json) and may be one of them; rename the file")
        elif (problem := length_problem(path.name)) is not None:
            why = f"the name {path.name!r} {problem}, so a clone elsewhere may not hold it or its key; rename it"
        elif (problem := path_length_problem(max(shown, key, key=len))) is not None:
            why = f"the path {max(shown, key, key=len)} {problem}; shorten the fixture's name or its folders"
        else:
            continue
        problems.append(CardError(f"{source}: field 'fixtures': {shown}: {why}"))
    folders: dict[str, str] = {}
    for path in sorted(fixtures.values()):
        folder = relative(path.parent)
        other = folders.setdefault(folded(folder), folder)
        if other != folder:
            problems.append(CardError(f"{source}: field 'fixtures': the folders {shown_name(other)} and "
                                      f"{shown_name(folder)} differ only by {differ_by(other, folder)}: on "
                                      f"{one_file_on(other, folder)} they are one folder, "
                                      "whose files a clone there would list under one of the names, not the names "
                                      "sealed; rename one"))
            break
    return problems


def miscased_problem(project: Project, source: str, pattern: str, data_file: bool = False) -> CardError | None:
    """A card's path written with a folder or file name that differs from the one on disk only by case or Unicode
    form (`safeio.miscased`): the glob's folders before its first wildcard, or a data file's whole path. A check of
    2026-12-07: a card written so on macOS or Windows was checked and sealed there, and a clone on Linux (a CI
    job) found no fixture; on Linux it said only that the glob matched no file."""
    parts = pattern.split("/")
    if not data_file:
        parts = parts[:next((i for i, part in enumerate(parts) if globmod.has_magic(part)), len(parts))]
    found = miscased(project.root, "/".join(parts))
    if found is None:
        return None
    written, on_disk = found
    return CardError(f"{source}: field 'fixtures': {pattern}: the name {shown_name(written)} is "
                     f"{shown_name(on_disk)} on disk, which is opened for it on {one_file_on(written, on_disk)} and "
                     f"not on Linux, so a clone there finds no {'data file' if data_file else 'fixture'}; write it as "
                     "it is on disk")


def data_file_problems(project: Project, source: str, path: Path) -> list[CardError]:
    """What a clone elsewhere makes of a data file's path (checks of 2026-12-07, kept by the reader as newer than
    some seals), as of a fixture file's: a name Windows cannot hold, one longer than `MAX_NAME_BYTES`, a path
    longer than `MAX_PATH_CHARS`."""
    shown = project.relative(path)
    found = _part_problem(shown, lambda part: windows_name_problem(part) or length_problem(part))
    if found is not None:
        return [CardError(f"{source}: field 'fixtures': {shown}: the name {found[0]!r} {found[1]}, so a clone of "
                          "the project elsewhere cannot hold the file; rename it")]
    why = path_length_problem(shown)
    if why is not None:
        return [CardError(f"{source}: field 'fixtures': {shown}: the path {why}; shorten its name or its folders")]
    return []


def _windows_can_hold(shown: str, source: str) -> None:
    """A fixture's path (`shown`, in the project) must be one Windows can check out: a card sealed on Linux is
    checked anywhere."""
    found = _part_problem(shown, windows_name_problem)
    if found is not None:
        raise CardError(f"{source}: field 'fixtures': {shown}: the name {found[0]!r} {found[1]}, so a clone of the "
                        "project there cannot hold the file; rename it")


def _part_problem(shown: str, problem: Callable[[str], str | None]) -> tuple[str, str] | None:
    """The first folder or file name of a path in the project that `problem` finds a reason in, with the reason:
    a fixture's and a data file's paths are held to one rule, name by name."""
    for part in Path(shown).parts:
        why = problem(part)
        if why is not None:
            return part, why
    return None


def _add(project: Project, source: str, fixtures: dict[str, Path], path: Path) -> None:
    """One fixture by its id (the file's stem); two files with one id would silently drop one from the seal."""
    other = fixtures.get(path.stem)
    if other is not None:
        raise CardError(f"{source}: field 'fixtures': two files have the fixture id '{path.stem}' "
                        f"({project.relative(other)} and {project.relative(path)}); rename one or narrow the glob")
    fixtures[path.stem] = path


def _not_a_file(project: Project, source: str, path: Path) -> None:
    raise CardError(f"{source}: field 'fixtures': the glob matches {project.relative(path)}, which is not a "
                    "regular file (a folder, FIFO or device); narrow the glob")


def _one_folder(project: Project, source: str, base: Path, pattern: str) -> dict[str, Path] | None:
    """`glob` of `base/pattern` (wildcards in the last component only) from one directory listing, or None
    when a match is a symbolic link (the caller then resolves and checks every match).

    A listing says which entries are links without a system call per file, so a match that is not a link
    lies inside `base` as written. Hidden names match only a pattern that starts with a dot, as in glob.
    """
    try:
        entries = {e.name: e for e in os.scandir(base)}
    except OSError:
        return {}
    names = list(entries) if pattern.startswith(".") else [n for n in entries if not n.startswith(".")]
    fixtures: dict[str, Path] = {}
    for name in sorted(fnmatch.filter(names, pattern)):
        path = base / name
        if entries[name].is_symlink():
            return None
        if not entries[name].is_file(follow_symlinks=False):
            _not_a_file(project, source, path)
        _add(project, source, fixtures, path)
    return fixtures


def _through_link(path: str, depth: int, links: dict[str, bool]) -> bool:
    """Whether `path` or one of its `depth - 1` parent folders is a symbolic link (folders looked up once)."""
    if os.path.islink(path):
        return True
    for _ in range(depth - 1):
        path = os.path.dirname(path)
        link = links.get(path)
        if link is None:
            link = links[path] = os.path.islink(path)
        if link:
            return True
    return False
