"""The decision of a win rule, vectorised: each clause's evidence as a p-value, Holm, and the finding codes.

The verdict calls this with a batch of one run; `benchcard plan` and `benchmarks/calibration.py` with
thousands of simulated runs, so the power and the error rates they report are those of this code.

- `rises`/`falls` hold when the calibrated two-sided t p (crossed.py, worstcase.py) is ≤ α, in the claimed
  direction, the exact sign-flip could reach α (2/2^n ≤ α over the n fixtures that moved: few fixtures cannot
  win, F ≤ 5 at α = 0.05), and the gap reaches `min_effect`; a zero standard error is never certainty (then the
  sign-flip p decides alone).
- A guard holds when its one-sided calibrated test rejects "beyond the margin"; it is *broken* when the
  opposite one-sided test rejects "within the margin".
- A loss (the first clause significantly the wrong way, or a guard broken) needs the same evidence as a win,
  under Holm's correction across every loss-capable clause of every variant. A win of one variant is an
  intersection-union test of its clauses (no correction inside it); across variants, Holm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from benchcard.stats.crossed import BoolArray, Crossed, FloatArray, IntArray, calibrated_p, crossed, one_sided_flip

WIN, LOSS, NO_EFFECT, INCONCLUSIVE = 0, 1, 2, 3
FINDINGS = ("win", "loss", "no-effect", "inconclusive")


def p_two_sided(c: Crossed, p_flip: FloatArray, *, worst: bool = True) -> FloatArray:
    """The calibrated two-sided t p; where the standard error is zero, the sign-flip p stands in for it. With
    `worst` False, a floor of it (`calibrated_p`)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.abs(c.gap) / c.se
        p = np.where(np.isfinite(c.se), 2.0 * calibrated_p(c, t, worst=worst), 1.0)
    out: FloatArray = np.where(c.zero_se, p_flip, np.minimum(p, 1.0))
    return np.where(np.isnan(c.gap), 1.0, out)


def p_effect(c: Crossed, p_flip: FloatArray, up: bool, *, worst: bool = True) -> FloatArray:
    """Evidence that the gap moved in the direction `up` (rises) or not (falls): the calibrated t p, never below
    the smallest p the exact sign-flip could reach (few fixtures cannot win); with a zero standard error the
    sign-flip p itself (p_two_sided). With `worst` False, a floor of it (`calibrated_p`)."""
    right_way = c.gap > 0 if up else c.gap < 0
    out: FloatArray = np.where(right_way, np.maximum(p_two_sided(c, p_flip, worst=worst), c.flip_floor), 1.0)
    return out


def p_beyond(c: Crossed, bound: float, above: bool, *, worst: bool = True) -> FloatArray:
    """One-sided p against "the gap is on the other side of `bound`": small when the gap is shown `above` it
    (or below it). With a zero standard error, the one-sided sign-flip of the n equal differences (2^−n). With
    `worst` False, a floor of it (`calibrated_p`)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (c.gap - bound) / c.se if above else (bound - c.gap) / c.se
        p = np.where(np.isfinite(c.se), calibrated_p(c, z, worst=worst), 1.0)
    beyond = c.gap > bound if above else c.gap < bound
    zero = np.where(beyond, one_sided_flip(c.n_fixtures), 1.0)
    out: FloatArray = np.where(c.zero_se, zero, p)
    return np.where(np.isnan(c.gap), 1.0, out)


def p_tost(c: Crossed, margin: float) -> FloatArray:
    """TOST p for equivalence within ±margin, with the calibrated variance."""
    out: FloatArray = np.maximum(p_beyond(c, -margin, True), p_beyond(c, margin, False))
    return out


def tost(baseline: npt.ArrayLike, variant: npt.ArrayLike, margin: float, alpha: float = 0.05) -> float:
    """The equivalence test the verdict's "no-effect" rests on, for one pair of arrays shaped (fixtures,
    repetitions): the gap of variant over baseline tested against −margin and against +margin, one-sided, with
    the calibrated variance (`p_tost` over `crossed`); p is the larger of the two. Equivalence within ±margin is
    shown when p < alpha: `alpha` is checked, and the p does not depend on it. A NaN cell is unscored, left out."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    if not margin > 0.0:
        raise ValueError(f"margin must be above 0, got {margin}")
    arrays = [np.asarray(a, dtype=np.float64) for a in (baseline, variant)]
    for name, arr in zip(("baseline", "variant"), arrays, strict=True):
        if arr.ndim != 2:
            raise ValueError(f"{name} must be shaped (fixtures, repetitions), got {arr.ndim} dimensions")
    if arrays[0].shape != arrays[1].shape:
        raise ValueError(f"baseline is shaped {arrays[0].shape} but variant {arrays[1].shape}")
    return float(p_tost(crossed(*arrays), margin)[0])


def holm(p: FloatArray, alpha: float) -> BoolArray:
    """Holm's step-down rejections along the last axis (family-wise error ≤ alpha)."""
    k = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    sorted_p = np.take_along_axis(p, order, axis=-1)
    steps = alpha / (k - np.arange(k))
    ok = np.cumprod(sorted_p <= steps, axis=-1).astype(bool)
    out = np.zeros_like(ok)
    np.put_along_axis(out, order, ok, axis=-1)
    return out


@dataclass(frozen=True)
class Evidence:
    """One clause of one variant, judged over S runs. `p_hold`: evidence it holds (a `holds` clause: 0 or 1);
    `p_loss`: evidence of the loss it can produce (None when it produces none); `trivial`: significant but
    smaller than `min_effect` (the first clause only)."""

    p_hold: FloatArray
    p_loss: FloatArray | None = None
    trivial: BoolArray | None = None


def effect_evidence(c: Crossed, p_flip: FloatArray, up: bool, min_effect: float = 0.0) -> Evidence:
    """A `rises` (up) or `falls` clause, and its mirror as the loss it can produce."""
    p_hold = p_effect(c, p_flip, up)
    size = c.gap if up else -c.gap
    trivial = size < min_effect
    return Evidence(p_hold=np.where(trivial, 1.0, p_hold), p_loss=p_effect(c, p_flip, not up),
                    trivial=trivial & (p_hold < 1.0))


def guard_evidence(c: Crossed, margin: float, test: str) -> Evidence:
    """`not_rises` (the gap shown below +margin; broken when shown above it) or `not_falls` (mirror)."""
    if test == "not_rises":
        return Evidence(p_hold=p_beyond(c, margin, False), p_loss=p_beyond(c, margin, True))
    return Evidence(p_hold=p_beyond(c, -margin, True), p_loss=p_beyond(c, -margin, False))


def holds_evidence(holds: BoolArray) -> Evidence:
    return Evidence(p_hold=np.where(holds, 0.0, 1.0))


@dataclass(frozen=True)
class Decision:
    """Per variant (rows) and run (columns): the finding code, and which clauses were judged to hold / lose."""

    codes: IntArray
    win_rejected: BoolArray
    loss_rejected: list[list[BoolArray | None]]
    equivalent: BoolArray


def decide(evidence: Sequence[Sequence[Evidence]], tost: Sequence[FloatArray], measurable: Sequence[BoolArray],
           alpha: float) -> Decision:
    """The finding of every variant: `evidence[v][k]` is clause k of variant v; `tost[v]` the first clause's
    TOST p; `measurable[v]` False where neither arm varied (a floor or ceiling: never "no-effect")."""
    n_var = len(evidence)
    win_p = np.stack([np.max(np.stack([e.p_hold for e in ev]), axis=0) for ev in evidence])  # (V, S)
    win = holm(win_p.T, alpha).T & (win_p <= alpha)
    slots = [(v, k) for v in range(n_var) for k, e in enumerate(evidence[v]) if e.p_loss is not None]
    loss_rej: list[list[BoolArray | None]] = [[None] * len(ev) for ev in evidence]
    lost = np.zeros_like(win)
    if slots:
        loss_p = np.stack([evidence[v][k].p_loss for v, k in slots], axis=-1)  # type: ignore[misc]
        rejected = holm(loss_p, alpha)
        for j, (v, k) in enumerate(slots):
            loss_rej[v][k] = rejected[..., j]
            lost[v] |= rejected[..., j]
    codes = np.full(win.shape, INCONCLUSIVE, dtype=np.int64)
    equivalent = np.zeros_like(win)
    for v, ev in enumerate(evidence):
        guards_hold = np.all(np.stack([e.p_hold <= alpha for e in ev[1:]]), axis=0) if len(ev) > 1 else True
        equivalent[v] = (tost[v] < alpha) & measurable[v]
        codes[v] = np.where(equivalent[v] & guards_hold, NO_EFFECT, codes[v])
        codes[v] = np.where(lost[v], LOSS, codes[v])
        codes[v] = np.where(win[v], WIN, codes[v])
    return Decision(codes=codes, win_rejected=win, loss_rejected=loss_rej, equivalent=equivalent)


def overall(codes: IntArray) -> IntArray:
    """The run's finding from its variants' (rows): a loss anywhere is shown (one's win never hides another's
    loss); else a win; else no-effect if every variant is; else inconclusive."""
    any_loss = (codes == LOSS).any(axis=0)
    any_win = (codes == WIN).any(axis=0)
    all_none = (codes == NO_EFFECT).all(axis=0)
    out: IntArray = np.where(any_loss, LOSS, np.where(any_win, WIN, np.where(all_none, NO_EFFECT, INCONCLUSIVE)))
    return out
