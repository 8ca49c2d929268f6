"""Candidate variance forms for the verdict's t, each calibrated to its worst case, compared on power.

Every candidate maps the two-way mean squares of Δ (a = MS_fix/FR, b = MS_rep/FR, c = MS_err/FR) to a
variance and degrees of freedom; its p is then calibrated as `stats/worstcase.py` calibrates the rule's
(the supremum over a grid of fixture and run variance ratios of the normal model's null rate, 20,000 draws
a point) and combined with the exact sign-flip p, as the rule combines them. Printed: the A/A result rate
(‰) of the binary world of `calibration.py` at per-arm shock sd 0, 0.25, 0.5, 0.75, 1.0, 1.5 for each
design, and the power at five (F, R, gap) lines with no shocks. docs/statistics.md quotes it.

    python benchmarks/rule_sweep.py --sims 4000
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from scipy import special

from benchcard.stats.crossed import batch_signflip, crossed
from benchcard.stats.worstcase import FIXTURE_RATIOS, RUN_RATIOS
from calibration import Line, simulate  # beside this script

Array = npt.NDArray[np.float64]
Form = Callable[[Array, Array, Array, int, int], tuple[Array, Array]]
ALPHA = 0.05
DESIGNS = [(12, 3), (12, 5), (24, 3), (12, 2), (12, 10), (48, 3)]
SHOCKS = [0.0, 0.25, 0.5, 0.75, 1.0, 1.5]
POWER = [(12, 5, 0.15), (24, 3, 0.15), (12, 3, 0.26), (24, 5, 0.10), (48, 3, 0.15)]


def satterthwaite(a: Array, b: Array, c: Array, f: int, r: int) -> tuple[Array, Array]:
    """The rule's form (crossed.py): the excess over MS_fix, MS_rep and −MS_err."""
    e, err = np.maximum(0, b - c), (f - 1) * (r - 1)
    with np.errstate(all="ignore"):
        df = (a + b - c) ** 2 / (a * a / (f - 1) + b * b / (r - 1) + c * c / err)
    return a + e, np.maximum(np.where(e > 0, df, f - 1), 1)


def faded(power: float) -> Form:
    """The run term's share of the df fades with the excess's share of MS_rep."""
    def form(a: Array, b: Array, c: Array, f: int, r: int) -> tuple[Array, Array]:
        e, err = np.maximum(0, b - c), (f - 1) * (r - 1)
        w = np.where(b > 0, (e / np.maximum(b, 1e-300)) ** power, 0)
        with np.errstate(all="ignore"):
            df = (a + e) ** 2 / (a * a / (f - 1) + w * (b * b / (r - 1) + c * c / err))
        return a + e, np.maximum(np.where(e > 0, df, f - 1), 1)
    return form


def thresholded(k: float) -> Form:
    """Only the excess of MS_rep over k·MS_err counts (k < 1 keeps some run term when none is seen)."""
    def form(a: Array, b: Array, c: Array, f: int, r: int) -> tuple[Array, Array]:
        e, err = np.maximum(0, b - k * c), (f - 1) * (r - 1)
        with np.errstate(all="ignore"):
            df = (a + e) ** 2 / (a * a / (f - 1) + (e > 0) * (b * b / (r - 1) + (k * c) ** 2 / err))
        return a + e, np.maximum(np.where(e > 0, df, f - 1), 1)
    return form


def welch(a: Array, b: Array, c: Array, f: int, r: int) -> tuple[Array, Array]:
    """Welch-type df: the excess as a mean square on R − 1 degrees of freedom."""
    e = np.maximum(0, b - c)
    with np.errstate(all="ignore"):
        df = (a + e) ** 2 / (a * a / (f - 1) + e * e / (r - 1))
    return a + e, np.maximum(np.nan_to_num(df, nan=f - 1), 1)


def paired_df(a: Array, b: Array, c: Array, f: int, r: int) -> tuple[Array, Array]:
    """The excess added, F − 1 degrees of freedom throughout."""
    return a + np.maximum(0, b - c), np.full_like(a, f - 1.0)


FORMS: dict[str, Form] = {"satterthwaite (the rule)": satterthwaite, "faded df, power 1": faded(1.0),
                          "faded df, power 2": faded(2.0), "threshold k=0.5": thresholded(0.5),
                          "threshold k=1.5": thresholded(1.5), "welch df": welch, "F-1 df": paired_df}


def null_table(form: Form, f: int, r: int, draws: int = 20_000) -> Array:
    """Sorted null two-sided p's per grid point of the normal model (σ²_e/(FR) = 1)."""
    rng = np.random.default_rng(11)
    err = (f - 1) * (r - 1)
    z = rng.standard_normal(draws)
    u1, u2, u3 = (rng.chisquare(k, draws) / k for k in (f - 1, r - 1, err))
    rows = []
    for t1 in FIXTURE_RATIOS:
        for t2 in RUN_RATIOS:
            var, df = form((1 + t1) * u1, (1 + t2) * u2, u3, f, r)
            rows.append(np.sort(2 * special.stdtr(df, -np.abs(z) * np.sqrt(1 + t1 + t2) / np.sqrt(var))))
    return np.stack(rows)


def calibrated_p(form: Form, base: Array, var: Array, table: Array) -> Array:
    delta = var - base
    _, f, r = delta.shape
    row, col = delta.mean(2), delta.mean(1)
    g = row.mean(1)
    a = r * ((row - g[:, None]) ** 2).sum(1) / (f - 1) / (f * r)
    b = f * ((col - g[:, None]) ** 2).sum(1) / (r - 1) / (f * r)
    res = delta - row[:, :, None] - col[:, None, :] + g[:, None, None]
    c = (res ** 2).sum((1, 2)) / ((f - 1) * (r - 1)) / (f * r)
    v, df = form(a, b, c, f, r)
    with np.errstate(all="ignore"):
        p = np.where(v > 0, 2 * special.stdtr(df, -np.abs(g) / np.sqrt(v)), np.where(g != 0, 0.0, 1.0))
    hits = np.stack([np.searchsorted(t, p, side="right") for t in table]).max(0)
    out: Array = np.maximum(p, (hits + 1.0) / (table.shape[1] + 1.0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=4000)
    args = parser.parse_args()
    worlds: dict[tuple[int, int, float, float], tuple[Array, Array, Array]] = {}
    for f, r in DESIGNS:
        for shock in SHOCKS:
            worlds[(f, r, shock, 0.0)] = _world(f, r, shock, 0.0, args.sims)
    for f, r, gap in POWER:
        worlds[(f, r, 0.0, gap)] = _world(f, r, 0.0, gap, args.sims)
    for name, form in FORMS.items():
        tables = {(f, r): null_table(form, f, r) for f, r in {(k[0], k[1]) for k in worlds}}
        aa = []
        for f, r in DESIGNS:
            rates = []
            for shock in SHOCKS:
                base, var, flip = worlds[(f, r, shock, 0.0)]
                rates.append(((calibrated_p(form, base, var, tables[(f, r)]) <= ALPHA) & (flip <= ALPHA)).mean())
            aa.append(f"{f}x{r}: " + " ".join(f"{1000 * x:.0f}" for x in rates))
        power = []
        for f, r, gap in POWER:
            base, var, flip = worlds[(f, r, 0.0, gap)]
            p = calibrated_p(form, base, var, tables[(f, r)])
            power.append(((p <= ALPHA) & (flip <= ALPHA) & (var.mean((1, 2)) > base.mean((1, 2)))).mean())
        print(f"{name:26s} power " + " ".join(f"{x:.3f}" for x in power)
              + f"   (F,R,gap: {', '.join(f'{f}/{r}/{g}' for f, r, g in POWER)})")
        print("    A/A ‰ by per-arm shock sd " + "/".join(f"{s:g}" for s in SHOCKS) + ": " + " | ".join(aa))


def _world(f: int, r: int, shock: float, gap: float, sims: int) -> tuple[Array, Array, Array]:
    rng = np.random.default_rng(1)
    base, variants, _ = simulate(Line("sweep", fixtures=f, repetitions=r, arm_shock=shock, gap=gap), sims, rng)
    c = crossed(base, variants[0])
    return base, variants[0], batch_signflip(c.d, c.n_fixtures)


if __name__ == "__main__":
    main()
