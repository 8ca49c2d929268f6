"""The on-disk contracts of a run folder, typed once: its manifest and the rows of its JSONL files.

Every file a run leaves is written and read through this module, as msgspec `Struct`s, so a row's shape is
stated in one place and a bad row is named by file, line and field (`line 7: Expected `int`, got `str` - at
`$.repetition``). Decoding ignores fields a struct does not know, and every field added after the first
release has a default, so files written by a newer benchcard (or an older one) still read. The layout of a run
folder is drawn in docs/architecture.md, "The run folder".

JSONL is one dialect when written: compact separators, UTF-8 kept as is, one row per line, the cell first.
Readers accept any valid JSON per line (older `scores.jsonl` files were written with spaces); digests are over
the bytes as written, which are never rewritten.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from benchcard._util.numfmt import fixed
from benchcard._util.safeio import bom_said, json_loads
from benchcard.errors import BenchcardError, RunError
from benchcard.records.replication import ReplicaLink, RuleRecord

MANIFEST = "manifest.json"
OUTPUTS = "outputs.jsonl"
SCORES = "scores.jsonl"
SEALED = "sealed"
ASSIGNMENT = "assignment.jsonl"
REQUESTS = "requests.jsonl"
VERDICT = "verdict.json"
JUDGE_REQUESTS = "judge-requests.jsonl"  # a judge card's plan, under sealed/ (docs/judge.md)
JUDGE_OUTPUTS = "judge-outputs.jsonl"  # the judge's calls, the shape of outputs.jsonl
SET_ASIDE = "set-aside.jsonl"  # `benchcard set-aside` (records/setaside.py): append-only, one SetAside a line
RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{4}")

# ------------------------------------------------------------------------------------- the status vocabulary

#: What a call came to: a cell's row in outputs.jsonl and scores.jsonl says one of these. `ok`: an answer, scored.
#: `truncated`: the token limit cut it. `failed`: no answer — a transport failure, the API withholding or refusing
#: it, an error reported inside a 200 answer, a stop that ends no answer (`providers.base.status_for`). Only `ok` is
#: ever scored.
Status = Literal["ok", "truncated", "failed"]
STATUSES: tuple[Status, ...] = ("ok", "truncated", "failed")
#: A planned cell as the verdict sees it: one of STATUSES, or "missing" (no output, or no score).
CELL_STATUSES = (*STATUSES, "missing")
OK, TRUNCATED, FAILED, MISSING = range(4)  # codes into CELL_STATUSES, as the verdict's arrays hold them
STATUS_CODES: dict[str, int] = {s: i for i, s in enumerate(STATUSES)}


# ------------------------------------------------------------------------------------------------- run rows
# Rows hold only strings, numbers and plain containers, never a cycle: `gc=False` keeps 10⁵ of them out of the
# garbage collector's scans.


class Usage(msgspec.Struct, frozen=True, gc=False):
    """Tokens of one call, as the provider reported them (0 when it did not).

    `input` counts every input token, those the vendor read from or wrote to its prompt cache included (OpenAI's
    `prompt_tokens`; Anthropic's `input_tokens` plus its cache reads and writes), as `output` counts reasoning.
    `cached` says how many of them were read from the cache, `cache_write` how many were written to it (Anthropic),
    `cache_write_1h` how many of those to its 1-hour cache: each is written only when a reply says some were, so
    that a row of a call without them is the bytes it was before they were recorded (and such a row reads as 0).
    """

    input: int = 0
    output: int = 0
    reasoning: int = 0
    cached: int | UnsetType = UNSET
    cache_write: int | UnsetType = UNSET
    cache_write_1h: int | UnsetType = UNSET

    @classmethod
    def of(cls, input: int, output: int, reasoning: int = 0, cached: int = 0, cache_write: int = 0,
           cache_write_1h: int = 0) -> Usage:
        """A usage with the cache's counts recorded only when they are not 0."""
        return cls(input, output, reasoning, cached or UNSET, cache_write or UNSET, cache_write_1h or UNSET)

    @property
    def cached_tokens(self) -> int:
        """Input tokens read from the prompt cache (0 when none were said)."""
        return 0 if isinstance(self.cached, UnsetType) else self.cached

    @property
    def written_tokens(self) -> int:
        """Input tokens written to the prompt cache, at either lifetime (0 when none were said)."""
        return 0 if isinstance(self.cache_write, UnsetType) else self.cache_write

    @property
    def written_1h_tokens(self) -> int:
        """Of `written_tokens`, those written to the 1-hour cache (0 when none were said)."""
        return 0 if isinstance(self.cache_write_1h, UnsetType) else self.cache_write_1h


class OutputRow(msgspec.Struct, frozen=True, gc=False):
    """One finished cell as `outputs.jsonl` holds it: no variant, no model, no repetition."""

    cell: str
    fixture: str
    status: Status
    text: str = ""
    finish_reason: str | None = None
    usage: Usage = Usage()
    cost: float | None = None
    latency_ms: float | None = None
    attempts: int = 0
    error: str | None = None
    endpoint: str | msgspec.UnsetType = msgspec.UNSET  # the server that answered, when the provider is a pool
    batch: str | msgspec.UnsetType = msgspec.UNSET  # the vendor's batch that answered, in a `run --batch`
    # true when `cost` priced input tokens read from the prompt cache at the full input price, the model's price
    # giving no `cached_input`: the vendor billed less (`run.providers.cost_of`); absent otherwise
    cost_upper_bound: bool | msgspec.UnsetType = msgspec.UNSET


class OutputFigures(msgspec.Struct, frozen=True, gc=False):
    """The part of an OutputRow the verdict reads: decoding into it skips every output's text."""

    cell: str
    fixture: str
    status: Status
    usage: Usage = Usage()
    cost: float | None = None
    latency_ms: float | None = None
    attempts: int = 0
    finish_reason: str | None = None
    cost_upper_bound: bool | msgspec.UnsetType = msgspec.UNSET


class AssignmentRow(msgspec.Struct, frozen=True, gc=False):
    """`sealed/assignment.jsonl`: which variant and repetition a cell is (a probe's variant is `probe`)."""

    cell: str
    variant: str
    fixture: str
    repetition: int
    order: int = 0


class RequestRow(msgspec.Struct, frozen=True, gc=False):
    """`sealed/requests.jsonl`: the exact body sent for a cell, written before the first call."""

    cell: str
    provider: str
    url: str
    body: dict[str, Any]


class JudgeRequestRow(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """`sealed/judge-requests.jsonl`: one planned judgement of an output (run/judging.py); `cell` is its id."""

    cell: str
    output: str
    judgement: int
    fixture: str
    redacted: int = 0  # the variant texts found in the output and blinded out
    provider: str
    url: str
    body: dict[str, Any]


#: The largest magnitude of a score or a metric benchcard reads. The statistics square and sum them over a whole
#: grid: 10^15 squared and summed over 10^6 cells stays finite, where one hand-written 1e300 overflowed into inf
#: and NaN silently and the verdict explained what it had not found (hostile audit 13); and below 2^53 (9.0e15)
#: a float holds every whole number, so a count's gaps and sums keep their last digit. NaN is no score either.
#: Another tool's logs are held to the same bound (compare/_guard.py).
MAX_METRIC = 1e15
#: Why, in the line that refuses a value beyond it.
MAX_METRIC_WHY = ("up to it a float holds every whole number, and squares summed over a million cells stay finite; "
                  "rescale a metric that needs more")
_IN_RANGE = msgspec.Meta(ge=-MAX_METRIC, le=MAX_METRIC)
Score = Annotated[float, _IN_RANGE]
Metric = Annotated[int, msgspec.Meta(ge=-int(MAX_METRIC), le=int(MAX_METRIC))] | Score | bool | None


class ScoreRow(msgspec.Struct, frozen=True, gc=False):
    """One line of `scores.jsonl`: `score` is None for truncated and failed cells; `rules` only for rule scoring.
    `unscored` (since 2026-12-08, absent otherwise): why an `ok` output has no score though the scorer read it, a
    rule over its time limit on it (`scoring/scorers.py`); the verdict counts it unscored and names the why."""

    cell: str
    fixture: str
    status: Status
    score: Score | None = None
    metrics: dict[str, Metric] = {}
    rules: dict[str, bool] | None = None
    unscored: str | UnsetType = UNSET


class SetAside(msgspec.Struct, frozen=True):
    """A row of `set-aside.jsonl`: when the run was set aside, and why in the user's words."""

    at: str
    why: str

    @property
    def label(self) -> str:
        return f"set aside {self.at[:10]} ({self.why})"

    @property
    def note(self) -> str:
        """What a page says of the run."""
        return f"Set aside on {self.at[:10]}: {self.why}. Kept as it is; never resumed, judged or taken as the " \
               "card's result."


class ScoreLine(msgspec.Struct, frozen=True, gc=False):
    """A ScoreRow with its metrics left as their JSON text: runs repeat a few combinations of metric values, so
    the verdict decodes each distinct one once (`verdict.columns.read_scores`; a text that is not a ScoreRow's
    metrics is refused there, by the ScoreRow reader, naming its line)."""

    cell: str
    fixture: str
    status: Status
    score: Score | None = None
    metrics: msgspec.Raw = msgspec.Raw(b"{}")
    rules: dict[str, bool] | None = None
    unscored: str | UnsetType = UNSET


# ------------------------------------------------------------------------------------------------- manifest
# Its parts first: the rig, the counts, a judge's plan and its tokens, each `--retry-failed` with the closing fields
# it took away, and a sequential card's schedule, rules and looks.


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


class SealedJudging(msgspec.Struct, frozen=True):
    """A judge card's sealed judgements (the manifest's `judge` block, its on-disk name): rig, seed, counts and the
    digest of `sealed/judge-requests.jsonl`, added when they are sealed (`run/judging.py`)."""

    rig: RigRecord | None = None
    provider_type: str | None = None
    base_url: str | None = None  # a pool's first server, as its requests' `url`
    endpoints: list[str] | None = None  # the servers of a judge's pool, as a run's (absent before 2026-12-07)
    # the judge's provider's headers of benchcard.yaml its calls send, as a run's `headers` (a secret by its name
    # alone); absent for a local judge, and in a judging planned before 2026-12-08 (not compared on resume)
    headers: dict[str, str | None] | None = None
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


class IntegrationGrid(msgspec.Struct, frozen=True, kw_only=True):
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
    grid: IntegrationGrid
    # the spending of a card that names none, and its γ (hsd); absent from seals written before 2026-12-06, when
    # it was obrien-fleming (`LEGACY_SPENDING`)
    default_spending: str | UnsetType = UNSET
    default_gamma: float | UnsetType = UNSET
    # a probe's bound on its mean score at a look (stats/sequential.GATE_BOUNDS); absent from seals written before
    # 2026-12-08 and from every ab card's, whose rule never reads it (`LEGACY_GATE_BOUND`)
    gate_bound: str | UnsetType = UNSET

    @property
    def bound(self) -> str:
        """A probe's bound under these rules: the recorded one, else Wilson's, every probe's before 2026-12-08."""
        return LEGACY_GATE_BOUND if isinstance(self.gate_bound, UnsetType) else self.gate_bound

    @property
    def spending(self) -> tuple[str, float | None]:
        """How a card that names no spending spends α under these rules, and its γ (None: no γ)."""
        if isinstance(self.default_spending, UnsetType):
            return LEGACY_SPENDING, None
        return self.default_spending, None if isinstance(self.default_gamma, UnsetType) else self.default_gamma

    def changed(self, other: Rules, *, spending: bool = True) -> str | None:
        """The first parameter in which `other` differs from these, said as "futility level 0.035, this benchcard
        uses 0.04" (None: alike); the default spending only if `spending` (a card that names none)."""
        bounds = ((self.bound, other.bound) if self.gate_bound != other.gate_bound else (UNSET, UNSET))
        pairs = [("futility level", self.futility_level, other.futility_level),
                 ("a probe's gate bound", *bounds),
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


def _grid_text(grid: IntegrationGrid) -> str:
    return f"{grid.points} points over {grid.sds:g} sd, z at most {grid.cap:g}"


def _text(value: object) -> str:
    return "none" if isinstance(value, UnsetType) else f"{value:g}" if isinstance(value, float) else str(value)


#: What manifests written before the rule's parameters were recorded ran at: every benchcard that ran a sequential
#: card spent α from 3 repetitions on the 801-point grid; the futility level was 0.025 until commit 8c9f944
#: (2026-12-05T07:48:18Z) and 0.035 after it (before 0.025 no sequential card could run).
LEGACY_DECIDE_FROM = 3
#: The spending of a card that names none, in every benchcard before 2026-12-06 (seals without `default_spending`).
LEGACY_SPENDING = "obrien-fleming"
LEGACY_GRID = IntegrationGrid(points=801, sds=9.0, cap=12.0)
#: How every probe bounded its mean score at a look before 2026-12-08 (seals and manifests without `gate_bound`).
LEGACY_GATE_BOUND = "wilson"
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
    grid: IntegrationGrid | UnsetType = UNSET
    gate_bound: str | UnsetType = UNSET  # a probe's bound at a look ("exact"); absent: Wilson's (before 2026-12-08)

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
    # ab: the signed z of the rule's strongest evidence (+ a win, − a loss); probe: the mean score. null: none was
    # measured (ab: no gap clause had an interval yet, e.g. one repetition; probe: no cell), never a measured 0. A
    # manifest written before 2026-12-07 holds 0 there instead, read as written.
    statistic: float | None
    boundary: float | None  # the statistic at or beyond which the look stops for a win (a probe: passes)
    lower: float | None = None  # at or below which it stops for a loss (a probe: the greatest mean that fails)
    futility: float | None = None  # the futility z at or beyond which it stops for futility (ab, `futility: true`)
    futility_statistic: float | None = None  # the z of "the effect that matters is ruled out" (ab, before the last)
    decision: str
    at: str
    outputs_to: int = 0  # the size of outputs.jsonl when the look was taken (the next look scores the rest)
    scores_to: int = 0  # the size of scores.jsonl once this look's cells were scored


class CountedPass(msgspec.Struct, frozen=True, kw_only=True):
    """The rows of outputs.jsonl (the judge's: judge-outputs.jsonl) whose replies' models a pass of calls counted
    (its `replied_models` entry, at the same place): the rows it appended, and the rows the file held when it
    began that no earlier counted pass accounts for (a run begun before models were counted, a pass killed
    outright): those replies' models are unknown, and said so."""

    rows: int
    uncounted: int = 0


class Manifest(msgspec.Struct, frozen=True, kw_only=True):
    """`manifest.json`: written before the first call; the closing fields are added once, at the end of a run.

    Only the five identifying fields are required, so manifests of older versions (and hand-made ones) read.
    A field named in LATE_FIELDS is left out of the file while it is None: the closing fields, and any field
    added in a later version (give it the default None and name it there), so old manifests read unchanged.
    """

    LATE_FIELDS: ClassVar[frozenset[str]] = frozenset({
        "endpoints", "endpoint_concurrency", "batch", "baseline", "sealed", "plan_digest", "judge", "finished_at",
        "outputs_digest", "scores_digest", "counts", "judge_outputs_digest", "judge_counts", "judge_cost",
        "judge_tokens", "retries", "scratch", "replicates", "replication_rule", "sequential", "looks",
        "judge_stretches", "replied_models", "replied_rows", "judge_replied_models", "judge_replied_rows",
        "headers", "judge_cost_upper_bound"})

    run: str
    card: str
    version: int
    kind: str
    seal_root: str
    rig: RigRecord | None = None
    provider_type: str | None = None
    base_url: str | None = None
    # the provider's headers of benchcard.yaml a call sent: name → value, None for a secret (its name alone,
    # run/_headers.py); {} none; left out by a local run, and by one made before they were recorded
    headers: dict[str, str | None] | None = None
    endpoints: list[str] | None = None  # the servers of a pool
    endpoint_concurrency: int | None = None  # a pool: calls in flight on a server stating none (kept on resume)
    params: dict[str, Any] = {}  # the card's model params, free-form JSON by design (passed to the provider)
    seed: int | None = None
    repetitions: int | None = None
    cells: int | None = None
    concurrency: int | None = None
    batch: bool | None = None  # `run --batch`: the grid went through the vendor's batch API
    scratch: str | None = None  # why the run is a trial (run/_scratch.py): never in the ledger
    requests_per_minute: float | None = None  # the rate limit the calls kept (a resume keeps it)
    baseline: str | None = None
    benchcard_version: str | None = None
    started_at: str | None = None
    replicates: ReplicaLink | None = None  # `benchcard replicate`: the run this one replicates
    replication_rule: RuleRecord | None = None  # and the rule it is judged by, fixed before the first call
    sealed: dict[str, str] | None = None  # each file under sealed/ → its digest (records/plandigest.py)
    plan_digest: str | None = None
    judge: SealedJudging | None = None
    finished_at: str | None = None
    outputs_digest: str | None = None
    scores_digest: str | None = None
    counts: Counts | None = None
    judge_outputs_digest: str | None = None
    judge_counts: dict[str, int] | None = None
    judge_cost: float | None = None
    judge_cost_upper_bound: bool | None = None  # true when judge_cost priced cached input in full (docs/prices.md)
    judge_tokens: Tokens | None = None
    retries: list[Retry] | None = None  # `--retry-failed`: each reopening, with the fields it closed
    sequential: Schedule | None = None  # a sequential card's looks as planned (covered by plan_digest)
    looks: list[Look] | None = None  # each look taken so far, in order (a sequential run)
    judge_stretches: list[JudgeStretch] | None = None  # a sequential judge card: the judging plans after the first
    # each pass of calls: every model its replies named, with its count (docs/security.md), and the rows it counted
    replied_models: list[dict[str, int]] | None = None
    replied_rows: list[CountedPass] | None = None  # in the same order (older manifests have none)
    judge_replied_models: list[dict[str, int]] | None = None  # the same of each pass of the judge's calls
    judge_replied_rows: list[CountedPass] | None = None

    @property
    def judgements_planned(self) -> int:
        """The judgements planned in all: the `judge` block's, and each later stretch's (a sequential judge card)."""
        first = self.judge.judgements if self.judge is not None and self.judge.judgements is not None else 0
        return first + sum(s.judgements for s in self.judge_stretches or [])

    @property
    def stopped_look(self) -> Look | None:
        """The look that decided a sequential run (its last look, when that one did not go on), else None."""
        if not self.looks or self.looks[-1].decision == "continue":
            return None
        return self.looks[-1]

    def fields(self) -> dict[str, Any]:
        """The manifest as plain JSON data, as its file holds it (late fields only once set)."""
        return {k: v for k, v in msgspec.to_builtins(self).items() if not (v is None and k in self.LATE_FIELDS)}

    @property
    def rig_line(self) -> str:
        """The rig line a table or a ledger row shows (as recorded, else rebuilt); empty without a rig."""
        if self.rig is None:
            return ""
        return self.rig.line or rig_line(self.rig.model or "?", self.rig.effort, self.rig.surface,
                                         self.rig.provider or "?")


RIG_SEP = " · "  # between a rig line's parts; the pages split a line on it to isolate each part


def rig_line(model: str, effort: str | None, surface: str | None, provider: str) -> str:
    """The rig line of the pages, the ledger and a judge's manifest, e.g. `claude-fable-5-1 · effort high · Claude
    API`: the model, its effort, and where it was called (the surface, else the provider); a part not known is
    left out."""
    return RIG_SEP.join(p for p in (model, f"effort {effort}" if effort else "", surface or provider) if p)


def stop_line(schedule: Schedule, look: Look | None) -> str:
    """What a sequential run says of its looks, on its last line, in its verdict and on its page: "stopped at look
    2 of 3: win; 1,440 of 3,600 calls (60 % saved)", or that every look was taken."""
    n, total = len(schedule.looks), schedule.cells[-1]
    if look is None:
        return looks_line(n, n, "continue", total, total)
    return looks_line(look.look, n, look.decision, look.cells, total)


def looks_line(look: int, looks: int, decision: str, cells: int, planned: int) -> str:
    """`stop_line` from its figures alone (a ledger row keeps them, not the schedule), so the ledger page and the
    verdict say a run's stop in the same words."""
    if look >= looks:
        decided = f": {decision}" if decision != "continue" else ""
        return f"every look taken ({looks} of {looks}){decided}; {planned:,} calls"
    saved = 1 - cells / planned if planned else 0.0
    return f"stopped at look {look} of {looks}: {decision}; {cells:,} of {planned:,} calls ({saved:.0%} saved)" \
        .replace("% saved", " % saved")


def gate_side(word: str, at: float | None, sign: str, cells: int) -> str:
    """One side of a probe's look in words: the mean score at which it passes (`pass at ≥ 0.812`) or fails
    (`fail at ≤ 0.355`) its gate, or that no mean can with that few cells (`pass out of reach at 10 cells`): the
    verdict's look lines and `check`'s warning of a look that can only fail say it alike."""
    return f"{word} out of reach at {cells:,} cells" if at is None else f"{word} at {sign} {fixed(at)}"


def open_looks_line(schedule: Schedule, looks: Sequence[Look]) -> str:
    """Where an unfinished sequential run stands with its looks (what `status` says): the looks taken, and the
    next one a `--resume` calls up to, or that a look already decided it and the resume only closes it."""
    n, k = len(schedule.looks), len(looks)
    if k and looks[-1].decision != "continue":
        return f"look {k} of {n} decided it: {looks[-1].decision}; not closed yet (a resume closes it, calling nothing)"
    if k >= n:
        return f"every look taken ({n} of {n}); not closed yet (a resume closes it, calling nothing)"
    taken = "no look taken yet" if not k else f"look{'s' if k > 1 else ''} {'1–' if k > 1 else ''}{k} of {n} taken, " \
        f"{'each' if k > 1 else 'it'} went on"
    return (f"{taken}; look {k + 1} comes after repetition {schedule.looks[k]} ({schedule.cells[k]:,} of "
            f"{schedule.cells[-1]:,} calls)")


# -------------------------------------------------------------------------------------------- reading, writing

T = TypeVar("T")
_ENCODER = msgspec.json.Encoder()
_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def _decoder(kind: Any) -> msgspec.json.Decoder[Any]:
    dec = _DECODERS.get(kind)
    if dec is None:
        dec = _DECODERS[kind] = msgspec.json.Decoder(kind)
    return dec


def dumps_line(row: msgspec.Struct | dict[str, Any]) -> bytes:
    """One JSONL line: compact, UTF-8 kept as is, ending in a newline (the one dialect benchcard writes).

    A model's reply may hold a lone surrogate, which has no UTF-8 form: such a row is written with JSON escapes
    instead (`"\\ud800"`), which read back to exactly the same text.
    """
    try:
        return _ENCODER.encode(row) + b"\n"
    except UnicodeEncodeError:
        return json.dumps(msgspec.to_builtins(row), separators=(",", ":")).encode("ascii") + b"\n"


def decode_line(line: bytes | str, kind: type[T]) -> T:
    """One row (msgspec.ValidationError or DecodeError when it is not one).

    msgspec refuses an escaped lone surrogate (which `dumps_line` may write); such a line is read by `json` and
    then typed by msgspec, so it reads back as written.
    """
    try:
        row: T = _decoder(kind).decode(line)
    except msgspec.DecodeError:
        try:
            data = json_loads(line)
        except ValueError:
            raise msgspec.DecodeError("not JSON") from None
        row = msgspec.convert(data, kind)
    return row


def decode_row(line: bytes, kind: type[T], path: Path | str, n: int, error: type[BenchcardError] = RunError) -> T:
    """Line `n` of the JSONL file `path` as a `kind`; a line that is not JSON, or not a `kind`, is an `error` naming
    the file, the line and (msgspec's message) the field."""
    try:
        return decode_line(line, kind)
    except msgspec.ValidationError as exc:
        raise error(f"{path}: line {n}: {_out_of_range(line, str(exc))}") from None
    except msgspec.DecodeError:
        raise error(f"{path}: line {n} is not JSON{bom_said(line) if n == 1 else ''}") from None


def _out_of_range(line: bytes, message: str) -> str:
    """msgspec's message, or for a score or metric beyond ±MAX_METRIC (or NaN) one that names the metric (msgspec
    writes a mapping's entry `[...]`) and says what range is taken and why."""
    if not message.startswith(("Expected `float` >=", "Expected `float` <=", "Expected `int` >=",
                               "Expected `int` <=", "Number out of range")):
        return message
    try:
        row = json_loads(line)
    except ValueError:
        return message
    fields = {"score": row.get("score")} if isinstance(row, dict) else {}
    metrics = row.get("metrics") if isinstance(row, dict) else None
    fields.update({f"metrics.{k}": v for k, v in metrics.items()} if isinstance(metrics, dict) else {})
    for name, value in fields.items():
        if isinstance(value, int | float) and not isinstance(value, bool) and not abs(value) <= MAX_METRIC:
            return (f"field '{name}': {value!r} is not a score: expected a number from {-MAX_METRIC:g} to "
                    f"{MAX_METRIC:g} ({MAX_METRIC_WHY})")
    return message


def decode_rows(data: bytes, kind: type[T], path: Path | str, error: type[BenchcardError] = RunError) -> list[T]:
    """Every row of a JSONL file's bytes, typed; a bad row is named by its line and field.

    Blank lines are allowed; either dialect (compact or with spaces) reads the same.
    """
    try:
        rows: list[T] = _decoder(kind).decode_lines(data)  # one call for the whole file; blank lines skipped
        return rows
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass  # find the line, below
    rows = []
    for n, line in enumerate(data.split(b"\n"), 1):
        if line.strip():
            rows.append(decode_row(line, kind, path, n, error))
    return rows


def read_rows(path: Path, kind: type[T], error: type[BenchcardError] = RunError) -> list[T]:
    """Every row of a JSONL file (see decode_rows); a missing file has none."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return decode_rows(data, kind, path, error)


def iter_rows(path: Path, kind: type[T], error: type[BenchcardError] = RunError) -> Iterator[T]:
    """The rows of a JSONL file one at a time (memory does not grow with the file); bad lines as in decode_rows."""
    with open(path, "rb") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                yield decode_row(line, kind, path, n, error)


def encode_manifest(manifest: Manifest | dict[str, Any]) -> bytes:
    """The manifest as written: indented two spaces, UTF-8, ending in a newline; late fields only once set."""
    if isinstance(manifest, Manifest):
        manifest = manifest.fields()
    return msgspec.json.format(_ENCODER.encode(manifest), indent=2) + b"\n"


def decode_manifest(data: bytes, path: Path | str, error: type[BenchcardError] = RunError) -> Manifest:
    """A manifest from its bytes; a missing or mistyped field names the file and the field."""
    try:
        manifest: Manifest = _decoder(Manifest).decode(data)
    except msgspec.ValidationError as exc:
        raise error(f"{path}: {exc}") from None
    except msgspec.DecodeError as exc:
        raise error(f"{path}: unreadable manifest: {exc}{bom_said(data)}") from None
    return manifest


def manifest_or_none(path: Path) -> Manifest | None:
    """A run folder's manifest, or None when it is missing or not a manifest: for readers that pass such a folder
    by (warnings, the list of unfinished runs), where a reader that must judge the run names the error instead."""
    try:
        return decode_manifest(path.read_bytes(), path)
    except (OSError, BenchcardError):
        return None


def to_builtins(obj: Any) -> Any:
    """A struct (or anything holding structs) as plain dicts and lists, e.g. for `--json` or a template."""
    return msgspec.to_builtins(obj)


def new_run_id(now: datetime | None = None) -> str:
    """`YYYYMMDDTHHMMSSZ-xxxx`: the UTC start and four random hex digits."""
    when = (now or datetime.now(UTC)).astimezone(UTC)
    return when.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


def utc_stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
