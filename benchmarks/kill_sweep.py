"""Kill benchcard's commands at random moments and check that nothing written is lost, torn or rewritten
(docs/scale.md, "Kills and crashes"): the heavy randomized sweep; the deterministic kill points are tests.

Each trial copies a prepared project, starts a real `benchcard` subprocess against the fake OpenAI-compatible
server on 127.0.0.1, and sends it SIGKILL (or SIGINT, SIGTERM) at a moment drawn uniformly over the command's
own uninterrupted wall time (measured first, on a copy). The command is started as from a terminal (Ctrl-C
handled, whatever the sweep's own SIGINT: started with `&` in a script it is ignored, and a SIGINT would be
lost), a SIGTERM's half the time as `&` in a script starts it (SIGINT ignored). After the signal:

1. every `.json` file reads, and every `.jsonl` line reads, a torn last line (no final newline) counted apart;
2. `benchcard ledger --verify` passes;
3. every file that existed before is byte-identical, an append-only `.jsonl` its old bytes plus more, or one the
   uninterrupted command also rewrites (a manifest grown, a site rebuilt, a seal written);
4. the command run again (`run --resume NEW` for a run begun, `replicate --resume NEW` for a replication begun)
   exits 0, and the end state equals the uninterrupted command's: each cell recorded once, the same outputs,
   scores, verdict, table and ledger rows once times, hashes over times, latencies and new run ids are masked (what
   differs between two uninterrupted runs is masked, found by running the reference twice);
5. a SIGINT or SIGTERM left no reply uncounted (the pass records what it counted as it stops); a SIGKILL's are
   counted apart (`replies_left_uncounted`, docs/security.md).

Also run at once: two `verdict`s of one run, two `run --resume` of one run, `site` while `verdict` appends.

    python benchmarks/kill_sweep.py --kills 10 --seed 1          # every scenario, 10 kills each
    python benchmarks/kill_sweep.py --only verdict,site --kills 30
    python benchmarks/kill_sweep.py --only "run --resume,replicate" --signals SIGTERM --kills 12

Prints one line per trial that failed a check, then a JSON summary (kills per command, failures by check).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchcard.testing.cards import COLOUR_AB
from benchcard.testing.fakeserver import FakeServer
from benchproject import sealed_project

KEY_ENV = "KILL_SWEEP_KEY"
CARD = "colour-ab"
BENCHCARD = str(Path(sys.executable).with_name("benchcard"))
RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{4}")
TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z")
TIMED = (".latency_ms", ".attempts", "#rows")  # a cell called again after a kill: its own time, its own tries
SIGNALS = [signal.SIGKILL, signal.SIGKILL, signal.SIGKILL, signal.SIGINT, signal.SIGTERM]
REPLY = {"default_reply": "red", "latency_ms": 15, "latency_jitter_ms": 10, "seed": 1}
MODES: dict[str, dict[str, Any]] = {
    "plain": REPLY,
    "slow": {**REPLY, "latency_ms": 120, "latency_jitter_ms": 80},
    "flaky": {**REPLY, "faults": [{"match": "", "kind": "500", "times": 1},
                                  {"match": "tomato 2", "kind": "drop", "times": 1}]},
    "ratelimited": {**REPLY, "faults": [{"match": "", "kind": "429", "times": 2, "retry_after": 0}]},
    "batch": {**REPLY, "batch": {"validating_s": 0.3, "in_progress_s": 0.6, "finalizing_s": 0.2}},
}


def env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    return {**os.environ, KEY_ENV: "sk-kill-sweep",
            "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}


def bc(root: Path, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([BENCHCARD, "-C", str(root), *args], env=env(), capture_output=True, text=True,
                          check=False, timeout=300)
    if check and done.returncode != 0:
        raise SystemExit(f"benchcard {' '.join(args)} failed: {done.stdout[-400:]}{done.stderr[-800:]}")
    return done


# --------------------------------------------------------------------------- the prepared projects

@dataclass
class Templates:
    """Prepared projects, each copied whole for a trial: their run ids are the same in every copy."""
    folder: Path
    ran: str = ""        # judged (ledger seq 1)
    open_run: str = ""   # run to the end, not judged
    partial: str = ""    # a run killed at about a third of its cells

    def path(self, name: str) -> Path:
        return self.folder / name


def runs(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "results" / CARD / "v1").glob("*") if p.is_dir()
                  and RUN_ID.fullmatch(p.name))


def build_templates(folder: Path, server: FakeServer) -> Templates:
    t = Templates(folder)
    unsealed = folder / "unsealed"
    card = COLOUR_AB.format(provider="bench", reps=3, effort="null", max_tokens=50)
    sealed_project(folder / "sealed", CARD, card, [(f"item-{i:03d}", f"a ripe tomato {i}") for i in range(8)],
                   server.base_url, KEY_ENV)
    shutil.copytree(folder / "sealed", unsealed)
    for seal in (unsealed / "keys").rglob("*.seal.json"):
        seal.unlink()
    ran = folder / "ran"
    shutil.copytree(folder / "sealed", ran)
    bc(ran, "run", CARD, "--json", check=True)
    t.ran = runs(ran)[-1]
    bc(ran, "verdict", t.ran, check=True)
    bc(ran, "run", CARD, "--json", check=True)
    t.open_run = runs(ran)[-1]
    sheet = folder / "sheet"
    shutil.copytree(ran, sheet)
    bc(sheet, "blind-sheet", t.open_run, "--out", str(sheet / "sheet.csv"), check=True)
    with open(sheet / "sheet.csv", encoding="utf-8", newline="") as fh:
        rows = [{**row, "grade": "1"} for row in csv.DictReader(fh)]
    with open(sheet / "graded.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    judged = folder / "judged"
    shutil.copytree(ran, judged)
    bc(judged, "verdict", t.open_run, check=True)
    partial = folder / "partial"
    shutil.copytree(ran, partial)
    server.configure(MODES["slow"])
    before = set(runs(partial))
    proc = start(partial, ["run", CARD, "--json", "--concurrency", "2"])
    deadline = time.monotonic() + 180  # a bound for a stuck run: one killed wherever it stood is no partial target
    while proc.poll() is None:
        new = set(runs(partial)) - before
        out = [partial / "results" / CARD / "v1" / n / "outputs.jsonl" for n in new]
        if out and out[0].is_file() and out[0].read_bytes().count(b"\n") >= 16:
            break
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("gave up waiting 180 s for the partial target's run to write 16 rows")
        time.sleep(0.01)
    else:
        raise SystemExit(f"the partial target's run ended (exit {proc.returncode}) before it wrote 16 rows")
    proc.kill()
    proc.wait()
    server.configure(REPLY)
    [t.partial] = set(runs(partial)) - before
    return t


def start(root: Path, args: list[str], background: bool = False) -> subprocess.Popen[bytes]:
    """`benchcard ARGS` as from a terminal, Ctrl-C handled (a child keeps an ignored SIGINT, and the sweep itself
    has it ignored when started with `&` in a script); `background`: as `&` in a script starts it, SIGINT
    ignored."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN if background else signal.default_int_handler)
    try:
        return subprocess.Popen([BENCHCARD, "-C", str(root), *args], env=env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
    finally:
        signal.signal(signal.SIGINT, before)


# --------------------------------------------------------------------------- what a project holds

def work_file(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.endswith((".tmp", ".part", ".lock"))


def files(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not work_file(rel) and not rel.startswith((".cache", "site/.")):
            out[rel] = p.read_bytes()
    return out


def digests(root: Path) -> dict[str, str]:
    return {rel: hashlib.sha256(data).hexdigest() for rel, data in files(root).items()}


def torn_or_bad(root: Path) -> list[str]:
    """Files a reader would choke on: a `.json` that does not parse, a `.jsonl` line that does not (a torn
    last line, no final newline, is named `torn:`)."""
    bad = []
    for rel, data in files(root).items():
        if rel.endswith(".json"):
            try:
                json.loads(data)
            except ValueError:
                bad.append(f"not JSON: {rel} ({len(data)} bytes)")
        elif rel.endswith(".jsonl"):
            lines = data.split(b"\n")
            for n, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    json.loads(line)
                except ValueError:
                    last = n == len(lines)
                    bad.append(f"{'torn' if last else 'bad line'}: {rel}:{n}")
    return bad


def new_ids(root: Path, template_ids: set[str]) -> list[str]:
    found = set(RUN_ID.findall("\n".join(files(root))))
    return sorted(found - template_ids)


def normal(root: Path, template_ids: set[str]) -> dict[str, Any]:
    """The project's files as comparable values: new run ids named NEW0…, times TIME, the root ROOT; JSON
    flattened to path → value, a `.jsonl` row keyed by its cell (or index); `cells:` counts each cell's rows."""
    names = {rid: f"NEW{i}" for i, rid in enumerate(new_ids(root, template_ids))}

    def sub(text: str) -> str:
        text = text.replace(str(root), "ROOT")
        text = RUN_ID.sub(lambda m: names.get(m.group(0), m.group(0)), text)
        return TIME.sub("TIME", text)

    out: dict[str, Any] = {}
    for rel, data in files(root).items():
        key = sub(rel)
        if rel.endswith(".json"):
            with_flat(out, key, json.loads(sub(data.decode("utf-8"))))
        elif rel.endswith(".jsonl"):
            counts: dict[str, int] = {}
            for n, line in enumerate(sub(data.decode("utf-8")).splitlines()):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError:
                    out[f"{key}#torn"] = line
                    continue
                cell = row.get("cell") if isinstance(row, dict) else None
                ident = str(cell) if cell is not None else str(n)
                counts[ident] = counts.get(ident, 0) + 1
                with_flat(out, f"{key}[{ident}]", row)
            if rel.endswith(("outputs.jsonl", "scores.jsonl")):
                out[f"{key}#rows"] = sum(counts.values())
                out[f"{key}#cells"] = len(counts)
        else:
            out[key] = sub(data.decode("utf-8", "replace"))
    return out


def replied(root: Path) -> list[tuple[dict[str, int], int, int]]:
    """Each run's replies by model, and the rows counted and uncounted, over all its passes."""
    out = []
    for path in sorted((root / "results" / CARD / "v1").glob("*/manifest.json")):
        manifest = json.loads(path.read_bytes())
        models: dict[str, int] = {}
        for counts in manifest.get("replied_models") or []:
            for name, n in counts.items():
                models[name] = models.get(name, 0) + n
        rows = manifest.get("replied_rows") or []
        out.append((models, sum(r["rows"] for r in rows), sum(r["uncounted"] for r in rows)))
    return out


def with_flat(out: dict[str, Any], key: str, value: Any) -> None:
    if isinstance(value, dict):
        if not value:
            out[key] = {}
        for k, v in value.items():
            with_flat(out, f"{key}.{k}", v)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            with_flat(out, f"{key}[{i}]", v)
    else:
        out[key] = value


# --------------------------------------------------------------------------- scenarios

@dataclass
class Scenario:
    name: str
    template: str
    command: Callable[[Templates, Path], list[str]]
    mode: str = "plain"
    again: Callable[[Templates, Path, list[str]], list[str]] | None = None  # the command run again, given new ids
    # filled by the references
    wall: float = 0.0
    rewrites: set[str] = field(default_factory=set)
    reference: dict[str, Any] = field(default_factory=dict)
    masked: set[str] = field(default_factory=set)
    replied: list[tuple[dict[str, int], int, int]] = field(default_factory=list)


def resume_new(kind: str) -> Callable[[Templates, Path, list[str]], list[str]]:
    def again(t: Templates, root: Path, new: list[str]) -> list[str]:
        begun = [n for n in new if (root / "results" / CARD / "v1" / n).is_dir()]
        if not begun:
            return []
        if kind == "run":  # a run killed while planned is planned again by its resume
            return ["run", CARD, "--resume", begun[-1], "--json"]
        folder = root / "results" / CARD / "v1" / begun[-1]
        if not (folder / "manifest.json").is_file():  # what `replicate --resume` says to do then
            shutil.rmtree(folder)
            return []
        return ["replicate", "--resume", begun[-1], "--json"]
    return again


def scenarios() -> list[Scenario]:
    run_args = ["run", CARD, "--json", "--concurrency", "4", "--seed", "7"]
    out = [Scenario("seal", "unsealed", lambda t, r: ["seal", CARD])]
    for mode in ("plain", "slow", "flaky", "ratelimited"):
        out.append(Scenario(f"run/{mode}", "ran", lambda t, r: run_args, mode, resume_new("run")))
    out += [
        Scenario("run --batch", "ran", lambda t, r: [*run_args, "--batch", "--poll-interval", "0.2"], "batch",
                 resume_new("run")),
        Scenario("run --resume", "partial", lambda t, r: ["run", CARD, "--resume", t.partial, "--json",
                                                          "--concurrency", "4"], "slow"),
        Scenario("verdict", "ran", lambda t, r: ["verdict", t.open_run]),
        Scenario("site", "judged", lambda t, r: ["site"]),
        Scenario("blind-sheet", "ran", lambda t, r: ["blind-sheet", t.open_run, "--out", str(r / "sheet.csv")]),
        Scenario("grade", "sheet", lambda t, r: ["grade", t.open_run, str(r / "graded.csv")]),
        Scenario("replicate", "judged", lambda t, r: ["replicate", t.open_run, "--json", "--concurrency", "4"],
                 "plain", resume_new("replicate")),
        Scenario("set-aside", "ran", lambda t, r: ["set-aside", t.open_run, "--why", "a sweep"]),
        Scenario("export", "judged", lambda t, r: ["export", t.open_run, "--out", str(r / "x.csv")]),
    ]
    return out


@dataclass
class Tally:
    kills: dict[str, int] = field(default_factory=dict)
    ended_first: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    by_check: dict[str, int] = field(default_factory=dict)
    done_already: dict[str, int] = field(default_factory=dict)  # killed after its work: run again, it says so
    signals: dict[str, int] = field(default_factory=dict)
    known: dict[str, int] = field(default_factory=dict)  # ends with a kill's replies uncounted, as documented

    def fail(self, scenario: str, check: str, what: str) -> None:
        self.failures.append(f"{scenario}: {check}: {what}")
        self.by_check[check] = self.by_check.get(check, 0) + 1
        print(f"FAIL {scenario}: {check}: {what}", flush=True)


def finish(root: Path, s: Scenario, t: Templates, template_ids: set[str]) -> subprocess.CompletedProcess[str]:
    args = None
    if s.again is not None:
        args = s.again(t, root, new_ids(root, template_ids))
    return bc(root, *(args or s.command(t, root)))


def reference(s: Scenario, t: Templates, work: Path, server: FakeServer) -> None:
    """The command uninterrupted, twice: its wall time, the files it rewrites, its end state, and what differs
    between the two (masked)."""
    states = []
    for k in range(2):
        root = work / f"ref-{k}"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(t.path(s.template), root)
        server.configure(MODES[s.mode])
        before = digests(root)
        t0 = time.monotonic()
        done = bc(root, *s.command(t, root))
        wall = time.monotonic() - t0
        s.wall = wall if k == 0 else min(s.wall, wall)  # the first may pay for cold caches
        if done.returncode != 0:
            raise SystemExit(f"{s.name}: the uninterrupted command failed: {done.stdout[-300:]}{done.stderr[-500:]}")
        after = digests(root)
        s.rewrites |= {rel for rel, d in before.items() if after.get(rel) != d}
        states.append(normal(root, template_ids_of(t)))
    s.replied = replied(work / "ref-0")
    a, b = states
    s.masked = {k for k in a.keys() | b.keys() if a.get(k) != b.get(k) or k.endswith(TIMED)}
    s.reference = a


def template_ids_of(t: Templates) -> set[str]:
    return {t.ran, t.open_run, t.partial}


def trial(s: Scenario, t: Templates, work: Path, server: FakeServer, rng: random.Random, tally: Tally,
          signals: list[signal.Signals] = SIGNALS, earliest: float = 0.15) -> None:
    root = work / "trial"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(t.path(s.template), root)
    server.configure(MODES[s.mode])
    before = files(root)
    sig = rng.choice(signals)
    at = rng.uniform(earliest, 1.0) * s.wall
    background = sig == signal.SIGTERM and rng.random() < 0.5
    name = f"{sig.name}{' (background)' if background else ''}"
    proc = start(root, s.command(t, root), background)
    time.sleep(at)
    if proc.poll() is not None:
        tally.ended_first[s.name] = tally.ended_first.get(s.name, 0) + 1
        assert proc.stderr is not None
        proc.stderr.close()
        return
    os.kill(proc.pid, sig)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        tally.fail(s.name, "stops", f"{name} at {at:.2f} s: still running 60 s later")
        proc.kill()
        proc.wait()
    assert proc.stderr is not None
    proc.stderr.close()
    tally.kills[s.name] = tally.kills.get(s.name, 0) + 1
    tally.signals[name] = tally.signals.get(name, 0) + 1
    label = f"{name} at {at:.2f} s"
    check_after(s, t, root, before, label, tally)
    done = finish(root, s, t, template_ids_of(t))
    end = normal(root, template_ids_of(t))
    if done.returncode != 0:  # a refusal is right only when the killed command had finished its work
        said = (done.stdout + done.stderr).strip()[-300:]
        if any(k not in s.masked and end.get(k) != s.reference.get(k) for k in end.keys() | s.reference.keys()):
            tally.fail(s.name, "runs again", f"{label}: exit {done.returncode}: {said!r}")
            return
        tally.done_already[s.name] = tally.done_already.get(s.name, 0) + 1
    differ = sorted(k for k in end.keys() | s.reference.keys()
                    if k not in s.masked and "/batch/journal.jsonl" not in k and end.get(k) != s.reference.get(k))
    known = [k for k in differ if ".replied_" in k or "not counted" in str(end.get(k))]
    if known:  # the passes' counts as the manifest lists them: a stopped run has one more pass, the same totals
        differ = [k for k in differ if k not in known]
        if replied(root) != s.replied and sig != signal.SIGKILL:  # a stop records what its pass counted
            tally.fail(s.name, "counted", f"{label}: replies {replied(root)} vs {s.replied}")
        elif replied(root) != s.replied:  # docs/security.md: a pass killed outright leaves its replies uncounted
            tally.known[f"{s.name} ({name})"] = tally.known.get(f"{s.name} ({name})", 0) + 1
    if differ:
        shown = "; ".join(f"{k}: {str(end.get(k))[:80]!r} vs {str(s.reference.get(k))[:80]!r}" for k in differ[:4])
        tally.fail(s.name, "end state", f"{label}: {len(differ)} differ: {shown}")


def check_after(s: Scenario, t: Templates, root: Path, before: dict[str, bytes], label: str, tally: Tally) -> None:
    for bad in torn_or_bad(root):
        tally.fail(s.name, "reads", f"{label}: {bad}")
    verify = bc(root, "ledger", "--verify")
    if verify.returncode != 0 and (root / "results" / "ledger.jsonl").exists():
        tally.fail(s.name, "ledger --verify", f"{label}: {(verify.stdout + verify.stderr).strip()[-300:]!r}")
    now = files(root)
    for rel, old in before.items():
        new = now.get(rel)
        if new == old:
            continue
        if new is None:
            tally.fail(s.name, "kept", f"{label}: {rel} removed")
        elif rel.endswith(".jsonl") and new.startswith(old):
            continue
        elif rel not in s.rewrites:
            tally.fail(s.name, "kept", f"{label}: {rel} rewritten ({len(old)} → {len(new)} bytes)")


# --------------------------------------------------------------------------- at once

def together(name: str, template: Path, commands: list[list[str]], work: Path, tally: Tally,
             t: Templates, then: list[str] | None = None) -> None:
    root = work / "together"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(template, root)
    procs = [subprocess.Popen([BENCHCARD, "-C", str(root), *c], env=env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for c in commands]
    outs = [p.communicate(timeout=300) for p in procs]
    codes = [p.returncode for p in procs]
    tally.kills[name] = tally.kills.get(name, 0) + 1
    for bad in torn_or_bad(root):
        tally.fail(name, "reads", bad)
    verify = bc(root, "ledger", "--verify")
    if verify.returncode != 0:
        tally.fail(name, "ledger --verify", (verify.stdout + verify.stderr).strip()[-300:])
    if 0 not in codes:
        tally.fail(name, "one succeeds", f"exits {codes}: {[o[1][-200:] for o in outs]}")
    if then:
        done = bc(root, *then)
        if done.returncode != 0:
            tally.fail(name, "runs again", (done.stdout + done.stderr)[-300:])
    ledger = (root / "results" / "ledger.jsonl").read_bytes().splitlines()
    runs_in = [json.loads(x)["run"] for x in ledger if x.strip()]
    if len(runs_in) != len(set(runs_in)):
        tally.fail(name, "ledger once", f"runs {runs_in}")
    for out in (root / "results").rglob("outputs.jsonl"):
        rows = [json.loads(x) for x in out.read_bytes().splitlines() if x.strip()]
        cells = [r["cell"] for r in rows if r.get("status") == "ok"]
        if len(cells) != len(set(cells)):
            tally.fail(name, "each cell once", f"{out.parent.name}: {len(cells)} ok rows, {len(set(cells))} cells")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=10, help="kills per scenario")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="scenario names, comma-separated (a prefix matches)")
    ap.add_argument("--together", type=int, default=3, help="rounds of each pair run at once")
    ap.add_argument("--signals", default="", help="send only these (SIGKILL,SIGINT,SIGTERM; default: SIGKILL "
                    "three times in five, SIGINT and SIGTERM once each)")
    ap.add_argument("--earliest", type=float, default=0.15, help="the earliest moment, as a share of the command's "
                    "wall time (a short command's start, Python's imports, before it writes anything, is much of it)")
    ap.add_argument("--json", type=Path, help="also write the summary here")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    signals = [signal.Signals[name.strip()] for name in args.signals.split(",")] if args.signals else SIGNALS
    tally = Tally()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kill-sweep-") as tmp, FakeServer(REPLY) as server:
        work = Path(tmp)
        t = build_templates(work / "templates", server)
        chosen = [s for s in scenarios()
                  if not args.only or any(s.name.startswith(o) for o in args.only.split(","))]
        for s in chosen:
            reference(s, t, work, server)
            print(f"{s.name}: uninterrupted {s.wall:.2f} s, rewrites {sorted(s.rewrites)}, "
                  f"masked {sorted(s.masked)[:12]}", flush=True)
            for _ in range(args.kills):
                trial(s, t, work, server, rng, tally, signals, args.earliest)
        if not args.only:
            server.configure(REPLY)
            for _ in range(args.together):
                together("2 × verdict", t.path("ran"), [["verdict", t.open_run]] * 2, work, tally, t)
                together("site while verdict", t.path("ran"), [["verdict", t.open_run], ["site"]], work, tally, t)
                server.configure(MODES["slow"])
                together("2 × run --resume", t.path("partial"),
                         [["run", CARD, "--resume", t.partial, "--json"]] * 2, work, tally, t,
                         then=["run", CARD, "--resume", t.partial, "--json"])
                server.configure(REPLY)
    summary = {"seed": args.seed, "kills": tally.kills, "signals": tally.signals,
               "ended_before_the_signal": tally.ended_first,
               "refused_again_as_done": tally.done_already,
               "failures": len(tally.failures),
               "replies_left_uncounted": tally.known, "by_check": tally.by_check,
               "wall_s": round(time.monotonic() - t0)}
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({**summary, "lines": tally.failures}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
