"""A sequential card's looks: where the sealed rule may stop a grid early with its error rates kept.

The grid runs in repetition blocks, every variant interleaved inside a block, so a look after block r compares
like with like. A `Schedule` names the looks (the repetitions after which the rule is computed on the cells so
far; the last is the card's repetitions), how α is spent across them (Lan–DeMets: O'Brien–Fleming-type,
Pocock-type or Hwang–Shih–DeCani γ, at information fraction = repetitions so far / repetitions in all) and
whether the grid may stop for futility. `boundaries` turns it into one efficacy boundary per look on the
z scale the rule's calibrated two-sided p maps to (z = Φ⁻¹(1 − p/2), α/2 per side as the fixed rule), computed
exactly by numerical integration of the joint normal of the looks (no random draws), and into a nominal level
α_k per look: the rule at look k is the verdict's own decision (`decision.decide`, Holm included) at α_k.

Why the information fraction may be the repetitions': the gap after r repetitions has variance
ω²/F + (σ²_run + σ²_e/F)/r; its looks have independent increments, and their correlation √(I_j/I_k) is never
below √(r_j/r_k) (the fixture term does not shrink with r). By Slepian's inequality boundaries computed at the
smaller correlation keep the error rate. The calibrated p of each look is valid on its own (worstcase.py), its
few early degrees of freedom included; benchmarks/sequential.py measures the whole procedure.

Futility (non-binding: the efficacy boundaries ignore it, so obeying it or not never raises the error rate):
at a look before the last, the grid stops when, for every variant, the one-sided calibrated test of the first
clause rejects "the gap reaches the effect that matters" (the caller's `effect`: a card's `min_effect`, else
its equivalence margin) at the look's futility level β_k, spent like α over the looks (total
`Schedule.futility_beta`, exact by the same integration). A true gap of that size is stopped for futility in
about that share of runs (exactly for normal statistics; docs/statistics.md gives what was measured).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from types import MappingProxyType

import numpy as np
from scipy import optimize, special

from benchcard.stats import _tablecache
from benchcard.stats.crossed import BoolArray, Crossed, FloatArray, IntArray
from benchcard.stats.decision import LOSS, WIN, Decision, Evidence, decide, overall, p_beyond
from benchcard.stats.paired import wilson_at

SPENDINGS = ("obrien-fleming", "pocock", "hsd")
#: The futility test's total level by spending: a true gap as large as the effect that matters stops for futility
#: in about this share of runs. Spent like α, a late spending (Hwang–Shih–DeCani γ −6, the default of a card that
#: names none: card/_defaults.py) stops few runs early, so it takes 0.045 to keep the calls under no effect at most
#: 85% of the fixed design's at 12 × 10, 24 × 5 and 12 × 5; O'Brien–Fleming's 0.035 does (0.025 did not at 24 × 5).
FUTILITY_BETAS: Mapping[str, float] = MappingProxyType({"obrien-fleming": 0.035, "pocock": 0.035, "hsd": 0.045})
FUTILITY, CONTINUE = 4, 5
#: Finding codes of a look: decision.py's four, then a futility stop and "go on to the next block".
LOOK_CODES = ("win", "loss", "no-effect", "inconclusive", "futility", "continue")
#: The integration grid: points per look, and how many standard deviations below 0 the density is carried.
GRID_POINTS = 801
#: No α is spent at a look before this many repetitions unless it is the last (its efficacy boundary is infinite;
#: futility may still stop there): the run term has at most 2 degrees of freedom, and the tiny levels an early
#: look gets lie where the worst-case p rests on a handful of its draws (docs/statistics.md, "Sequential cards").
MIN_REPETITIONS_TO_DECIDE = 3
GRID_SDS = 9.0
Z_CAP = 12.0
#: Hwang–Shih–DeCani's γ where a schedule names none (only `hsd` reads it, and a card with `hsd` names its own).
DEFAULT_GAMMA = -4.0
#: How a sequential probe bounds its mean score at a look (`gate_bounds`): "exact", Clopper–Pearson's binomial bound
#: (since 2026-12-08), or "wilson", Wilson's score bound, which every probe sealed or run before then keeps: at a
#: true score equal to min_score its looks failed the gate in up to 7.4% of runs and passed it in up to 2.8%,
#: against α/2 = 2.5% a side (docs/statistics.md, "Audit of sequential cards and seal's edge, 2026-12-08").
GATE_BOUNDS = ("exact", "wilson")


@dataclass(frozen=True)
class Schedule:
    """The sealed sequential design of a card: `looks` are repetition counts, increasing, the last the card's
    repetitions; `spending` one of SPENDINGS (`gamma` is Hwang–Shih–DeCani's, used only by "hsd"). The rest are
    benchcard's own (futility level, the repetitions α is first spent at, the integration grid): a run records
    them in its manifest and a seal in its file, so that a later default never changes a sealed rule."""

    looks: tuple[int, ...]
    spending: str = "obrien-fleming"
    futility: bool = True
    alpha: float = 0.05
    gamma: float = DEFAULT_GAMMA
    futility_beta: float = FUTILITY_BETAS["obrien-fleming"]
    decide_from: int = MIN_REPETITIONS_TO_DECIDE
    grid_points: int = GRID_POINTS
    grid_sds: float = GRID_SDS
    z_cap: float = Z_CAP
    gate_bound: str = "exact"  # a probe's bound on its mean score (GATE_BOUNDS); an ab card never reads it

    def __post_init__(self) -> None:
        looks = tuple(int(x) for x in self.looks)
        object.__setattr__(self, "looks", looks)
        if not looks or looks[0] < 1 or any(b <= a for a, b in itertools.pairwise(looks)):
            raise ValueError(f"looks: expected increasing repetition counts from 1, got {list(looks)}")
        if self.spending not in SPENDINGS:
            raise ValueError(f"spending: expected one of {', '.join(SPENDINGS)}, got {self.spending!r}")
        if not 0.0 < self.alpha < 1.0 or not 0.0 < self.futility_beta < 1.0:
            raise ValueError("alpha and futility_beta must lie strictly between 0 and 1")
        if self.spending == "hsd" and self.gamma == 0.0:
            raise ValueError("gamma: Hwang–Shih–DeCani's γ may not be 0 (use a γ near 0 for linear spending)")
        if self.gate_bound not in GATE_BOUNDS:
            raise ValueError(f"gate_bound: expected one of {', '.join(GATE_BOUNDS)}, got {self.gate_bound!r}")
        if self.decide_from < 1 or self.grid_points < 3 or not self.grid_sds > 0.0 or not self.z_cap > 0.0:
            raise ValueError("decide_from must be at least 1, grid_points at least 3, grid_sds and z_cap positive")

    @property
    def repetitions(self) -> int:
        return self.looks[-1]

    @property
    def fractions(self) -> tuple[float, ...]:
        """Information fraction of each look: repetitions so far / repetitions in all."""
        return tuple(r / self.looks[-1] for r in self.looks)


def schedule(looks: int | Sequence[int], repetitions: int, spending: str = "obrien-fleming", futility: bool = True,
             alpha: float = 0.05, gamma: float = -4.0) -> Schedule:
    """A card's `design:` as a Schedule. `looks` a count N: N looks after evenly spread blocks (the last after
    the last block); a list: the repetitions after which to look, the card's `repetitions` added if missing."""
    if isinstance(looks, int):
        if not 1 <= looks <= repetitions:
            raise ValueError(f"looks: expected 1 to {repetitions} (the card's repetitions), got {looks}")
        at = sorted({max(1, math.ceil(repetitions * k / looks)) for k in range(1, looks + 1)})
    else:
        at = sorted(int(x) for x in looks)
        if at and at[-1] > repetitions:
            raise ValueError(f"looks: {at[-1]} is past the card's {repetitions} repetitions")
        if not at or at[-1] != repetitions:
            at.append(repetitions)
    return Schedule(tuple(at), spending, futility, alpha, gamma)


def spent(spending: str, t: float, level: float, gamma: float = -4.0) -> float:
    """Lan–DeMets spending: the error spent by information fraction t of a one-sided `level`."""
    if t <= 0.0:
        return 0.0
    if t >= 1.0:
        return level
    if spending == "obrien-fleming":
        return float(2.0 * special.ndtr(-special.ndtri(1.0 - level / 2.0) / math.sqrt(t)))
    if spending == "pocock":
        return level * math.log1p((math.e - 1.0) * t)
    return level * (-math.expm1(-gamma * t)) / (-math.expm1(-gamma))


@dataclass(frozen=True)
class Boundaries:
    """Per look: the efficacy boundary `efficacy` (z, each side; inf where no α is spent), its two-sided nominal
    level `nominal` (= 2(1 − Φ(z)), the α the rule is decided at), the α spent so far (both sides), and with
    futility the one-sided level `futility` of the futility test (0 at the last look) and its z."""

    schedule: Schedule
    fractions: tuple[float, ...]
    efficacy: tuple[float, ...]
    nominal: tuple[float, ...]
    spent: tuple[float, ...]
    futility: tuple[float, ...] | None = None
    futility_z: tuple[float, ...] | None = None


@lru_cache(maxsize=64)
def boundaries(plan: Schedule) -> Boundaries:
    """The schedule's boundaries (see the module docstring): α/2 per side spent at the looks' fractions, each
    look's z solved so that a null path first crosses it with exactly the increment; futility (non-binding) the
    same way with `futility_beta` over the looks before the last."""
    t = plan.fractions
    side = plan.alpha / 2.0
    cum = [spent(plan.spending, x, side, plan.gamma) if r >= plan.decide_from or r == plan.repetitions
           else 0.0 for x, r in zip(t, plan.looks, strict=True)]
    z = _one_sided(t, _increments(cum), plan)
    nominal = tuple(float(2.0 * special.ndtr(-c)) if math.isfinite(c) else 0.0 for c in z)
    out = Boundaries(schedule=plan, fractions=t, efficacy=tuple(z), nominal=nominal,
                     spent=tuple(2.0 * c for c in cum))
    if not plan.futility or len(t) < 2:
        return out
    early = t[:-1]
    fcum = [spent(plan.spending, x / early[-1], plan.futility_beta, plan.gamma) for x in early]
    fz = _one_sided(early, _increments(fcum), plan)
    levels = tuple(float(special.ndtr(-c)) if math.isfinite(c) else 0.0 for c in fz)
    return Boundaries(schedule=plan, fractions=t, efficacy=out.efficacy, nominal=nominal, spent=out.spent,
                      futility=(*levels, 0.0), futility_z=(*fz, math.inf))


def futility_level_shown(plan: Schedule, shown: Sequence[tuple[int, float]], levels: Sequence[float],
                         beyond: float) -> float | None:
    """The first of `levels` at which `plan`'s futility boundaries are those `shown`, each a (look index, z) as a
    record holds it (capped at `beyond`); None when none is. An older run's record of its looks says the futility
    level it ran at, which it did not write down."""
    for level in levels:
        z = boundaries(replace(plan, futility_beta=level)).futility_z or ()
        if all(k < len(z) and abs(min(z[k], beyond) - f) < 1e-6 for k, f in shown):
            return level
    return None


def _increments(cumulative: Sequence[float]) -> list[float]:
    out, before = [], 0.0
    for c in cumulative:
        out.append(max(0.0, c - before))
        before = max(before, c)
    return out


def _one_sided(t: Sequence[float], increments: Sequence[float], plan: Schedule) -> list[float]:
    """z boundaries c_k with P(Z_1 < c_1, …, Z_{k−1} < c_{k−1}, Z_k ≥ c_k) = increments[k] for the canonical
    joint normal of looks at fractions t (Z_k = S_k/√t_k, S a Brownian motion): the density of S on the
    continuation region carried look to look by the trapezoid rule on the plan's grid (`grid_points` nodes from
    `grid_sds` standard deviations below 0; no boundary beyond `z_cap`)."""
    out: list[float] = []
    carried: tuple[FloatArray, FloatArray] | None = None  # nodes, density × trapezoid weight
    before, cap = 0.0, plan.z_cap
    for tk, inc in zip(t, increments, strict=True):
        sd = math.sqrt(tk - before)
        if inc <= 0.0:
            c = math.inf
        elif _crossing(cap, tk, sd, carried) >= inc:
            c = cap
        else:
            c = float(optimize.brentq(lambda x, tk=tk, sd=sd, carried=carried, inc=inc:
                                      _crossing(x, tk, sd, carried) - inc, -cap, cap, xtol=1e-10))
        out.append(c)
        carried, before = _carry(min(c, cap) * math.sqrt(tk), tk, sd, carried, plan), tk
    return out


def _crossing(c: float, tk: float, sd: float, carried: tuple[FloatArray, FloatArray] | None) -> float:
    """The chance a path still going crosses z = c at the look at fraction tk (sd: the step since the last)."""
    edge = c * math.sqrt(tk)
    if carried is None:
        return float(special.ndtr(-edge / sd))
    nodes, weights = carried
    return float(weights @ special.ndtr((nodes - edge) / sd))


def _carry(top: float, tk: float, sd: float, carried: tuple[FloatArray, FloatArray] | None,
           plan: Schedule) -> tuple[FloatArray, FloatArray]:
    """The density of S at fraction tk on the continuation region (below `top`), as nodes and weights."""
    nodes = np.linspace(-plan.grid_sds * math.sqrt(tk), top, plan.grid_points)
    if carried is None:
        density = np.exp(-0.5 * (nodes / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
    else:
        diff = (nodes[:, None] - carried[0][None, :]) / sd
        density = (np.exp(-0.5 * diff * diff) / (sd * math.sqrt(2 * math.pi))) @ carried[1]
    trap = np.full(plan.grid_points, nodes[1] - nodes[0])
    trap[[0, -1]] /= 2
    out: FloatArray = density * trap
    return nodes, out


def gate_bounds(mean: float, n: int, z: float, bound: str = "exact") -> tuple[float, float]:
    """A probe's mean score over n cells bounded at a look's boundary z, each side at the one-sided level
    1 − Φ(z): pass the gate when the lower bound reaches it, fail it when the upper stays below. "exact" is
    Clopper–Pearson's (the beta quantiles of n·mean passing cells; a fractional score's sum taken as the count:
    a [0, 1] score of mean p varies at most as a pass/fail one), which never errs more than its level on pass/fail
    cells; Wilson's ("wilson", the bound before 2026-12-08) is a normal approximation whose upper bound falls
    below a true score near 1 too often (the fail side's error 2 to 3 times its level at a gate of 0.9 or 0.95).
    A mean of 1 (0) has the upper (lower) bound 1 (0) exactly."""
    if n == 0 or not math.isfinite(z):
        return 0.0, 1.0
    if bound == "wilson":
        return wilson_at(mean, n, z)
    level = float(special.ndtr(-z))
    k = min(max(mean * n, 0.0), float(n))
    low = 0.0 if mean <= 0 else float(special.betaincinv(k, n - k + 1.0, level))
    high = 1.0 if mean >= 1 else float(special.betaincinv(k + 1.0, n - k, 1.0 - level))
    return low, high


def futility_p(c: Crossed, effect: float, up: bool = True) -> FloatArray:
    """One-sided calibrated p of "the gap reaches the effect that matters" (≥ effect for a `rises` clause,
    ≤ −effect for `falls`): small when the look rules that effect out."""
    return p_beyond(c, effect, above=False) if up else p_beyond(c, -effect, above=True)


@dataclass(frozen=True)
class Look:
    """One look over S runs: `codes` WIN / LOSS / FUTILITY / CONTINUE (the last look: the fixed rule's own
    finding, decision.py's codes), the signed statistic (z of the strongest evidence: + towards a win, − towards a
    loss) and the boundary it met; with futility, the futility statistic (z of the weakest variant's futility p)
    and its boundary. `decision` is decide() at the look's nominal level."""

    look: int
    of: int
    repetitions: int
    codes: IntArray
    statistic: FloatArray
    boundary: float
    nominal: float
    decision: Decision
    futility_statistic: FloatArray | None = None
    futility_boundary: float | None = None
    notes: tuple[str, ...] = field(default=())


def look_decision(bounds: Boundaries, look: int, evidence: Sequence[Sequence[Evidence]],
                  tost: Sequence[FloatArray], measurable: Sequence[BoolArray],
                  futile: Sequence[FloatArray] | None = None) -> Look:
    """The decision at look number `look` (1-based) from the clauses' calibrated evidence on the cells so far
    (the same arguments as decision.decide, and each variant's `futility_p`): the sealed rule at the look's
    nominal level; before the last look, a run that neither wins nor loses stops for futility when every
    variant's futility p is at most the look's futility level, and otherwise continues."""
    of = len(bounds.fractions)
    if not 1 <= look <= of:
        raise ValueError(f"look {look}: the schedule has looks 1 to {of}")
    k = look - 1
    nominal = bounds.nominal[k]
    decision = decide(evidence, tost, measurable, nominal)
    codes = overall(decision.codes)
    stat = _statistic(evidence)
    last = look == of
    fut_stat, fut_bound = None, None
    if not last:
        moving = (codes == WIN) | (codes == LOSS)
        codes = np.where(moving, codes, CONTINUE)
        if bounds.futility is not None and futile is not None and futile:
            worst = np.max(np.stack([np.asarray(p, dtype=np.float64) for p in futile]), axis=0)
            fut_stat = _z_one_sided(worst)
            fut_bound = bounds.futility_z[k] if bounds.futility_z is not None else math.inf
            stop = ~moving & (worst <= bounds.futility[k])
            codes = np.where(stop, FUTILITY, codes)
    return Look(look=look, of=of, repetitions=bounds.schedule.looks[k], codes=codes, statistic=stat,
                boundary=bounds.efficacy[k], nominal=nominal, decision=decision, futility_statistic=fut_stat,
                futility_boundary=fut_bound)


def _statistic(evidence: Sequence[Sequence[Evidence]]) -> FloatArray:
    """The signed z of the strongest evidence over variants: a win's p (its clauses' largest) or any loss p."""
    win_p = np.min(np.stack([np.max(np.stack([e.p_hold for e in ev]), axis=0) for ev in evidence]), axis=0)
    losses = [e.p_loss for ev in evidence for e in ev if e.p_loss is not None]
    loss_p = np.min(np.stack(losses), axis=0) if losses else np.ones_like(win_p)
    z_win, z_loss = _z_two_sided(win_p), _z_two_sided(loss_p)
    out: FloatArray = np.where(z_loss > z_win, -z_loss, z_win)
    return out


def _z_two_sided(p: FloatArray) -> FloatArray:
    out: FloatArray = special.ndtri(1.0 - np.clip(p, 1e-300, 1.0) / 2.0)
    return out


def _z_one_sided(p: FloatArray) -> FloatArray:
    out: FloatArray = special.ndtri(1.0 - np.clip(p, 1e-300, 1.0))
    return out


def stopped(looks: Sequence[Look]) -> tuple[IntArray, IntArray]:
    """Where each run stops and with what: the index (0-based) of its first look whose code is not CONTINUE,
    and that code (the last look always decides)."""
    codes = np.stack([lk.codes for lk in looks])  # (K, S)
    done = codes != CONTINUE
    done[-1] = True
    at = np.argmax(done, axis=0)
    out: IntArray = np.take_along_axis(codes, at[None, :], axis=0)[0]
    return at.astype(np.int64), out


def simulate_looks(base: FloatArray, variant: FloatArray, plan: Schedule, *, effect: float, min_effect: float = 0.0,
                   margin: float = 0.0, seed: int = 0, variants: int = 1) -> tuple[IntArray, IntArray]:
    """S simulated runs of a `rises` first clause, (S, F, R) scores per arm, judged at every look of `plan` as
    the verdict judges it (`min_effect`, the equivalence `margin` for no-effect, futility against `effect`):
    each run's stopping look (index) and its finding there, as `stopped` gives them. Each look judges only the
    runs still going. `variants`: that many variants alike, Holm's rule over them at each look's nominal level
    (`stats.reach`'s plainest effect). For `benchcard plan`'s expected calls."""
    with _tablecache.advisory():  # a plan's figure, not a decision: its null tables may come from disk
        return _simulate_looks(base, variant, plan, effect=effect, min_effect=min_effect, margin=margin, seed=seed,
                               variants=variants)


def _simulate_looks(base: FloatArray, variant: FloatArray, plan: Schedule, *, effect: float, min_effect: float,
                    margin: float, seed: int, variants: int) -> tuple[IntArray, IntArray]:
    """simulate_looks' work, apart so that all of it runs inside the advisory context."""
    from benchcard.stats.crossed import batch_signflip, crossed
    from benchcard.stats.decision import effect_evidence, p_tost

    bounds = boundaries(plan)
    s = base.shape[0]
    at = np.full(s, len(plan.looks) - 1, dtype=np.int64)
    codes = np.full(s, CONTINUE, dtype=np.int64)
    going = np.arange(s)
    for k, r in enumerate(plan.looks):
        c = crossed(base[going, :, :r], variant[going, :, :r])
        flips = np.ones_like(c.gap)  # the sign-flip p decides only where the standard error is zero
        if c.zero_se.any():
            flips[c.zero_se] = batch_signflip(c.d[c.zero_se], c.n_fixtures[c.zero_se], seed=seed)
        tost = p_tost(c, margin) if margin > 0 else np.ones_like(c.gap)
        futile = [futility_p(c, effect)] * variants if plan.futility else None
        look = look_decision(bounds, k + 1, [[effect_evidence(c, flips, True, min_effect)]] * variants,
                             [tost] * variants, [c.spread] * variants, futile)
        done = look.codes != CONTINUE
        at[going[done]], codes[going[done]] = k, look.codes[done]
        going = going[~done]
        if going.size == 0:
            break
    return at, codes


# ------------------------------------------------------------------------------------- a probe's gate at a look


def passing_mean(gate: float, n: int, z: float, bound: str = "exact") -> float | None:
    """The least mean score over n cells whose lower bound at z (`gate_bounds`, by `bound`) reaches the gate: the
    look passes at or above it. None: none can, even a mean of 1 (the look's "pass out of reach at n cells")."""
    if gate_bounds(1.0, n, z, bound)[0] < gate:
        return None
    lo, hi = 0.0, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if gate_bounds(mid, n, z, bound)[0] >= gate else (mid, hi)
    return hi


def failing_mean(gate: float, n: int, z: float, bound: str = "exact") -> float | None:
    """The greatest mean score over n cells whose upper bound at z (`gate_bounds`, by `bound`) stays below the
    gate: the look fails at or below it. None: none can, even a mean of 0."""
    if gate_bounds(0.0, n, z, bound)[1] >= gate:
        return None
    lo, hi = 0.0, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gate_bounds(mid, n, z, bound)[1] < gate else (lo, mid)
    return lo


def fewest_cells_to_pass(gate: float, z: float, bound: str = "exact") -> int | None:
    """The fewest cells at which a look at z can pass the gate at all (every cell scoring 1). Wilson's lower bound
    of a mean of 1 over n cells is n / (n + z²), which reaches the gate from n = gate z² / (1 − gate);
    Clopper–Pearson's is Φ(−z)^(1/n), from n = ln Φ(−z) / ln gate. None where no count can: a gate of 1 (neither
    bound of a finite count reaches 1), or no α spent at the look (an infinite z)."""
    if gate <= 0:
        return 1
    if gate >= 1 or not math.isfinite(z):
        return None
    guess = (gate * z * z / (1 - gate) if bound == "wilson"
             else math.log(float(special.ndtr(-z))) / math.log(gate))
    n = max(1, math.ceil(guess) - 1)
    while passing_mean(gate, n, z, bound) is None:  # the closed form, confirmed by the bound itself (float rounding)
        n += 1
    return n
