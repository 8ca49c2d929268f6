"""Small sealed projects and a fake server for the tests of `benchcard run` (plan, store, runner, resume)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner, Result

import benchcard as benchcard_package
from benchcard.card._sealfile import encode_seal
from benchcard.card.load import load_card
from benchcard.card.reader import read_card
from benchcard.card.seal import compute, read, seal
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.run import _calls as calls
from benchcard.testing.cards import COLOUR_AB
from benchcard.testing.fakeserver import FakeServer

from .helpers_wait import wait_until

REPO = Path(__file__).resolve().parents[1]
KEY_ENV = "BENCHCARD_TEST_KEY"
PROBE = "one-word-sentiment"


def next_second() -> None:
    """Sleep into the next whole second: a run id is the start time to the second, so a run started after this
    sorts after every run started before it (half a second on average, not a whole one)."""
    time.sleep(1.0 - time.time() % 1.0 + 0.01)


def write_config(root: Path, base_url: str | None, *, type_: str = "openai", key_env: str | None = KEY_ENV,
                 extra: str = "") -> None:
    """`benchcard.yaml` declaring the provider `fake` (at the fake server) plus whatever `extra` adds."""
    lines = ["providers:", f"  fake: {{type: {type_}" + (f", base_url: '{base_url}'" if base_url else "")
             + (f", api_key_env: {key_env}" if key_env else "") + "}"]
    (root / "benchcard.yaml").write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")


def probe_project(root: Path, base_url: str | None = None, repetitions: int = 1, provider: str = "fake") -> Project:
    """The published probe one-word-sentiment, with its rig pointed at `fake`, sealed."""
    (root / "cards").mkdir(parents=True, exist_ok=True)
    text = (REPO / "cards" / f"{PROBE}.yaml").read_text(encoding="utf-8")
    text = text.replace("rig: {provider: openrouter,", f"rig: {{provider: {provider},")
    text = text.replace("repetitions: 1\n", f"repetitions: {repetitions}\n")
    (root / "cards" / f"{PROBE}.yaml").write_text(text, encoding="utf-8")
    if base_url is not None:
        write_config(root, base_url)
    return seal_card(root, PROBE)


def ab_project(root: Path, base_url: str | None = None, fixtures: int = 3, repetitions: int = 2,
               effort: str = "null", max_tokens: int = 50, treatments: int = 1, user: str | None = None) -> Project:
    """A small ab card (the baseline and `treatments` variants, each saying please its own way × fixtures ×
    repetitions, every body distinct across fixtures), sealed; `user` in place of its prompt's first line."""
    (root / "cards").mkdir(parents=True, exist_ok=True)
    card = COLOUR_AB.format(provider="fake", reps=repetitions, effort=effort, max_tokens=max_tokens)
    card = card.replace("Name the colour.", user) if user is not None else card
    more = "".join(f', {chr(ord("A") + k)}: "Please {k}.\\n"' for k in range(1, treatments))
    card = card.replace('A: "Please.\\n"}', f'A: "Please.\\n"{more}}}')
    (root / "cards" / "colour-ab.yaml").write_text(card, encoding="utf-8")
    folder = root / "fixtures" / "colour-ab"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(fixtures):
        (folder / f"item-{i:03d}.txt").write_text(f"a ripe tomato, number {i}", encoding="utf-8")
    if base_url is not None:
        write_config(root, base_url)
    return seal_card(root, "colour-ab")


def seal_card(root: Path, card_id: str) -> Project:
    project = Project(root)
    seal(load_card(root / "cards" / f"{card_id}.yaml", project), project)
    return project


def seal_card_at(project: Project, card_id: str, when: str, escapes: bool) -> None:
    """Seal the card's version as `benchcard seal` did at `when` (`sealed_at`, UTC), its card read by the slot rule
    of that time (`escapes`: `_util/slots.py`): a version sealed before a change of the rule, by a benchcard that
    named no slot rule in its seals (before 2026-12-07 20:30 UTC), so its date decides."""
    path = project.card_path(card_id)
    card = read_card(path.read_text(encoding="utf-8"), f"cards/{card_id}.yaml", project, path, escapes=escapes)
    seal(card, project)
    sealed = read(card_id, card.version, project)
    assert sealed is not None
    old = msgspec.structs.replace(sealed, sealed_at=when, slots=msgspec.UNSET, unicode=msgspec.UNSET,
                                 whitespace=msgspec.UNSET, json_keys=msgspec.UNSET)
    old = msgspec.structs.replace(old, root=compute(card, project, old).root)
    project.seal_path(card_id, card.version).write_bytes(encode_seal(old))


def copy_repo_card(root: Path, card_id: str) -> None:
    """A card of the repository with its fixtures and keys (not its seal)."""
    (root / "cards").mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "cards" / f"{card_id}.yaml", root / "cards" / f"{card_id}.yaml")
    for folder in ("fixtures", "keys"):
        src = REPO / folder / card_id
        if src.is_dir():
            shutil.copytree(src, root / folder / card_id, ignore=shutil.ignore_patterns("*.seal.json"))


def runs_of(project: Project, card_id: str) -> list[Path]:
    return sorted(p for p in project.results_dir.glob(f"{card_id}/v*/*") if p.is_dir())


def only_run(project: Project, card_id: str) -> Path:
    runs = runs_of(project, card_id)
    assert len(runs) == 1, runs
    return runs[0]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_and_kill(root: Path, args: list[str], ready: Callable[[], bool], timeout: float = 180.0,
                 sig: signal.Signals = signal.SIGKILL, background: bool = False,
                 after: Callable[[], object] | None = None) -> None:
    """Start `benchcard -C root run …args` in a subprocess (the test key in its environment) and SIGKILL it
    (or send it `sig`: SIGINT is a Ctrl-C) the moment `ready()` holds; fails if the run ends first or `ready()`
    never holds within `timeout`. `background`: started as a shell without job control starts `cmd &` (a
    script, nohup, a CI step), with SIGINT ignored. `after` is called once the signal is sent (a server's held
    calls released, for a run that is to go on). The timeout only bounds a stuck run: a sequential run took up
    to 29 s to its first look at load 10 on 2 cores, and one not there at 30 s was killed as if it were."""
    # the benchcard under test, wherever it was imported from (a worktree's src/ before the venv's editable one)
    src = str(Path(benchcard_package.__file__).parents[1])
    env = {**os.environ, KEY_ENV: "sk-test-0000",
           "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    benchcard = str(Path(sys.executable).with_name("benchcard"))
    # as from a terminal: Ctrl-C handled. pytest started in the background (`make test &`, nohup) has it ignored,
    # a child keeps an ignored signal, and the run would never see the SIGINT; a handled one is the child's default
    before = signal.signal(signal.SIGINT, signal.SIG_IGN if background else signal.default_int_handler)
    try:
        proc = subprocess.Popen([benchcard, "-C", str(root), "run", *args], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
    finally:
        signal.signal(signal.SIGINT, before)
    sent = False
    try:
        wait_until(lambda: proc.poll() is not None or ready(), timeout,
                   "the run to be ready to be killed (nothing was killed at that point)", every=0.002)
        assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read()!r}"  # type: ignore[union-attr]
        os.kill(proc.pid, sig)
        sent = True
        if after is not None:
            after()
    finally:
        try:
            proc.wait(timeout=timeout if sent else 0)
        except subprocess.TimeoutExpired:  # still running after `sig` (or never sent it): killed, never left behind
            proc.kill()
            proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()


_DIE_AT = """\
import importlib, os, signal, sys
module, name, target, *when = sys.argv[1].split(":")
owner = importlib.import_module(module)
real = getattr(owner, name)
def dying(*args, **kwargs):
    hit = not target or any(os.path.basename(str(a)) == target for a in args)
    if hit and not when:
        os.kill(os.getpid(), signal.SIGKILL)
    result = real(*args, **kwargs)
    if hit:
        os.kill(os.getpid(), signal.SIGKILL)
    return result
setattr(owner, name, dying)
from benchcard.cli import main
sys.argv = ["benchcard", *sys.argv[2:]]
main()
"""


def killed_at(where: str, *args: str) -> int:
    """`benchcard ARGS` in a subprocess SIGKILLed the moment `where` (`module:function[:file name]`) is called
    (`module:function:file name:after`: the moment it returns): the point of a write that leaves the most behind.
    Returns the exit status (−9 when killed)."""
    src = str(Path(benchcard_package.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-c", _DIE_AT, where, *args], env=env, capture_output=True,
                          check=False).returncode


def bc(project: Project, *args: str) -> Result:
    """`benchcard -C <project> ARGS` as a user runs it."""
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.output, result.stderr, result.exception)
    return result


def summary(result: Result) -> dict[str, Any]:
    """The summary `benchcard run --json` printed."""
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def recorded_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the runner's retry loop asks for (its backoff, `_back_off`) and its rate limiter's, recorded as
    asked (no clock is read by the test)."""
    asked: list[float] = []
    real_sleep, real_back_off = asyncio.sleep, calls._back_off

    async def sleep(delay: float) -> None:
        asked.append(delay)
        await real_sleep(delay)

    async def back_off(s: calls.Session, delay: float) -> None:
        asked.append(delay)
        await real_back_off(s, delay)

    monkeypatch.setattr(calls, "asyncio", SimpleNamespace(**{**vars(asyncio), "sleep": sleep}))
    monkeypatch.setattr(calls, "_back_off", back_off)
    return asked


RED_REPLY = json.dumps({"choices": [{"message": {"content": "red"}, "finish_reason": "stop"}]}).encode()
"""A chat completion answering "red", as a raw-socket server of the tests sends it."""


def read_head(conn: socket.socket) -> bytes:
    """A raw-socket server's read of a request up to the end of its headers (and whatever of the body came)."""
    head = b""
    while b"\r\n\r\n" not in head and (chunk := conn.recv(65536)):
        head += chunk
    return head


def read_request_body(conn: socket.socket, head: bytes) -> bytes:
    """The body of the request `head` began, read to its Content-Length."""
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
    body = head.partition(b"\r\n\r\n")[2]
    while len(body) < length and (chunk := conn.recv(65536)):
        body += chunk
    return body


def send_json(conn: socket.socket, body: bytes, close: bool = True) -> None:
    """A 200 answer of JSON `body`, saying the connection is then closed; `close=False` says nothing of it, as a
    keep-alive server does that may drop the connection later unsaid."""
    said = b"Connection: close\r\n" if close else b""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s"
                 % (said, len(body), body))


def serve_raw(listener: socket.socket, answer: Callable[[socket.socket], None], done: threading.Event) -> None:
    """Accept connections on `listener` in a daemon thread, each answered by `answer` in a thread of its own,
    until `done` is set (then the listener is closed)."""

    def serve() -> None:
        with listener:
            listener.settimeout(0.2)
            while not done.is_set():
                with contextlib.suppress(TimeoutError):
                    conn, _ = listener.accept()
                    threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()


def run_on_raw_server(root: Path, answer: Callable[[socket.socket], None], *args: str, fixtures: int = 2,
                      repetitions: int = 1) -> tuple[Project, Result]:
    """`benchcard run colour-ab *args` in an ab project at `root` whose provider is a raw socket server on
    127.0.0.1 answering each connection with `answer` (serve_raw); the server is closed when the run ends."""
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()
    serve_raw(listener, answer, done)
    try:
        project = ab_project(root, f"http://127.0.0.1:{listener.getsockname()[1]}/v1", fixtures=fixtures,
                             repetitions=repetitions)
        return project, bc(project, "run", "colour-ab", *args)
    finally:
        done.set()


def tls_server(folder: Path) -> tuple[str, Path, list[int], threading.Event]:
    """A chat-completions server over TLS on 127.0.0.1 whose certificate nobody signed (made here by openssl, for
    IP 127.0.0.1): its base URL, the certificate, the handshakes it saw (one a connection; a refused one too) and
    the event that stops it. Every request is answered "red"."""
    cert, key_file = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key_file), "-out",
                    str(cert), "-days", "2", "-subj", "/CN=benchcard-test", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key_file)
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[int] = []
    done = threading.Event()

    def answer(conn: socket.socket) -> None:
        seen.append(1)
        with contextlib.suppress(OSError), context.wrap_socket(conn, server_side=True) as tls:
            read_request_body(tls, read_head(tls))
            send_json(tls, RED_REPLY)

    serve_raw(listener, answer, done)
    return f"https://127.0.0.1:{listener.getsockname()[1]}/v1", cert, seen, done


def held_after(answered: int = 0, *, each: int = 0, held: int | None = None, match: str = "") -> list[dict[str, Any]]:
    """The fake server's `faults` for a run to be killed at a point it cannot run past: of the calls whose prompt
    holds `match`, each body's first `each` calls and `answered` more (over all bodies) are answered as the config
    says, then every call is held (at most `held`, after which calls are answered again, as a resume's) until the
    test releases it (`answer_every_held`). A run killed once it has recorded those rows is killed there whatever
    the load, never after running on to its end (a window of the server's latency, which a loaded machine could
    miss). Answered: a `hang` of 0 s."""
    hang: dict[str, Any] = {"match": match, "kind": "hang", "hang_s": 0}
    faults: list[dict[str, Any]] = []
    if each:
        faults.append(hang | {"times": each})
    if answered:
        faults.append(hang | {"times": 1_000_000, "total": answered})
    faults.append(hang | {"times": 1_000_000, "held": True} | ({"total": held} if held is not None else {}))
    return faults


def holding(server: FakeServer, n: int) -> bool:
    """Whether the server holds `n` calls now: a run killed once it has sent every call a `held_after(held=n)`
    holds has spent that budget, so its resume's calls are answered (killed before it sent them, the resume's
    first calls were held in its place until the client's timeout, about 120 s each)."""
    held: int = server.stats(by_request=False)["held"]
    return held >= n


def answer_every_held(server: FakeServer) -> None:
    """Release the calls a `held` fault holds until none is in flight (a call the client gave up on is still held):
    one left waiting would count in the next test's `in_flight`, `max_in_flight` and `held`."""

    def drained() -> bool:
        server.release()
        in_flight: int = server.stats(by_request=False)["in_flight"]
        return in_flight == 0

    wait_until(drained, 60, "the fake server to answer every call it held")
