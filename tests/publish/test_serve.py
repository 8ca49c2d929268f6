"""`benchcard site --serve`: the pages over a real socket on 127.0.0.1, rebuilt when results change, stopped by
Ctrl-C; a port in use is one line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from benchcard.errors import BenchcardError
from benchcard.project import Project
from benchcard.publish.serve import fingerprint, viewing
from benchcard.verdict.give import give_verdict

from ..helpers_cli import bc, one_line_error
from ..helpers_site import make_project, write_bench_run
from ..helpers_wait import wait_until

BLIND_RUN = "20261201T090000Z-b1d0"
SRC = Path(__file__).resolve().parents[2] / "src"


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.status == 200
        return str(resp.read().decode("utf-8"))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = make_project(tmp_path / "proj")
    write_bench_run(project, BLIND_RUN, verdict=False)
    return project


def test_served_on_loopback_and_rebuilt_when_a_verdict_lands(project: Project) -> None:
    said: list[str] = []
    with viewing(project, port=0, say=said.append, interval=0.1) as viewer:
        assert viewer.url.startswith("http://127.0.0.1:")
        assert "Side by side" in _get(viewer.url + "index.html")
        matrix = f"{viewer.url}runs/bench-01/v1/{BLIND_RUN}/side-by-side.html"
        assert "outputs (blind)" in _get(matrix)
        assert "apply()" in _get(viewer.url + "matrix.js")
        give_verdict(project, project.run_dir("bench-01", 1, BLIND_RUN), n_resamples=200)
        wait_until(lambda: "data-variant-toggle" in _get(matrix), 180, "the page rebuilt with its variants", every=0.05)
        assert "outputs (blind)" not in _get(matrix)
        wait_until(lambda: said, 180, "the line saying so", every=0.05)  # said once the new pages are in place
        assert said[0] == "rebuilt: results changed (2 builds)"
        folder = viewer.out
    assert not folder.exists()  # the temporary build is removed with the viewer


def test_a_failed_rebuild_keeps_the_last_good_pages(project: Project) -> None:
    said: list[str] = []
    with viewing(project, port=0, say=said.append, interval=0.1) as viewer:
        card = project.card_path("bench-01")
        card.write_text(card.read_text(encoding="utf-8") + "\nnot a field: 1\n", encoding="utf-8")
        wait_until(lambda: said, 180, "a line about the failed build", every=0.05)
        assert said[0].startswith("not rebuilt, the last good pages are still served: cards/bench-01.yaml")
        assert "bench-01" in _get(viewer.url + "view.html")


def test_the_fingerprint_sees_a_changed_result(project: Project) -> None:
    before = fingerprint(project)
    outputs = project.run_dir("bench-01", 1, BLIND_RUN) / "outputs.jsonl"
    os.utime(outputs, ns=(outputs.stat().st_atime_ns, outputs.stat().st_mtime_ns + 1_000_000))
    assert fingerprint(project) != before


def test_a_port_in_use_is_one_line(project: Project) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        expected = rf"--port {port}: cannot listen on 127.0.0.1:{port}"
        with pytest.raises(BenchcardError, match=expected), viewing(project, port=port):
            pass
        line = one_line_error(bc(project.root, "site", "--serve", "--port", str(port)))
        assert line.startswith(f"error: --port {port}: cannot listen on 127.0.0.1:{port}")


@pytest.mark.parametrize("command", [("site", "--serve"), ("view",)])
def test_the_command_prints_its_address_in_one_line_and_stops_on_ctrl_c(project: Project,
                                                                         command: tuple[str, ...]) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    # as from a terminal: Ctrl-C handled (a shell's background job, or pytest run from one, starts with it ignored,
    # and a child keeps an ignored signal; one that is handled here is the default in the child)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "benchcard", "-C", str(project.root), *command],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    finally:
        signal.signal(signal.SIGINT, before)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("serving proj's pages at http://127.0.0.1:"), first
        url = first.split(" at ", 1)[1].split(" ", 1)[0]
        assert "Cards" in _get(url + "index.html")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert out.strip() == "stopped" and err == ""


def test_links_to_their_own_folder_in_results_do_not_stop_the_viewer_starting(project: Project) -> None:
    """Hostile audit: two links in results/ to results/ itself made the watcher's walk branch without end (it
    followed every link), so `site --serve` never started. Links below the watched folders are not followed."""
    (project.results_dir / "x").symlink_to(".")
    (project.results_dir / "y").symlink_to(".")
    done: list[frozenset[tuple[str, int, int]]] = []
    walker = threading.Thread(target=lambda: done.append(fingerprint(project)), daemon=True)
    walker.start()
    walker.join(timeout=30)
    assert done, "the fingerprint never finished"
    assert not any("/x/" in path or "/y/" in path for path, _, _ in done[0])
    said: list[str] = []
    with viewing(project, port=0, say=said.append, interval=0.1) as viewer:
        assert "bench-01" in _get(viewer.url + "index.html")


def _ask(url: str, host: str) -> tuple[int, bytes]:
    """A GET of `url` sent over a socket with the Host header a browser sends for `host`."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as conn:
        conn.sendall(f"GET {parts.path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_a_page_elsewhere_that_rebinds_its_name_to_the_viewer_reads_nothing(project: Project) -> None:
    """Hostile audit: a page at evil.example whose name an attacker rebinds to 127.0.0.1 (DNS rebinding) read the
    served pages as its own (unpublished runs, answer keys); the viewer answers only to its local names."""
    with viewing(project, port=0, say=lambda line: None, interval=0.1) as viewer:
        port = viewer.server.server_address[1]
        url = viewer.url + "index.html"
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
            status, body = _ask(url, host)
            assert status == 200 and b"Side by side" in body, host
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", f"[::1]:{port}"):
            status, body = _ask(url, host)
            assert status == 403 and b"Side by side" not in body, host
            assert b"answers only to 127.0.0.1 and localhost" in body
