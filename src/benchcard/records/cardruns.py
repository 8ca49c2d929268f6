"""Which run a card's name stands for: one rule, for every command and page that picks "the card's run".

A card's runs are ordered by version, then by run id (its UTC start, to the second, but never earlier than a
second after the newest id already in its version's folder, `run/store.py`: a run started in the same second as
another, or after the clock was set back, is still the newest); a run set aside (`records/setaside.py`) is
never picked. There are two picks, and only two:

- `result`, the card's result: the run of its latest verdict in the ledger (the highest `seq`), never a
  transfer (a replication sent to another rig speaks about that rig). A scratch run
  or a trial verdict never has a row, so a trial never takes over the result. `verdict CARD --show` (also
  with `--gate`), `verdict_of(CARD)`, the card pages' headline and the index.
- `newest`, the newest run, scratch or not: what a command that acts on a run takes when given the card's name
  (`verdict CARD` gives that run's verdict, `status`, `plan --from`, `blind-sheet`, `grade`, `export`,
  `read_run`).

The site's runs (`publish/_runs.Run`) and the runs read here (`CardRun`) are picked by the same functions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, TypeVar

from benchcard.errors import RunError
from benchcard.project import Project, version_named
from benchcard.records import ledger
from benchcard.records.rows import MANIFEST, RUN_ID, manifest_or_none
from benchcard.records.runreader import manifest_present, set_aside_of

Want = Literal["result", "newest"]


class Pickable(Protocol):
    """What the rule reads of a run."""

    @property
    def version(self) -> int: ...
    @property
    def run_id(self) -> str: ...
    @property
    def ledger_seq(self) -> int | None: ...
    @property
    def is_set_aside(self) -> bool: ...
    @property
    def is_transfer(self) -> bool: ...


R = TypeVar("R", bound=Pickable)


def in_order(runs: Iterable[R]) -> list[R]:
    """Oldest first: by version, then by run id (the UTC start)."""
    return sorted(runs, key=lambda r: (r.version, r.run_id))


def newest(runs: Iterable[R]) -> R | None:
    """The newest run not set aside."""
    kept = [r for r in in_order(runs) if not r.is_set_aside]
    return kept[-1] if kept else None


def result(runs: Iterable[R]) -> R | None:
    """The card's result: the run of its latest verdict in the ledger. A transfer (the card's requests sent to
    another rig by `benchcard replicate --provider/--model`) speaks about that rig, never for the card's own."""
    rows = [r for r in runs if r.ledger_seq is not None and not r.is_set_aside and not r.is_transfer]
    return max(rows, key=lambda r: r.ledger_seq or 0) if rows else None


@dataclass(frozen=True)
class CardRun:
    """One run folder of a card, as the rule reads it."""

    folder: Path
    version: int
    run_id: str
    scratch: bool
    finished: bool
    has_verdict: bool
    ledger_seq: int | None
    is_set_aside: bool
    is_transfer: bool = False


def card_runs(project: Project, card_id: str) -> list[CardRun]:
    """Every run folder of the card with a readable manifest, oldest first."""
    seqs = {row.run: row.seq for row in ledger.card_rows(project, card_id)}
    found = []
    for path in (project.results_dir / card_id).glob(f"v*/*/{MANIFEST}"):
        folder, version = path.parent, version_named(path.parent.parent.name)
        manifest = manifest_or_none(path) if manifest_present(folder) else None
        if manifest is None or version is None or not RUN_ID.fullmatch(folder.name):
            continue
        found.append(CardRun(folder, version, folder.name, bool(manifest.scratch),
                             manifest.finished_at is not None, (folder / "verdict.json").is_file(),
                             seqs.get(folder.name), _set_aside(folder, seqs),
                             manifest.replicates is not None and manifest.replicates.transfer))
    return in_order(found)


def _set_aside(folder: Path, seqs: dict[str, int]) -> bool:
    """Whether the run is set aside: a ledgered run never is (its row is the record; a mark written by hand into its
    folder is named by `integrity.evidence_problems`, and must not move the card's result to an earlier row)."""
    return folder.name not in seqs and set_aside_of(folder) is not None


def pick(project: Project, card_id: str, want: Want) -> Path:
    """The folder a card's name stands for (see the module docstring); RunError saying why there is none."""
    runs = card_runs(project, card_id)
    where = f"{project.relative(project.results_dir)}/{card_id}/"
    if not runs:
        raise RunError(f"{card_id}: the card has no run under {where}" + "".join(
            f"; {_unplanned_text(project, folder)}" for folder in unplanned(project, card_id)[:1]))
    latest = newest(runs)
    chosen = result(runs) if want == "result" else latest
    if chosen is not None:
        return chosen.folder
    if latest is None:
        raise RunError(f"{card_id}: every run of the card is set aside ({len(runs)}); start a new one")
    raise RunError(f"{card_id}: no verdict of the card is in the ledger yet; its newest run, {latest.run_id}, "
                   f"{_standing(card_id, latest)}")


def _standing(card_id: str, run: CardRun) -> str:
    """Where a run that is not the card's result stands, and the command that goes on from there."""
    kind = "a scratch run" if run.scratch else "a run"
    if not run.finished:
        return f"is {kind} still unfinished (`benchcard run {card_id} --resume {run.run_id}`)"
    if run.has_verdict:
        return f"has a scratch verdict, never a result (`benchcard verdict {run.run_id} --show` prints it)"
    return f"is {kind} awaiting its verdict (`benchcard verdict {run.run_id}` gives it)"


def find_run(project: Project, run: str | Path, want: Want = "newest") -> Path:
    """A run folder from its path, its run id (or a unique prefix of one) anywhere under `results/`, or a card
    id — meaning the run that card's name stands for (`records/cardruns.py`: its result, or its newest run)."""
    text = str(run)
    as_path = Path(text)
    for candidate in (as_path, project.root / as_path):
        if manifest_present(candidate):
            return project.run_inside(candidate, text)
    card_runs = project.results_dir / text
    if text and "/" not in text and card_runs.is_dir() and not manifest_present(card_runs):
        return project.run_inside(pick(project, text, want), text)
    if as_path.is_dir():
        raise RunError(f"{text}: not a run folder (no manifest.json)")
    name = as_path.name
    matches = sorted(p.parent for p in project.results_dir.glob(f"*/v*/{name}*/manifest.json"))
    exact = [m for m in matches if m.name == name]
    if exact:
        matches = exact
    if not matches:
        half = unplanned(project, "*", name)
        if len(half) == 1:
            raise RunError(_unplanned_text(project, half[0]))
        if text and "/" not in text and "\\" not in text and project.card_path(text).is_file():
            # a card's name, its card there, no run of it yet: the line below told the user to give a card id
            raise RunError(f"{text}: card {project.relative(project.card_path(text))} has no run yet under "
                           f"{project.relative(project.results_dir)}/; start one with `benchcard run {text}`")
        raise RunError(f"{text}: no such run under {project.relative(project.results_dir)}/ "
                       "(give a run id like 20261130T151200Z-3f9a, a card id, or the run's folder)")
    if len(matches) > 1:
        shown = ", ".join(project.relative(m) for m in matches[:3])
        raise RunError(f"{text}: ambiguous; matches {len(matches)} runs ({shown}{', …' if len(matches) > 3 else ''})")
    return project.run_inside(matches[0], text)


def unplanned(project: Project, card_id: str, name: str = "") -> list[Path]:
    """Run folders of the card (`*`: any) whose id starts with `name` and that have no manifest: a run stopped
    while it was planned (killed; a full disk removes its own), which every reader of runs leaves out."""
    return sorted(p for p in project.results_dir.glob(f"{card_id}/v*/{name}*")
                  if RUN_ID.fullmatch(p.name) and p.is_dir() and not manifest_present(p))


def _unplanned_text(project: Project, folder: Path) -> str:
    """What a half-made run folder is, and what may be done with it."""
    card = folder.parents[1].name
    return (f"{project.relative(folder)} is a run stopped while it was planned (no {MANIFEST}: no call was made "
            f"from it), which no command reads; `benchcard run {card} --resume {folder.name}` plans it again, or "
            "delete the folder")
