"""Which files a site may publish, and under what name.

A page publishes a file only when its real path (links resolved) lies inside the folder it is published
from and is a regular file (no FIFO, device or folder), so a symbolic link planted in a run folder or in keys/ cannot
publish `~/.env`, and a link to an ancestor folder cannot make the site copy itself forever. Folders are
walked without following links. A file whose name would make a browser render it as a page or an image
(`.html`, `.svg`, ...) is published with `.txt` appended, so a static host serves it as text.
"""

from __future__ import annotations

import os
import shutil
import stat
import urllib.parse
from collections.abc import Sequence
from pathlib import Path

from benchcard._util.hashing import digest
from benchcard._util.names import folded

TEXT_SUFFIXES = frozenset({".txt", ".json", ".jsonl", ".csv"})


def published_name(name: str) -> str:
    """`name`, or `name.txt` when its suffix is not one a browser shows as plain data."""
    return name if Path(name).suffix.lower() in TEXT_SUFFIXES else name + ".txt"


def published_names(names: Sequence[str]) -> list[str]:
    """Each name's `published_name`, one file each even where case is not told apart (macOS, Windows): a name
    published as it is keeps it, and one that gains `.txt` onto a name already taken (fixtures `p.html` and
    `p.html.txt`) gains 8 hex digits of its digest before it (`p.html-1a2b3c4d.txt`). Before, both fixtures'
    links opened `p.html.txt`, the second file's text shown as the first's."""
    taken = {folded(name) for name in names if published_name(name) == name}
    out = []
    for name in names:
        public = published_name(name)
        if public != name:
            if folded(public) in taken:
                public = f"{name}-{digest(name).removeprefix('sha256:')[:8]}.txt"
            taken.add(folded(public))
        out.append(public)
    return out


def href_of(rel: str) -> str:
    """The link to a published file at `rel` (a path relative to the page, `/`-separated): each part
    percent-encoded, so that a file named `issue #12.txt` or `50%20off.txt` is the file a browser opens, not the
    file `issue ` with a fragment, or `50 off.txt`."""
    return urllib.parse.quote(rel, safe="/")


def regular_inside(path: Path, root: Path) -> bool:
    """Whether `path`'s real path (links resolved) is inside `root`'s real path and is a regular file."""
    try:
        real, top = path.resolve(), root.resolve()
        return top in real.parents and stat.S_ISREG(os.stat(real).st_mode)
    except (OSError, RuntimeError):
        return False


def files_under(folder: Path, root: Path) -> list[Path]:
    """The regular files below `folder` that `regular_inside(.., root)` allows, sorted; links not followed."""
    if folder.is_symlink() or not folder.is_dir():
        return []
    found = []
    for here, _dirs, names in os.walk(folder, followlinks=False):
        for name in names:
            path = Path(here) / name
            if regular_inside(path, root):
                found.append(path)
    return sorted(found)


def copy_published(src: Path, dest: Path) -> None:
    """Copy one allowed file's bytes (the caller checked it with `regular_inside`)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest, follow_symlinks=False)
