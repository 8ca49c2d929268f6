"""Replication and drift: a rerun of a run's sealed requests judged against the original, under a rule fixed
before the new run (`ReplicationRule`), and a probe rerun compared with the original (`probe_drift`).

Pure: plain numbers in (what two verdict.json files hold, or two runs' scores), frozen dataclasses out,
vectorised cores for `benchmarks/replication.py`. docs/statistics.md ("Replication and drift") derives the
interval and gives the measured rates.

**The replication rule.** A rerun sends the same sealed requests: the same fixtures, so each fixture's own
effect is the same in both runs and cancels in the difference of the two gaps. What differs between them is
the run-level part of each gap: its cells' sampling and the run-to-run shocks, the verdict's *run term*
(verdict.json's `run_var` of a clause: MS_run/(F·R), which counts both). The difference new − original gap has
variance run_var(original) + run_var(new), on Satterthwaite's degrees of freedom from the two clauses' `df`;
the rerun's prediction interval is the original gap ± t·√(that). Then:

- *not replicated* when the new gap lies outside that interval (it moved up or down: said), or the finding
  flipped (a win became a loss or the reverse);
- *replicated* when the new gap lies inside it and the new run's own finding is the original's;
- *inconclusive* otherwise: inside the interval but with another finding (the new run alone does not show what
  the original showed, nor contradict it), or a run incomplete, or a run-to-run spread that cannot be measured.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy and scipy load when a figure is computed: planning a run reads the rule, no more
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]

REPLICATED, NOT_REPLICATED, INCONCLUSIVE = "replicated", "not replicated", "inconclusive"
CHANGED, NO_CHANGE = "changed", "no change shown"
#: Findings a replication can be judged against (a verdict's findings, less `incomplete`).
JUDGED = ("win", "loss", "no-effect", "inconclusive")
_OPPOSITE = {("win", "loss"), ("loss", "win")}


@dataclass(frozen=True)
class ReplicationRule:
    """The replication rule, fixed before the new run; its `digest()` goes into the replication's records."""

    name: str = "same finding, new gap inside the rerun's prediction interval"
    level: float = 0.95
    """Coverage of the prediction interval for a rerun (1 − the rate of "not replicated" when nothing changed)."""
    variance: str = "run term of both runs"
    """What the interval counts: the two runs' run terms (sampling and run-to-run shocks); fixture effects cancel."""
    version: int = 1

    def __post_init__(self) -> None:
        if not 0.0 < self.level < 1.0:
            raise ValueError(f"a replication rule's level must lie strictly between 0 and 1, got {self.level}")

    def parameters(self) -> dict[str, object]:
        return asdict(self)

    def digest(self) -> str:
        """`sha256:<hex>` of the rule's canonical JSON (sorted keys, no spaces, UTF-8), as every digest is."""
        text = json.dumps(self.parameters(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


DEFAULT_RULE = ReplicationRule()


@dataclass(frozen=True)
class RunGap:
    """What one run's verdict.json says of the clause a replication is judged on (its first clause, for its
    first variant): the run's finding and that clause's `gap`, `run_var` and `df`. None (or inf) where the
    verdict has no such figure (one repetition: no run term)."""

    finding: str
    gap: float | None
    run_var: float | None
    df: float | None
    metric: str = ""
    date: str = ""
    rig: str = ""


@dataclass(frozen=True)
class PredictionInterval:
    """Where the new gap is expected to fall if nothing changed: original gap ± t(level, df)·se."""

    low: float
    high: float
    se: float
    df: float
    level: float


@dataclass(frozen=True)
class ReplicationFinding:
    finding: str
    """replicated | not replicated | inconclusive"""
    direction: str | None
    """"rose" or "fell" (the new gap against the original's) when not replicated; None otherwise."""
    interval: PredictionInterval | None
    original_gap: float | None
    new_gap: float | None
    why: str
    """What decided it, in words."""
    text: str
    """One line: the finding and why."""
    rule: str
    rule_digest: str


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def prediction_interval(original: RunGap, new: RunGap, level: float = 0.95) -> PredictionInterval | None:
    """The rerun's prediction interval around the original gap (module docstring); None when either run's
    run term is unmeasured (inf or missing) or the original has no gap."""
    import numpy as np

    if not (_finite(original.gap) and _finite(original.run_var) and _finite(new.run_var)):
        return None
    assert original.gap is not None and original.run_var is not None and new.run_var is not None
    low, high, se, df = prediction_bounds(np.array([original.gap]), np.array([original.run_var]),
                                          np.array([original.df or 1.0]), np.array([new.run_var]),
                                          np.array([new.df or 1.0]), level)
    return PredictionInterval(float(low[0]), float(high[0]), float(se[0]), float(df[0]), level)


def prediction_bounds(gap: FloatArray, var_o: FloatArray, df_o: FloatArray, var_n: FloatArray, df_n: FloatArray,
                      level: float) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Vectorised: the interval's ends, its se and Satterthwaite's df over the two run terms."""
    import numpy as np

    from benchcard.stats.paired import t_ppf

    v = var_o + var_n
    with np.errstate(invalid="ignore", divide="ignore"):
        denom = var_o**2 / np.maximum(df_o, 1.0) + var_n**2 / np.maximum(df_n, 1.0)
        df = np.where(denom > 0, v**2 / denom, np.maximum(df_o, 1.0) + np.maximum(df_n, 1.0))
    df = np.maximum(df, 1.0)
    se = np.sqrt(v)
    half = t_ppf(0.5 + level / 2.0, df) * se
    return gap - half, gap + half, se, df


def replication_codes(same: npt.NDArray[np.bool_], flipped: npt.NDArray[np.bool_], new_gap: FloatArray,
                      low: FloatArray, high: FloatArray) -> npt.NDArray[np.int64]:
    """Vectorised rule: 0 replicated, 1 not replicated, 2 inconclusive (NaN bounds: no interval)."""
    import numpy as np

    outside = (new_gap < low) | (new_gap > high)
    inside = (new_gap >= low) & (new_gap <= high)
    return np.where(flipped | outside, 1, np.where(inside & same, 0, 2)).astype(np.int64)


def _signed(x: float | None) -> str:
    """A figure to three places with its sign, a true minus as the verdict writes it; n/a when there is none."""
    return "n/a" if x is None or not math.isfinite(x) else f"{x:+.3f}".replace("-", "−")


def replication_finding(original: RunGap, new: RunGap, rule: ReplicationRule = DEFAULT_RULE) -> ReplicationFinding:
    """The new run judged against the original under `rule` (module docstring)."""
    interval = prediction_interval(original, new, rule.level)
    level = f"{rule.level:.0%}"
    finding, direction = INCONCLUSIVE, None
    moved = (_finite(original.gap) and _finite(new.gap)
             and new.gap is not None and original.gap is not None)
    if moved:
        assert new.gap is not None and original.gap is not None
        direction = "rose" if new.gap > original.gap else "fell"
    gaps = f"gap {_signed(new.gap)} against {_signed(original.gap)} in the original"
    where = "" if interval is None else f" {level} prediction interval for a rerun [{_signed(interval.low)}, " \
        f"{_signed(interval.high)}]"
    if original.finding not in JUDGED or new.finding not in JUDGED:
        which = "the original" if original.finding not in JUDGED else "the new run"
        why = f"{which} is {original.finding if which == 'the original' else new.finding}: nothing to compare"
    elif (original.finding, new.finding) in _OPPOSITE:
        finding = NOT_REPLICATED
        why = f"the finding flipped, {original.finding} → {new.finding}; {gaps}"
    elif interval is None or not _finite(new.gap):
        why = f"{new.finding} again, but the run-to-run spread of a run cannot be measured: no prediction interval"
    else:
        assert new.gap is not None
        inside = interval.low <= new.gap <= interval.high
        if not inside:
            finding = NOT_REPLICATED
            why = f"the gap {direction} from {_signed(original.gap)} to {_signed(new.gap)}, outside the{where}"
        elif new.finding == original.finding:
            finding = REPLICATED
            why = f"{new.finding} again; {gaps}, inside the{where}"
        else:
            why = (f"{gaps}, inside the{where}, but the new run's own finding is {new.finding} "
                   f"(the original's: {original.finding})")
    if finding != NOT_REPLICATED:
        direction = None
    return ReplicationFinding(finding=finding, direction=direction, interval=interval, original_gap=original.gap,
                              new_gap=new.gap, why=why, text=f"{finding}: {why}.", rule=rule.name,
                              rule_digest=rule.digest())


# ------------------------------------------------------------------------------------------ probe drift


@dataclass(frozen=True)
class Drift:
    """A probe rerun against the original: changed or no change shown, with the change's interval."""

    finding: str
    """changed | no change shown"""
    direction: str | None
    """"fell" or "rose" when changed."""
    original_score: float
    new_score: float
    change: float
    ci_low: float
    ci_high: float
    p: float | None
    """The paired test's two-sided p (several fixtures); None for one prompt (decided by the interval)."""
    method: str
    n_fixtures: int
    level: float
    original_date: str
    new_date: str
    text: str


Scores = Mapping[str, Sequence[float | None]]


def _grid(scores: Scores, fixtures: Sequence[str]) -> FloatArray:
    import numpy as np

    width = max((len(scores[f]) for f in fixtures), default=1) or 1
    out = np.full((len(fixtures), width), np.nan)
    for i, f in enumerate(fixtures):
        for j, v in enumerate(scores[f]):
            out[i, j] = np.nan if v is None else float(v)
    return out


def probe_drift(original: Scores, new: Scores, *, alpha: float = 0.05, original_date: str = "",
                new_date: str = "", seed: int = 0) -> Drift:
    """A probe rerun compared with the original, fixture by fixture (fixture id → its repetitions' scores,
    None for an unscored one). Several fixtures scored in both: paired over fixtures (the mean change, a t
    interval on F − 1 df; changed when its p ≤ α and the exact sign-flip could reach α). One prompt (a probe's
    usual case): its repetitions, Newcombe's hybrid score interval of the change in mean score (Wilson's
    interval of each run's mean over its n scored repetitions); changed when it excludes 0."""
    import numpy as np


    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    both = [f for f in sorted(set(original) & set(new))
            if any(v is not None for v in original[f]) and any(v is not None for v in new[f])]
    if not both:
        raise ValueError("no fixture is scored in both runs")
    o, n = _grid(original, both), _grid(new, both)
    if len(both) >= 2:
        o_f, n_f = np.nanmean(o, axis=1), np.nanmean(n, axis=1)
        changed_a, lo_a, hi_a, p_a = paired_drift(o_f[None], n_f[None], alpha)
        changed, lo, hi, p = bool(changed_a[0]), float(lo_a[0]), float(hi_a[0]), float(p_a[0])
        method = f"paired over {len(both)} fixtures"
        o_mean, n_mean = float(o_f.mean()), float(n_f.mean())
    else:
        ko, kn = o[~np.isnan(o)], n[~np.isnan(n)]
        o_mean, n_mean = float(ko.mean()), float(kn.mean())
        lo_a, hi_a = newcombe(np.array([o_mean]), np.array([ko.size]), np.array([n_mean]), np.array([kn.size]),
                              alpha)
        lo, hi, p = float(lo_a[0]), float(hi_a[0]), None
        changed = lo > 0 or hi < 0
        method = f"{ko.size} against {kn.size} repetitions of one prompt"
    return _drift(changed, o_mean, n_mean, lo, hi, p, method, len(both), 1 - alpha, original_date, new_date)


def _drift(changed: bool, o_mean: float, n_mean: float, lo: float, hi: float, p: float | None, method: str,
           n_fixtures: int, level: float, original_date: str, new_date: str) -> Drift:
    change = n_mean - o_mean
    direction = ("fell" if change < 0 else "rose") if changed else None
    when_o = f" ({original_date})" if original_date else ""
    when_n = f" ({new_date})" if new_date else ""
    ci = (f"{level:.0%} CI of the change [{_signed(lo)}, {_signed(hi)}]" if math.isfinite(lo) and math.isfinite(hi)
          else "no interval: every fixture moved alike")
    pv = "" if p is None else f", p {p:.3g}"
    if changed:
        text = (f"changed: score {direction} from {o_mean:.2f}{when_o} to {n_mean:.2f}{when_n} "
                f"({ci}{pv}; {method})")
    else:
        text = (f"no change shown: score {o_mean:.2f}{when_o}, then {n_mean:.2f}{when_n} "
                f"({ci}{pv}; {method})")
    return Drift(finding=CHANGED if changed else NO_CHANGE, direction=direction, original_score=o_mean,
                 new_score=n_mean, change=change, ci_low=lo, ci_high=hi, p=p, method=method,
                 n_fixtures=n_fixtures, level=level, original_date=original_date, new_date=new_date, text=text)


def paired_drift(o: FloatArray, n: FloatArray, alpha: float
                 ) -> tuple[npt.NDArray[np.bool_], FloatArray, FloatArray, FloatArray]:
    """Vectorised over runs (S, F) of fixture means: changed, the t interval's ends and the two-sided p.

    The paired t over the fixtures' changes on F − 1 df; changed when p ≤ α and the exact sign-flip could reach
    α (2/2^n ≤ α over the n fixtures that moved), as the verdict decides. Every fixture moved alike: no
    interval (±inf) and the sign-flip p of n equal changes, 2/2^n, stands in for the t p."""
    import numpy as np

    from benchcard.stats.paired import t_ppf, t_sf

    d = n - o
    f = d.shape[1]
    gap = d.mean(axis=1)
    moved = np.count_nonzero(d, axis=1)
    floor = np.minimum(1.0, 2.0 * 0.5 ** moved.astype(np.float64))
    se = d.std(axis=1, ddof=1) / math.sqrt(f)
    zero = se <= 1e-12 * np.maximum(1.0, np.abs(gap))
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(zero, 0.0, gap / np.where(zero, 1.0, se))
        p = np.where(zero, np.where(moved > 0, floor, 1.0), 2.0 * t_sf(np.abs(t), f - 1))
        half = np.where(zero, np.inf, t_ppf(1 - alpha / 2, f - 1) * se)
    changed = (p <= alpha) & (floor <= alpha)
    return changed, gap - half, gap + half, np.minimum(p, 1.0)


def wilson_bounds(p: FloatArray, n: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """Vectorised Wilson score interval of a mean p over n repetitions ((0, 1) where n is 0)."""
    import numpy as np
    from scipy import special

    z = float(special.ndtri(1 - alpha / 2))
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / denom
    lo = np.where((n > 0) & (p > 0), np.clip(centre - half, 0.0, 1.0), 0.0)  # exact at 0 and 1 (not 1 − 1e-16)
    hi = np.where((n > 0) & (p < 1), np.clip(centre + half, 0.0, 1.0), 1.0)
    return lo, hi


def newcombe(p_o: FloatArray, n_o: FloatArray, p_n: FloatArray, n_n: FloatArray,
             alpha: float) -> tuple[FloatArray, FloatArray]:
    """Vectorised: Newcombe's hybrid score interval (his method 10) of p_n − p_o from the two Wilson intervals."""
    import numpy as np

    lo_o, hi_o = wilson_bounds(p_o, n_o, alpha)
    lo_n, hi_n = wilson_bounds(p_n, n_n, alpha)
    d = p_n - p_o
    low = d - np.sqrt((p_n - lo_n) ** 2 + (hi_o - p_o) ** 2)
    high = d + np.sqrt((hi_n - p_n) ** 2 + (p_o - lo_o) ** 2)
    return low, high
