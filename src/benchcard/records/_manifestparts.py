"""The manifest's parts, typed (`records.Manifest` holds them): the rig, the counts, a judge's plan and its
tokens, and each `--retry-failed` with the closing fields it took away. Kept apart from `records.py` only for
its size (records imports them, so `from benchcard.records.rows import Counts` reads as before).
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType


class RigRecord(msgspec.Struct, frozen=True):
    """The rig a run used, and its one-line description."""

    provider: str
    model: str
    effort: str | None = None
    surface: str | None = None
    line: str = ""


class Counts(msgspec.Struct, frozen=True):
    ok: int = 0
    truncated: int = 0
    failed: int = 0


class Tokens(msgspec.Struct, frozen=True):
    """Tokens a run's judge calls used (`run/judging.py`; the manifest's `judge_tokens`)."""

    input: int
    output: int


class Closed(msgspec.Struct, frozen=True, kw_only=True):
    """The closing fields a run had when `--retry-failed` reopened it, kept so that its earlier
    `outputs_digest` stays on record (`run/_retry.py`'s CLOSING_FIELDS); a field the run did not have is absent."""

    finished_at: str | UnsetType | None = UNSET
    outputs_digest: str | UnsetType | None = UNSET
    scores_digest: str | UnsetType | None = UNSET
    counts: Counts | UnsetType | None = UNSET


class Retry(msgspec.Struct, frozen=True, kw_only=True):
    """One `--retry-failed` in the manifest's `retries`: when, how many failed cells it reopened, where in
    outputs.jsonl it began (`from`; absent in retries made before 2026-12-01, which moved the failed rows to
    attempts.jsonl), the closing fields it took away and, when it reopened a closed run, where its scores
    begin in scores.jsonl (`scores_from`)."""

    at: str
    cells: int
    start: int | UnsetType = msgspec.field(default=UNSET, name="from")
    closed: Closed | UnsetType = UNSET
    scores_from: int | UnsetType = UNSET  # the size scores.jsonl had when a closed run was reopened


class JudgePlan(msgspec.Struct, frozen=True):
    """A judge card's judging plan, added to the manifest when it is sealed (`run/judging.py`)."""

    rig: RigRecord | None = None
    provider_type: str | None = None
    base_url: str | None = None
    per_output: int | None = None  # judgements of each output
    judgements: int | None = None  # judgements planned in all
    seed: int | None = None
    planned_at: str | None = None
    requests_digest: str | None = None  # of sealed/judge-requests.jsonl


class JudgeStretch(msgspec.Struct, frozen=True, kw_only=True):
    """A sequential judge card's judging plan for the stretch before a look after the first (`judge_stretches` in
    the manifest, appended before that stretch's first judge call; the first stretch's is the `judge` block):
    its file under `sealed/`, the judgements planned in it, its seed and its digest."""

    look: int
    file: str  # relative to the run folder: sealed/judge-requests-<look>.jsonl
    judgements: int
    seed: int
    planned_at: str
    requests_digest: str

    def __post_init__(self) -> None:
        """A file read from the manifest is never one outside the run's `sealed/` (an absolute path, or `..`)."""
        parts = self.file.replace("\\", "/").split("/")
        if parts[0] != "sealed" or len(parts) < 2 or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"field 'file': expected a path under the run's sealed/ folder "
                             f"(sealed/judge-requests-<look>.jsonl), got {self.file!r}")


class Grid(msgspec.Struct, frozen=True, kw_only=True):
    """The integration grid a sequential rule's boundaries are computed on (`stats.sequential`: points per look,
    standard deviations below 0, the largest boundary z)."""

    points: int
    sds: float
    cap: float


class Rules(msgspec.Struct, frozen=True, kw_only=True):
    """The parameters of a sequential rule's boundaries that live in benchcard, not on the card: the futility
    test's total level (only when futility may stop the run), the repetitions from which α is spent, the
    integration grid, and how a card that names no spending spends α (`default_spending`, `default_gamma`). A run
    records them in its `sequential` block and a seal beside its digests, so that a later default never changes a
    rule already sealed or run."""

    futility_level: float | UnsetType = UNSET
    decide_from: int
    grid: Grid
    # the spending of a card that names none, and its γ (hsd); absent from seals written before 2026-12-06, when
    # it was obrien-fleming (`LEGACY_SPENDING`)
    default_spending: str | UnsetType = UNSET
    default_gamma: float | UnsetType = UNSET

    @property
    def spending(self) -> tuple[str, float | None]:
        """How a card that names no spending spends α under these rules, and its γ (None: no γ)."""
        if isinstance(self.default_spending, UnsetType):
            return LEGACY_SPENDING, None
        return self.default_spending, None if isinstance(self.default_gamma, UnsetType) else self.default_gamma

    def changed(self, other: Rules, *, spending: bool = True) -> str | None:
        """The first parameter in which `other` differs from these, said as "futility level 0.035, this benchcard
        uses 0.04" (None: alike); the default spending only if `spending` (a card that names none)."""
        pairs = [("futility level", self.futility_level, other.futility_level),
                 ("α spent from repetition", self.decide_from, other.decide_from),
                 ("integration grid", _grid_text(self.grid), _grid_text(other.grid))]
        if spending:
            pairs.insert(0, ("α spent", _spending_text(*self.spending), _spending_text(*other.spending)))
        for name, mine, theirs in pairs:
            if mine != theirs:
                return f"{name} {_text(mine)}, this benchcard uses {_text(theirs)}"
        return None


def _spending_text(spending: str, gamma: float | None) -> str:
    return spending if gamma is None else f"{spending} (γ = {gamma:g})"


def _grid_text(grid: Grid) -> str:
    return f"{grid.points} points over {grid.sds:g} sd, z at most {grid.cap:g}"


def _text(value: object) -> str:
    return "none" if isinstance(value, UnsetType) else f"{value:g}" if isinstance(value, float) else str(value)


#: What manifests written before the rule's parameters were recorded ran at: every benchcard that ran a sequential
#: card spent α from 3 repetitions on the 801-point grid; the futility level was 0.025 until commit 8c9f944
#: (2026-12-05T07:48:18Z) and 0.035 after it (before 0.025 no sequential card could run).
LEGACY_DECIDE_FROM = 3
#: The spending of a card that names none, in every benchcard before 2026-12-06 (seals without `default_spending`).
LEGACY_SPENDING = "obrien-fleming"
LEGACY_GRID = Grid(points=801, sds=9.0, cap=12.0)
LEGACY_FUTILITY_LEVELS: tuple[tuple[float, str], ...] = ((0.025, "2026-12-05T07:48:18Z"), (0.035, "9999"))


class Schedule(msgspec.Struct, frozen=True, kw_only=True):
    """A sequential card's sealed looks as the run planned them (`sequential` in the manifest, written with the
    plan and covered by `plan_digest`): the cumulative repetitions and cells at each look, how α is spent, whether
    futility stops the grid, the α (the win rule's, or a probe gate's) and the rule's parameters benchcard holds
    (`Rules`; absent from manifests written before 2026-12-05, whose values `card/schedule.recorded_rules`
    infers: a record holds what was written, and computes nothing)."""

    looks: list[int]  # repetitions called when each look is taken; the last is the card's repetitions
    cells: list[int]  # cells called when each look is taken; the last is the grid's
    spending: str
    futility: bool
    alpha: float
    gamma: float | UnsetType = UNSET  # Hwang–Shih–DeCani's γ (`spending: hsd` only)
    futility_level: float | UnsetType = UNSET  # the futility test's total level (an ab card with futility)
    decide_from: int | UnsetType = UNSET  # no α is spent at a look before this many repetitions, but the last
    grid: Grid | UnsetType = UNSET

    @property
    def spending_text(self) -> str:
        """The spending as the pages say it: `hsd (γ = -4)` with its γ."""
        return self.spending if isinstance(self.gamma, UnsetType) else f"{self.spending} (γ = {self.gamma:g})"


class Look(msgspec.Struct, frozen=True, kw_only=True):
    """One look a sequential run took (the manifest's `looks`, appended to as each is taken, never changed): the
    sealed rule computed on the cells called so far, against the boundaries of that look, and what it decided
    (on an ab card `win`, `loss`, `futility` or `continue` before the last look, and at it the rule's finding: `win`,
    `loss`, `no-effect` or `inconclusive`; on a probe `pass`, `fail` or `continue`)."""

    look: int  # 1-based
    repetitions: int
    cells: int
    statistic: float | None  # ab: the signed z of the rule's strongest evidence (+ a win, − a loss); probe: the mean
    boundary: float | None  # the statistic at or beyond which the look stops for a win (a probe: passes)
    lower: float | None = None  # at or below which it stops for a loss (a probe: the greatest mean that fails)
    futility: float | None = None  # the futility z at or beyond which it stops for futility (ab, `futility: true`)
    futility_statistic: float | None = None  # the z of "the effect that matters is ruled out" (ab, before the last)
    decision: str
    at: str
    outputs_to: int = 0  # the size of outputs.jsonl when the look was taken (the next look scores the rest)
    scores_to: int = 0  # the size of scores.jsonl once this look's cells were scored
