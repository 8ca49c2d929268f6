"""What the verdict proves about a run before it unblinds it, and what `ledger --verify` proves after.

Before: the sealed plan is the one written at plan time (`records.plandigest`: every file under `sealed/`, the rig
and the other plan fields), the assignment is the one the card and the manifest's seed give (`run.grid`
re-derives it: swapped variant labels are refused even with recomputed digests), and the outputs and scores
have their digests, which match. After: the ledger row carries those digests, the digest of `verdict.json`
(`evidence_digests`) and of every other file of the run folder the verdict rests on (`evidence_files`: the
judge's requests and outputs, grades, blind-sheet mappings, batch journal and chunks, table.csv), and
`evidence_problems` names every file of a judged run that is missing or changed. `ledger --verify`, the gate,
`verdict --show` and the site all ask it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from benchcard._util.hashing import digest, file_digest
from benchcard._util.safeio import json_loads, present, record_loads
from benchcard.card.model import Card
from benchcard.errors import JsonProblem, VerdictError
from benchcard.project import Project
from benchcard.records.ledgerrow import LedgerRow
from benchcard.records.plandigest import sealed_problems
from benchcard.records.rows import ASSIGNMENT, OUTPUTS, SCORES, SEALED, SET_ASIDE, dumps_line
from benchcard.records.verdictfigures import known
from benchcard.records.verdictfile import VerdictFile
from benchcard.run.grid import assignment_digest, planned_assignment
from benchcard.verdict.runfolder import VERDICT_FILE
from benchcard.verdict.table import TABLE_FILE

#: Fields of verdict.json that the ledger sets after the row's digest was taken.
VERDICT_UNHASHED = ("given_at", "ledger")
#: The manifest's digests a ledger row anchors, and the file each one covers.
ANCHORED = {"outputs_digest": OUTPUTS, "scores_digest": SCORES}
#: Files of a run folder anchored by a digest of their own (the manifest's fields through plan_digest and the
#: digests above, verdict.json through verdict_digest), hence not listed again in a row's `evidence_files`.
OWN_DIGEST = frozenset({"manifest.json", OUTPUTS, SCORES, VERDICT_FILE})


def check_sealed(run_dir: Path, manifest: Mapping[str, Any], card: Card, expected: str | None = None) -> None:
    """Refuse a run whose sealed plan changed, or whose assignment is not the one its card and seed give.

    `expected` may be `assignment_digest(card, seed)`, computed meanwhile on another thread; when the sealed
    assignment's digest equals it, no line is read; otherwise the lines are compared one by one."""
    run = run_dir.name
    problems = sealed_problems(run_dir, manifest)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise VerdictError(f"run {run}: {problems[0]}{more}; the run cannot be judged")
    for key in ANCHORED:
        if not isinstance(manifest.get(key), str):
            raise VerdictError(f"run {run}: manifest has no {key}; cannot show its {ANCHORED[key]} is unchanged")
    seed = manifest.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise VerdictError(f"run {run}: manifest field 'seed' is {seed!r}; the assignment cannot be re-derived")
    same = (expected if expected is not None else assignment_digest(card, seed)) == \
        manifest["sealed"].get(f"{SEALED}/{ASSIGNMENT}")
    problem = None if same else assignment_problem(run_dir / SEALED / ASSIGNMENT, card, seed)
    if problem:
        raise VerdictError(f"run {run}: {problem}; the run cannot be judged")


def assignment_problem(path: Path, card: Card, seed: int) -> str | None:
    """The first line of `sealed/assignment.jsonl` that differs from the plan re-derived from the card and the
    seed, said in a phrase; None when every line agrees and none is missing or extra."""
    where = f"{SEALED}/{ASSIGNMENT}"
    expected = planned_assignment(card, seed)
    try:
        with open(path, "rb") as fh:
            for n, line in enumerate(fh, 1):
                want = next(expected, None)
                if want is None:
                    return f"{where} has more lines than the plan of {card.id} v{card.version} (line {n})"
                if line == dumps_line(want):
                    continue
                try:
                    got = json_loads(line)  # raw, not an AssignmentRow: a mistyped field is named, not refused
                except ValueError:
                    return f"{where} line {n} is not JSON"
                row: dict[str, Any] = msgspec.to_builtins(want)
                if got != row:
                    field = next((k for k in row if not isinstance(got, dict) or got.get(k) != row[k]), "cell")
                    shown = got.get(field) if isinstance(got, dict) else got
                    return (f"{where} line {n} (cell {row['cell']}): {field} is {shown!r}, but the card and the "
                            f"manifest's seed {seed} give {row[field]!r}")
    except OSError:
        return f"{where} is missing"
    if next(expected, None) is not None:
        return f"{where} ends before the plan of {card.id} v{card.version} does"
    return None


def verdict_digest(data: Mapping[str, Any]) -> str:
    """The digest of a verdict.json's content, without the fields the ledger sets after the row exists."""
    return digest({k: v for k, v in data.items() if k not in VERDICT_UNHASHED})


class Anchors(msgspec.Struct, frozen=True):
    """What a ledger row anchors of its run: the plan's digest and the digests of outputs and scores (None where
    there is none)."""

    plan_digest: str | None
    outputs_digest: str | None
    scores_digest: str | None

    def by_key(self) -> dict[str, str | None]:
        """The digests keyed by their manifest field, to compare field by field."""
        return {"plan_digest": self.plan_digest, "outputs_digest": self.outputs_digest,
                "scores_digest": self.scores_digest}


def evidence_digests(manifest: Mapping[str, Any]) -> Anchors:
    """The digests a run's manifest (as written) records; a value that is not text is kept as its repr, so that
    it differs from any digest instead of passing for a missing one."""
    def text(key: str) -> str | None:
        value = manifest.get(key)
        return value if value is None or isinstance(value, str) else repr(value)

    return Anchors(text("plan_digest"), text("outputs_digest"), text("scores_digest"))


def evidence_files(run_dir: Path, manifest: Mapping[str, Any],
                   extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every regular file of a run folder that the verdict rests on and that no other digest covers, by its path
    in the folder (`/`-separated), sorted: judge requests and outputs, `grades/*.csv`, `sealed/sheet-*.jsonl`,
    `batch/` (journal, chunks, downloaded results), and whatever a later version adds. Left out: the files in
    `OWN_DIGEST`, the sealed plan (`manifest.sealed`, anchored through plan_digest), links, and names starting
    with `.` or ending in `.tmp`/`.lock` (work files). `extra` adds files about to be moved in (`table.csv`)."""
    sealed = manifest.get("sealed")
    skip = OWN_DIGEST | (set(sealed) if isinstance(sealed, Mapping) else set())
    found: dict[str, str] = dict(extra or {})
    for top, dirs, names in os.walk(run_dir):  # links to folders are not followed
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            path = Path(top, name)
            rel = path.relative_to(run_dir).as_posix()
            if (rel in skip or name.startswith(".") or name.endswith((".tmp", ".lock")) or path.is_symlink()
                    or not path.is_file()):
                continue
            found[rel] = file_digest(path)
    return dict(sorted(found.items()))


def _file_problems(folder: Path, evidence: str, files: Mapping[str, str]) -> list[str]:
    """Each file a row's `evidence_files` lists that is missing or no longer has its digest."""
    problems = []
    for rel, want in files.items():
        path = folder / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            problems.append(f"the row lists {rel!r}, which is not a path inside the run folder")
        elif path.is_symlink() or not path.is_file():
            problems.append(f"{evidence}/{rel} {_gone(path)}")
        elif file_digest(path) != want:
            problems.append(f"{evidence}/{rel} changed after the verdict (ledger row {want})")
    return problems


def anchored(row: LedgerRow) -> bool:
    """True when the row carries its run's digests; rows entered before they did are checked against the run's
    own manifest only (the ledger is append-only: such a row can never be given them). A `compare` row anchors
    its table.csv and verdict.json instead."""
    if row.kind == "compare":
        return isinstance(row.table_digest, str)
    return isinstance(row.plan_digest, str)


def _anchors(row: LedgerRow) -> Anchors:
    """The run's digests as the row carries them (None where it carries none)."""
    def text(value: str | msgspec.UnsetType | None) -> str | None:
        return None if isinstance(value, msgspec.UnsetType) else value

    return Anchors(text(row.plan_digest), text(row.outputs_digest), text(row.scores_digest))


def evidence_problems(root: Path, row: LedgerRow) -> list[str]:
    """Every file of a judged run that is missing or no longer matches its ledger row, one phrase each.

    `root` is the project folder; the row's `evidence` is the run folder relative to it. For a row that is not
    `anchored`, each file is checked against the digest its manifest records, where it records one.
    """
    evidence = row.evidence
    if not evidence:
        return ["the row names no evidence folder"]
    folder = root / evidence
    if row.kind == "compare":
        return _compare_problems(folder, evidence, row)
    try:
        if not present(folder / "manifest.json", f"{evidence}/manifest.json", VerdictError):
            return [f"{evidence}/ is missing (no manifest.json)"]
    except VerdictError as exc:
        return [str(exc)]
    try:
        manifest = record_loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except JsonProblem as exc:
        return [f"{evidence}/manifest.json: {exc} (edited after the verdict)"]
    except (OSError, ValueError, UnicodeDecodeError):
        return [f"{evidence}/manifest.json is unreadable"]
    if not isinstance(manifest, dict):
        return [f"{evidence}/manifest.json is not a JSON object"]
    problems = _digest_problems(folder, evidence, manifest, row) + _marked_problems(folder, evidence, manifest)
    if isinstance(row.evidence_files, dict):
        problems += _file_problems(folder, evidence, row.evidence_files)
    verdict = _verdict_problems(folder / VERDICT_FILE, f"{evidence}/{VERDICT_FILE}", row)
    if not os.path.lexists(folder / VERDICT_FILE):
        verdict = [f"{p}: {_cut_short(row)}" for p in verdict]
    return problems + verdict


def _marked_problems(folder: Path, evidence: str, manifest: Mapping[str, Any]) -> list[str]:
    """A ledgered run marked as no run of the ledger: a trial (its manifest's `scratch`, which the verdict never
    enters, so the row was made by hand: `ledger.append` hashes any row), or set aside (`benchcard set-aside`
    refuses a ledgered run, so the mark was written by hand after the verdict; it moved the card's result to an
    earlier row before the pickers ignored it)."""
    problems = []
    scratch = manifest.get("scratch")
    if scratch:
        why = f" ({scratch})" if isinstance(scratch, str) else ""
        problems.append(f"{evidence}/manifest.json: a scratch run{why}, which is never in the ledger")
    if os.path.lexists(folder / SET_ASIDE):
        problems.append(f"{evidence}/{SET_ASIDE}: a run in the ledger is never set aside; the mark was written after "
                        "its verdict, and its row stays the record")
    return problems


def _cut_short(row: LedgerRow) -> str:
    """The remedy for a judged run without its verdict.json: a verdict killed after its row was appended (and a
    hand that deleted the file) is completed by the same verdict given again, which writes its files under the
    row; the files missing alone read as evidence destroyed."""
    return (f"a verdict cut short after its row was entered (a kill, a full disk), or its files deleted; "
            f"`benchcard verdict {row.run}` writes them again under seq {row.seq} when the evidence is as entered")


def _digest_problems(folder: Path, evidence: str, manifest: dict[str, Any], row: LedgerRow) -> list[str]:
    """The run's digests against its ledger row (an `anchored` row), else against its own manifest: the
    manifest's digests themselves, the sealed plan, and outputs.jsonl and scores.jsonl."""
    problems: list[str] = []
    recorded = evidence_digests(manifest).by_key()
    reference = _anchors(row).by_key() if anchored(row) else recorded
    if anchored(row):
        for key, value in recorded.items():
            if value != reference[key]:
                problems.append(f"{evidence}/manifest.json: {key} differs from the ledger row")
    if anchored(row) or "plan_digest" in manifest:
        problems += [f"{evidence}/{p}" for p in sealed_problems(folder, manifest)]
    for key, name in ANCHORED.items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{evidence}/{name} {_gone(path)}")
        elif reference.get(key) is not None and file_digest(path) != reference.get(key):
            where = "ledger row" if anchored(row) else "manifest"
            problems.append(f"{evidence}/{name} changed ({where} {reference.get(key)})")
    return problems


def _compare_problems(folder: Path, evidence: str, row: LedgerRow) -> list[str]:
    """A `benchcard compare` row (unsealed, no run folder): its table.csv and verdict.json as entered."""
    table = folder / TABLE_FILE
    problems = []
    if not table.is_file():
        problems.append(f"{evidence}/{TABLE_FILE} {_gone(table)}")
    elif file_digest(table) != row.table_digest:
        problems.append(f"{evidence}/{TABLE_FILE} changed (ledger row {row.table_digest})")
    return problems + _verdict_problems(folder / VERDICT_FILE, f"{evidence}/{VERDICT_FILE}", row)


def _gone(path: Path) -> str:
    """What stands where a file of the evidence should be: nothing, or something else put in its place (a folder
    was said to be missing, though `ls` shows it)."""
    return "is missing" if not os.path.lexists(path) else "is not a regular file any more (a folder, a link)"


def verdict_matches(data: Mapping[str, Any], row: LedgerRow) -> bool:
    """True when a run's verdict.json is the one its ledger row was entered with."""
    return not _verdict_problems_of(data, "verdict.json", row)


def _verdict_problems(path: Path, shown: str, row: LedgerRow) -> list[str]:
    if not path.is_file():
        return [f"{shown} {_gone(path)}"]
    try:
        data = record_loads(path.read_text(encoding="utf-8"))
    except JsonProblem as exc:
        return [f"{shown}: {exc} (edited after the verdict)"]
    except (OSError, ValueError, UnicodeDecodeError):
        return [f"{shown} is unreadable"]
    if not isinstance(data, dict):
        return [f"{shown} is not a JSON object"]
    return _verdict_problems_of(data, shown, row)


def _verdict_problems_of(data: Mapping[str, Any], shown: str, row: LedgerRow) -> list[str]:
    """verdict.json as written (its digest is over the file's own fields) against the row it was entered as."""
    said = {"run": row.run, "finding": row.finding, "outcome": row.outcome}
    problems = [f"{shown}: {key} is {data.get(key)!r}, the ledger row says {value!r}"
                for key, value in said.items() if data.get(key) != value]
    entered = data.get("ledger")
    if not isinstance(entered, Mapping) or entered.get("hash") != row.hash:
        problems.append(f"{shown} does not name this ledger row (seq {row.seq})")
    if not problems and isinstance(row.verdict_digest, str) and verdict_digest(data) != row.verdict_digest:
        problems.append(f"{shown} changed after the verdict was given")
    return problems


def record_problems(project: Project, run_dir: Path, verdict: VerdictFile,
                    row: LedgerRow | None) -> list[str]:
    """What of a judged run's record differs from its ledger row (`integrity.evidence_problems`: verdict.json,
    the plan, outputs, scores, and every file the row anchors). A verdict.json with no row is a problem unless
    it is a scratch verdict, which never has one."""
    if row is None:
        if known(verdict.scratch):
            return []
        return [f"{project.relative(run_dir / VERDICT_FILE)}: no ledger row holds run {run_dir.name}, so nothing "
                "shows this verdict was given here (benchcard ledger --verify)"]
    return evidence_problems(project.root, row)
