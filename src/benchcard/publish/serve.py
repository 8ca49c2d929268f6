"""`benchcard site --serve`: the pages on 127.0.0.1, rebuilt when the project's results change.

The site is built with its viewer pages (`_matrix.py`: each run's outputs side by side) into a folder of its own
(a temporary one unless `--out` names one), served by the standard library's threading HTTP server bound to
127.0.0.1 only, and rebuilt whenever a file under results/, cards/, fixtures/ or keys/ (or benchcard.yaml)
changes: a watcher compares every file's size and modification time once a second, and builds once they have
held still for a second (a verdict writes several files). A build swaps the new site
in whole (`build.py`), so a page is never served half-written; a build that fails keeps the last good site and
says why in one line.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchcard.errors import BenchcardError, one_line
from benchcard.project import Project
from benchcard.publish.build import build_site

HOST = "127.0.0.1"
WATCHED = ("results", "cards", "fixtures", "keys", "benchcard.yaml")


#: The names the viewer answers to. Another (a `Host: evil.example`) is a page elsewhere that rebound its own name
#: to 127.0.0.1 (DNS rebinding) to read the served pages, unpublished runs and keys among them, as its own.
LOCAL_NAMES = frozenset({HOST, "localhost"})


class _Quiet(SimpleHTTPRequestHandler):
    """Static files of the built site, with no line per request on the terminal, only to a request for the
    viewer by a local name."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self._local():
            super().do_GET()

    def do_HEAD(self) -> None:
        if self._local():
            super().do_HEAD()

    def _local(self) -> bool:
        """Whether the request names the viewer by a local name (or by none: an HTTP/1.0 client); a 403 if not."""
        host = self.headers.get("Host")
        name = urllib.parse.urlsplit(f"//{host}").hostname if host is not None else HOST
        if name in LOCAL_NAMES:
            return True
        self.send_error(403, "This viewer answers only to 127.0.0.1 and localhost")
        return False

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")  # a rebuilt page is seen on the next reload
        super().end_headers()


def fingerprint(project: Project) -> frozenset[tuple[str, int, int]]:
    """Every watched file's path, size and modification time: a change to any of them is a change. Links below
    the watched folders are not followed (each is fingerprinted as a link, as the site's build walks them): two
    links to their own folder in results/ made the walk branch without end, and `site --serve` never started."""
    seen: set[tuple[str, int, int]] = set()
    for name in WATCHED:
        stack = [(project.root / name, True)]  # the watched folders themselves may be links (results elsewhere)
        while stack:
            path, top = stack.pop()
            try:
                info = path.stat() if top else path.lstat()
                if stat.S_ISDIR(info.st_mode):
                    with os.scandir(path) as entries:
                        stack.extend((Path(e.path), False) for e in entries)
                else:
                    seen.add((str(path), info.st_size, info.st_mtime_ns))
            except OSError:  # gone between the listing and the look: the next round sees it
                continue
    return frozenset(seen)


class Viewer:
    """A served site and its watcher; `url` is where it is, `builds` counts the builds made."""

    def __init__(self, project: Project, out: Path, port: int, say: Callable[[str], None], interval: float):
        self.project, self.out, self.say, self.interval = project, out, say, interval
        self.builds = 0
        self._stop = threading.Event()
        self._seen = fingerprint(project)
        self._build()
        handler = partial(_Quiet, directory=str(out))
        try:
            self.server = ThreadingHTTPServer((HOST, port), handler)
        except OSError as exc:
            raise BenchcardError(f"--port {port}: cannot listen on {HOST}:{port} ({exc.strerror}); choose "
                                 "another port, or leave --port out for a free one") from None
        self.url = f"http://{HOST}:{self.server.server_address[1]}/"
        self._threads = [threading.Thread(target=self.server.serve_forever, daemon=True),
                         threading.Thread(target=self._watch, daemon=True)]
        for t in self._threads:
            t.start()

    def _build(self) -> None:
        build_site(self.project, self.out, viewer=True)
        self.builds += 1

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            now = fingerprint(self.project)
            if now == self._seen:
                continue
            while not self._stop.wait(self.interval):  # a verdict writes several files: build once they settle
                settled, now = now, fingerprint(self.project)
                if now == settled:
                    break
            self._seen = now
            try:
                self._build()
                self.say(f"rebuilt: results changed ({self.builds} builds)")
            except BenchcardError as exc:
                self.say(f"not rebuilt, the last good pages are still served: {one_line(exc)}")

    def close(self) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()
        for t in self._threads:
            t.join(timeout=5)


@contextmanager
def viewing(project: Project, out: Path | None = None, port: int = 0, say: Callable[[str], None] = print,
            interval: float = 1.0) -> Iterator[Viewer]:
    """A `Viewer` for the project (port 0: a free one), closed on exit; a temporary folder is removed after."""
    temporary = out is None
    folder = Path(tempfile.mkdtemp(prefix="benchcard-view-")) / "site" if out is None else out
    viewer = None
    try:
        viewer = Viewer(project, folder, port, say, interval)
        yield viewer
    finally:
        if viewer is not None:
            viewer.close()
        if temporary:
            shutil.rmtree(folder.parent, ignore_errors=True)


def serve(project: Project, out: Path | None, port: int, say: Callable[[str], None]) -> None:
    """`benchcard site --serve`: serve until Ctrl-C, saying where in one line."""
    with viewing(project, out, port, say) as viewer:
        say(f"serving {project.root.name}'s pages at {viewer.url} (side by side: {viewer.url}view.html); "
            "rebuilt when results change; Ctrl-C stops")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            say("stopped")
