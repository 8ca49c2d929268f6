"""The most power any rule can have at issue 23's power lines while keeping the A/A lines: a bound.

**Why a bound covers every rule.** A rule that is a level-α test at each of a set of null worlds is a level-α
test of any mixture Λ of them, so by the Neyman–Pearson lemma its power at a simple alternative is at most that
of the likelihood-ratio test of Λ against it. Dually, for any weights μ_j ≥ 0 on null worlds f_j with levels
c_j, every rule φ whose rate is ≤ c_j at each f_j has

    power(φ) = E_alt φ ≤ E_alt φ·(1 − Σ_j μ_j f_j/f_alt) + Σ_j μ_j c_j ≤ E_alt (1 − Σ_j μ_j L_j)⁺ + Σ_j μ_j c_j,

L_j = f_j/f_alt, so **every choice of μ gives a valid bound**, estimated without bias from draws of the
alternative alone (the first term lies in [0, 1]); the least favourable μ, found here by linear programming over
a grid of null worlds with column generation, gives the tightest one. The bound is evaluated on fresh draws.

**The model.** Normal, every variance known to the rule, measured in `calibration.simulate`'s binomial world.
Per run: D_r, S_r = the mean over fixtures of variant − baseline and variant + baseline in repetition r; d_f =
the mean over repetitions of variant − baseline at fixture f. Under every hypothesis the sufficient statistic
is (D̄; the 2 × 2 scatter W of the (D_r, S_r) about their means, R − 1 df; SS_fix = Σ_f (d_f − D̄)², F − 1 df):
the arms' level (S̄) is a nuisance the rule cannot use (flat over the baselines' level, a mixture of null
worlds), the error stratum (fixture × repetition) and the arms' fixture difficulty have the same law under
every hypothesis (ancillary), given that the null worlds' cell noise is the alternative's (an A/A world whose
variant answers some fixtures deterministically, like calibration's "variant deterministic" line, has that).
Null worlds (gap 0): independent per-arm repetition shocks of *any* sizes u_B, u_V (baseline-only and
variant-only shocks included; D and S are then correlated: Cov = u_V − u_B), a shock shared by both arms, a
fixture term ω² (fixtures differ in their gap: the verdict speaks about fixtures like these), up to the largest
A/A line's sizes (per-arm logit sd 1.5, shared sd 1.0) and ω ≤ 0.32. Alternative: the gap, no shock.

**The classes of rules** (any measurable function of the run's cells; the sides of α):
- (a) the win rate is ≤ α/2 at every null world;
- (b) the result (win or loss) rate is ≤ α at every null world and renaming the arms turns a win into a loss
  (a symmetric rule; the verdict's): then win(θ) + win(θ') ≤ α for a world θ and its mirror θ' (arms renamed),
  so the components are mirror pairs at α/2 and single worlds at α. Those win constraints are all (b)'s bound
  uses, so it covers every rule that keeps them, symmetric or not; every rule of (a) keeps them, so (b)'s bound
  is never below (a)'s;
- (c) the win rate is ≤ α at every null world (a rule that may spend all of α on wins: every rule whose A/A
  result rate is ≤ α).

The fit check applies the bound's own (a) test to the binomial world's runs and to each world's normal twin
(the normal law with the world's own measured moments). The first table is the previous session's bound (nulls
"no shock" and "equal per-arm shocks", D and S independent), kept for comparison.

    python benchmarks/power_bound.py --sims 20000 --draws 200000 --seed 7
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from scipy import sparse
from scipy.optimize import linprog
from scipy.special import logsumexp, ndtr

from calibration import Line, run_line, simulate

Array = npt.NDArray[np.float64]
ALPHA = 0.05
GAP = 0.15
#: (F, R, the gap, issue 23's target there)
DESIGNS: list[tuple[int, int, float, float | None]] = [
    (12, 5, GAP, 0.35), (24, 3, GAP, 0.30), (48, 3, GAP, 0.52), (12, 10, GAP, 0.65), (12, 5, 0.30, 0.80),
    (12, 3, GAP, None), (24, 10, GAP, None)]


def tau2(d: Array) -> float:
    """The within-run variance of the gaps D_r, the τ² of the normal model."""
    return float(d.var(axis=1, ddof=1).mean())


def spread(x: Array) -> Array:
    out: Array = ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    return out


def sufficient(d: Array, total: Array) -> tuple[Array, Array, Array]:
    return d.mean(axis=1), spread(d), spread(total)


World = tuple[float, float]
"""(τ²_D, τ²_S) of one world."""


class LikelihoodRatio:
    """log f(data | δ, alt) − log Σ_k w_k f(data | 0, world_k): the Neyman–Pearson statistic of a mixture of null
    worlds against the alternative, on the gaps' mean and sum of squares and the arm sums' sum of squares
    (`sums=False`: the gaps alone, the previous session's bound)."""

    def __init__(self, r: int, delta: float, alt: World, nulls: list[World], weights: tuple[float, ...],
                 sums: bool = True):
        self.r, self.delta, self.alt, self.nulls, self.sums = r, delta, alt, nulls, sums
        self.logw = np.log(np.maximum(np.asarray(weights), 1e-300))

    def log_density(self, m: Array, ss: Array, ss_s: Array, mu: float, world: World) -> Array:
        t2, s2 = world
        out: Array = -self.r / 2 * np.log(t2) - (ss + self.r * (m - mu) ** 2) / (2 * t2)
        if self.sums:  # the spread of the sums: s2·χ²_{R−1}
            out = out - (self.r - 1) / 2 * np.log(s2) - ss_s / (2 * s2)
        return out

    def __call__(self, m: Array, ss: Array, ss_s: Array) -> Array:
        mix = np.stack([w + self.log_density(m, ss, ss_s, 0.0, k) for w, k in zip(self.logw, self.nulls, strict=True)])
        out: Array = self.log_density(m, ss, ss_s, self.delta, self.alt) - logsumexp(mix, axis=0)
        return out


def lr_bound(repetitions: int, delta: float, alt_world: World, null_worlds: list[World], level: float,
             mixtures: list[tuple[float, ...]], draws: int, rng: np.random.Generator,
             sums: bool = True) -> tuple[float, LikelihoodRatio, float]:
    """Smallest Neyman–Pearson power over the mixtures of null worlds, with its statistic and critical value.

    (mean, sum of squares) of the R gaps and the sums' sum of squares are sufficient in the normal model, so
    they are drawn directly."""
    r = repetitions

    def draw(mu: float, world: World) -> tuple[Array, Array, Array]:
        t2, s2 = world
        return (mu + math.sqrt(t2 / r) * rng.standard_normal(draws), t2 * rng.chisquare(r - 1, draws),
                s2 * rng.chisquare(r - 1, draws))

    alt = draw(delta, alt_world)
    nulls = [draw(0.0, world) for world in null_worlds]
    best: tuple[float, LikelihoodRatio, float] | None = None
    for weights in mixtures:
        llr = LikelihoodRatio(r, delta, alt_world, null_worlds, weights, sums)
        # The mixture's null sample: component k's first w_k·draws draws.
        null = np.concatenate([llr(*nulls[k])[: round(w * draws)] for k, w in enumerate(weights)])
        critical = float(np.quantile(null, 1 - level))
        power = float((llr(*alt) > critical).mean())
        if best is None or power < best[0]:
            best = (power, llr, critical)
    assert best is not None
    return best


# ---- the bound over every rule: a least favourable mixture of null worlds (issue 23 points 3-4) ----

CAP = 1e4  # likelihood ratios are clipped at this inside the search only: a smaller ratio can only raise a bound
Cells = tuple[Array, Array]


@dataclass(frozen=True)
class Law:
    """One hypothesis of the normal model: the law of (D̄, W, SS_fix) of one run of F fixtures × R repetitions."""

    mean: float
    var_mean: float
    rep: tuple[float, float, float]  # covariance of (D_r, S_r): dd, ds, ss
    fix: float  # variance of a fixture's gap d_f about D̄

    def mirror(self) -> Law:
        """The same world with the arms renamed: D → −D, S → S."""
        return replace(self, mean=-self.mean, rep=(self.rep[0], -self.rep[1], self.rep[2]))

    def coefficients(self, r: int, f: int) -> tuple[float, Array]:
        """log density = const + features · beta (up to terms equal under every law), with the features
        (D̄², D̄, W_dd, W_ds, W_ss, SS_fix)."""
        a, c, d = self.rep
        det = a * d - c * c
        v, mu, b = self.var_mean, self.mean, self.fix
        const = -0.5 * math.log(v) - mu * mu / (2 * v) - (r - 1) / 2 * math.log(det) - (f - 1) / 2 * math.log(b)
        return const, np.array([-1 / (2 * v), mu / v, -d / det / 2, c / det, -a / det / 2, -1 / (2 * b)])

    def draw(self, r: int, f: int, n: int, rng: np.random.Generator) -> Array:
        """Features of n runs drawn from the law."""
        m = self.mean + math.sqrt(self.var_mean) * rng.standard_normal(n)
        a, c, d = self.rep
        z = rng.standard_normal((n, r - 1, 2)) @ np.linalg.cholesky(np.array([[a, c], [c, d]])).T
        w = np.einsum("nki,nkj->nij", z, z)
        return np.column_stack([m * m, m, w[:, 0, 0], w[:, 0, 1], w[:, 1, 1], self.fix * rng.chisquare(f - 1, n)])


def features(base: Array, var: Array) -> tuple[Array, Array]:
    """The sufficient statistic's features of simulated runs, (sims, 6), and each run's error mean square."""
    delta, total = var - base, var + base
    d, s = delta.mean(axis=1), total.mean(axis=1)
    m = d.mean(axis=1)
    dd, ds = d - m[:, None], s - s.mean(axis=1, keepdims=True)
    per_fixture = delta.mean(axis=2)
    f, r = delta.shape[1], delta.shape[2]
    resid = delta - per_fixture[:, :, None] - d[:, None, :] + m[:, None, None]
    err: Array = (resid ** 2).sum(axis=(1, 2)) / ((f - 1) * (r - 1))
    ss_fix = ((per_fixture - m[:, None]) ** 2).sum(axis=1)
    return np.column_stack([m * m, m, (dd * dd).sum(1), (dd * ds).sum(1), (ds * ds).sum(1), ss_fix]), err


def twin(x: Array, r: int, f: int) -> Law:
    """The normal law with the runs' own measured moments."""
    w = x[:, 2:5].mean(axis=0) / (r - 1)
    return Law(float(x[:, 1].mean()), float(x[:, 1].var()), (float(w[0]), float(w[1]), float(w[2])),
               float(x[:, 5].mean() / (f - 1)))


@dataclass(frozen=True)
class Null:
    """A component: one null world, or a world and its mirror half and half (`paired`), at its level."""

    law: Law
    paired: bool
    level: float
    label: str


def log_ratios(x: Array, alt: Law, nulls: list[Null], r: int, f: int) -> Array:
    """log f_null(x) − log f_alt(x), (n, len(nulls))."""
    c1, b1 = alt.coefficients(r, f)
    own = [n.law.coefficients(r, f) for n in nulls]
    out: Array = np.asarray([c for c, _ in own]) + x @ np.array([b for _, b in own]).T
    paired = np.array([n.paired for n in nulls])
    if paired.any():
        mirrored = [n.law.mirror().coefficients(r, f) for n in nulls]
        other = np.asarray([c for c, _ in mirrored]) + x @ np.array([b for _, b in mirrored]).T
        out = np.where(paired, np.logaddexp(out, other) - math.log(2), out)
    result: Array = out - (c1 + x @ b1)[:, None]
    return result


def ratios(x: Array, alt: Law, nulls: list[Null], r: int, f: int) -> Array:
    out: Array = np.exp(np.minimum(log_ratios(x, alt, nulls, r, f), 700))
    return out


def solve(ratio: Array, levels: Array) -> Array:
    """The μ ≥ 0 minimising mean((1 − ratio·μ)⁺) + levels·μ over the draws: a linear programme."""
    n, k = ratio.shape
    cost = np.concatenate([levels, np.full(n, 1 / n)])
    a_ub = sparse.hstack([sparse.csr_matrix(-np.minimum(ratio, CAP)), -sparse.identity(n, format="csr")])
    res = linprog(cost, A_ub=a_ub, b_ub=-np.ones(n), bounds=(0, None), method="highs")
    assert res.status == 0, res.message
    return np.asarray(res.x[:k], dtype=np.float64)


def dual_value(ratio: Array, mu: Array, levels: Array) -> tuple[float, float]:
    """E_alt (1 − Σ μ_j L_j)⁺ + Σ μ_j c_j on these draws, and its standard error."""
    v = np.maximum(1 - ratio @ mu, 0)
    return float(v.mean() + levels @ mu), float(v.std() / math.sqrt(len(v)))


@dataclass(frozen=True)
class Bound:
    value: float
    se: float
    nulls: list[Null]
    mu: Array

    def rejects(self, x: Array, alt: Law, r: int, f: int) -> npt.NDArray[np.bool_]:
        """The bound's own test: the alternative's density above Σ μ_j f_j."""
        out: npt.NDArray[np.bool_] = ratios(x, alt, self.nulls, r, f) @ self.mu < 1
        return out


def reduced_costs(x: Array, reject: npt.NDArray[np.bool_], alt: Law, cands: list[Null], r: int, f: int) -> Array:
    """c_j − E_alt[L_j · test]: a null world where the current test's level exceeds its own (negative)."""
    out = np.array([c.level for c in cands])
    chunk = 500
    for i in range(0, len(cands), chunk):
        out[i:i + chunk] -= np.minimum(ratios(x[reject], alt, cands[i:i + chunk], r, f), CAP).sum(axis=0) / len(x)
    return out


def least_favourable(alt: Law, cands: list[Null], r: int, f: int, fit: int, evaluate: int,
                     rng: np.random.Generator, rounds: int = 40, add: int = 10) -> Bound:
    """Column generation: solve over a working set of worlds, add the worlds whose level the current test
    exceeds most, until none does; then the bound of the final μ on `evaluate` fresh draws."""
    x = alt.draw(r, f, fit, rng)
    levels = np.array([c.level for c in cands])
    work, mu = [0], np.zeros(1)
    for _ in range(rounds):
        ratio = ratios(x, alt, [cands[i] for i in work], r, f)
        mu = solve(ratio, levels[work])
        reduced = reduced_costs(x, np.minimum(ratio, CAP) @ mu < 1, alt, cands, r, f)
        reduced[work] = np.inf
        new = [int(j) for j in np.argsort(reduced)[:add] if reduced[j] < -2e-4]
        if not new:
            break
        work = [w for w, m in zip(work, mu, strict=True) if m > 0] + new
    keep = [(w, m) for w, m in zip(work, mu, strict=True) if m > 0]
    nulls, weights = [cands[w] for w, _ in keep], np.array([m for _, m in keep])
    fresh = ratios(alt.draw(r, f, evaluate, rng), alt, nulls, r, f)
    value, se = dual_value(fresh, weights, levels[[w for w, _ in keep]])
    return Bound(value, se, nulls, weights)


#: The binomial worlds measured per design: (baseline shock sd, variant shock sd, shared shock sd, fixture term),
#: logit scale; the fixture term gives the arms logits a_f ± u_f, u_f ~ N(0, sd²), a gap of 0 on average.
WORLDS: dict[str, tuple[float, float, float, float]] = {
    "no shock": (0.0, 0.0, 0.0, 0.0), "per-arm 0.5": (0.5, 0.5, 0.0, 0.0), "per-arm 1.0": (1.0, 1.0, 0.0, 0.0),
    "per-arm 1.5": (1.5, 1.5, 0.0, 0.0), "baseline only 1.0": (1.0, 0.0, 0.0, 0.0),
    "variant only 1.0": (0.0, 1.0, 0.0, 0.0), "shared 1.0": (0.0, 0.0, 1.0, 0.0),
    "fixture term 0.5": (0.0, 0.0, 0.0, 0.5),
}


def cells(fixtures: int, reps: int, gap: float, world: tuple[float, float, float, float], sims: int,
          rng: np.random.Generator) -> Cells:
    """Baseline and variant cells, (sims, F, R), of `calibration.simulate`'s world (plus the fixture term)."""
    base_sd, var_sd, shared_sd, fixture_sd = world
    if not fixture_sd:
        line = Line("bound", fixtures, reps, gap=gap, arm_shock=base_sd, variant_shock=var_sd, shared_shock=shared_sd)
        base, variants, _ = simulate(line, sims, rng)
        return base, variants[0]
    a = 0.5 + rng.standard_normal((sims, fixtures, 1))
    u = fixture_sd * rng.standard_normal((sims, fixtures, 1))
    p_base = np.repeat(1 / (1 + np.exp(-(a - u))), reps, axis=2)
    p_var = np.clip(np.repeat(1 / (1 + np.exp(-(a + u))), reps, axis=2) + gap, 0, 1)
    return rng.binomial(1, p_base).astype(np.float64), rng.binomial(1, p_var).astype(np.float64)


@dataclass(frozen=True)
class Grid:
    """The null worlds searched, built on the alternative's cell noise, with their logit-scale equivalents."""

    alt: Law
    noise_fix: float  # the cells' noise in a fixture's gap, σ²/R
    arm: tuple[float, float, float]  # a per-arm shock's variance in D_r at logit sd 0.5, 1.0, 1.5
    shared: float  # a shared shock's variance in S_r at logit sd 1.0, over 4
    r: int
    f: int

    def law(self, ub: float, uv: float, ush: float, om2: float) -> Law:
        a, c, d = self.alt.rep
        rep = (a + ub + uv, c + uv - ub, d + ub + uv + 4 * ush)
        return Law(0.0, rep[0] / self.r + om2 / self.f, rep, self.noise_fix + om2)

    def label(self, ub: float, uv: float, ush: float, om2: float, paired: bool) -> str:
        def sd(u: float) -> str:
            return f"{float(np.interp(math.sqrt(u), [0, *np.sqrt(self.arm)], [0, 0.5, 1.0, 1.5])):.2f}"

        arms = f"one arm {sd(ub)}, the other {sd(uv)}" if paired else f"baseline {sd(ub)}, variant {sd(uv)}"
        return f"{arms}, shared {math.sqrt(ush / self.shared):.2f}, fixture ω {math.sqrt(om2):.3f}"

    def nulls(self, kind: str) -> list[Null]:
        """(a) every world at α/2; (b) mirror pairs at α/2 and single worlds at α; (c) every world at α;
        (b0) as (b) without the fixture term."""
        us = [0.0, *np.geomspace(self.arm[2] / 100, self.arm[2], 10)]
        oms = [0.0] if kind == "b0" else [0.0, *np.geomspace(1e-3, 0.1, 8)]
        out = []
        for ub, uv, ush, om2 in itertools.product(us, us, [0.0, self.shared], oms):
            law = self.law(ub, uv, ush, om2)
            if kind.startswith("b") and ub <= uv:
                out.append(Null(law, True, ALPHA / 2, self.label(ub, uv, ush, om2, True)))
            out.append(Null(law, False, ALPHA / 2 if kind == "a" else ALPHA, self.label(ub, uv, ush, om2, False)))
        return out


def grid_of(measured: dict[str, tuple[Array, Array]], r: int, f: int) -> tuple[Grid, float]:
    """The grid on the alternative's measured law, and the alternative's fixture term ω²."""
    alt_x, alt_err = measured["alt"]
    alt = twin(alt_x, r, f)
    noise_fix = float(alt_err.mean()) / r
    om2 = max(0.0, alt.fix - noise_fix)
    alt = Law(alt.mean, alt.rep[0] / r + om2 / f, alt.rep, noise_fix + om2)
    none = twin(measured["no shock"][0], r, f).rep
    arm = tuple((twin(measured[f"per-arm {sd}"][0], r, f).rep[0] - none[0]) / 2 for sd in ("0.5", "1.0", "1.5"))
    shared = (twin(measured["shared 1.0"][0], r, f).rep[2] - none[2]) / 4
    assert len(arm) == 3
    return Grid(alt, noise_fix, (arm[0], arm[1], arm[2]), shared, r, f), om2


Measured = dict[str, tuple[Array, Array]]
"""Per world ("alt" and `WORLDS`): the runs' features and error mean squares."""
Sums = dict[str, tuple[Array, Array]]
"""Per world: the runs' gaps D_r and arm sums S_r, (sims, R), for the previous bound."""


def measure(fixtures: int, reps: int, gap: float, sims: int, rng: np.random.Generator) -> tuple[Measured, Sums]:
    measured: Measured = {}
    sums: Sums = {}
    for name, world in {"alt": (0.0, 0.0, 0.0, 0.0), **WORLDS}.items():
        base, var = cells(fixtures, reps, gap if name == "alt" else 0.0, world, sims, rng)
        measured[name] = features(base, var)
        sums[name] = (var - base).mean(axis=1), (var + base).mean(axis=1)
    return measured, sums


def old_row(fixtures: int, reps: int, gap_text: str, sums: Sums, draws: int, rng: np.random.Generator) -> str:
    """The previous session's bound: nulls "no shock" and "equal per-arm shocks", D and S independent."""
    start = time.perf_counter()
    d_alt = sums["alt"]
    d_null = {0.0: sums["no shock"], 0.5: sums["per-arm 0.5"], 1.0: sums["per-arm 1.0"]}
    two: list[tuple[float, ...]] = [(1 - a, a) for a in np.linspace(0, 1, 21)]
    grid = np.linspace(0, 1, 6)
    three: list[tuple[float, ...]] = [(a, b, round(1 - a - b, 10)) for a in grid for b in grid if a + b <= 1]
    three += [(*w, 0.0) for w in two]  # mixtures of the first two worlds are mixtures of the three
    delta = float(d_alt[0].mean())
    alt: World = (tau2(d_alt[0]), tau2(d_alt[1]))
    worlds = {sd: (tau2(d), tau2(s)) for sd, (d, s) in d_null.items()}
    z = float(ndtr(delta / math.sqrt(alt[0] / reps) - 1.959964))
    half = ALPHA / 2
    pair = [worlds[0.0], worlds[0.5]]
    gaps_only = lr_bound(reps, delta, alt, pair, half, two, draws, rng, sums=False)[0]
    b5, llr, critical = lr_bound(reps, delta, alt, pair, half, two, draws, rng)
    b10 = lr_bound(reps, delta, alt, [*pair, worlds[1.0]], half, three, draws, rng)[0]
    one = lr_bound(reps, delta, alt, pair, ALPHA, two, draws, rng)[0]
    aa = float((llr(*sufficient(*d_null[0.5])) > critical).mean())
    power = float((llr(*sufficient(*d_alt)) > critical).mean())
    taus = " · ".join(f"{t:.4f}/{u:.4f}" for t, u in (worlds[0.0], alt, worlds[0.5], worlds[1.0]))
    return (f"| {fixtures} × {reps}{gap_text} | {delta:.4f} | {taus} | {z:.3f} | {gaps_only:.3f} | **{b5:.3f}** | "
            f"{aa:.3f} / {power:.3f} | {b10:.3f} | {one:.3f} | {time.perf_counter() - start:.0f} |")


def mixture_text(bound: Bound) -> str:
    """The least favourable mixture's components of weight ≥ 5 %, heaviest first."""
    weights = bound.mu / bound.mu.sum()
    parts = sorted(zip(weights, bound.nulls, strict=True), key=lambda p: -p[0])
    return "; ".join(f"{w:.2f}: {n.label}{' (pair, α/2)' if n.paired else ''}" for w, n in parts if w >= 0.05)


def fit_row(name: str, grid: Grid, bound: Bound, measured: Measured, sims: int, rng: np.random.Generator) -> str:
    """The (a) bound's own test on each binomial world's runs and on its normal twin, and the error mean square."""
    r, f = grid.r, grid.f
    cols = []
    for world in ["alt", *WORLDS]:
        x = measured[world][0]
        own = twin(x, r, f).draw(r, f, sims, rng)
        cols.append(f"{bound.rejects(x, grid.alt, r, f).mean():.3f} / {bound.rejects(own, grid.alt, r, f).mean():.3f}")
    errs = f"{measured['alt'][1].mean():.3f} / {measured['no shock'][1].mean():.3f}"
    return f"| {name} | " + " | ".join(cols) + f" | {errs} |"


def rule_row(name: str, fixtures: int, reps: int, gap: float, bound: Bound, target: float | None, sims: int,
             rng: np.random.Generator) -> str:
    """The verdict's rule (stats/, through calibration.run_line) at this design: its power and the paired t's, its
    A/A result rate where one arm alone has shocks of logit sd 0.8 (the least favourable mixture's kind)."""
    seed = int(rng.integers(1 << 30))
    _, power, paired, _, _ = run_line(Line("power", fixtures, reps, gap=gap), sims, rng, seed)
    one_arm = [run_line(Line("A/A", fixtures, reps, arm_shock=b, variant_shock=v), sims, rng, seed)[0]
               for b, v in ((0.8, 0.0), (0.0, 0.8))]
    share = float(power.split()[0]) / bound.value
    goal = f"≥ {target:.2f}" if target else "–"
    return f"| {name} | {power} | {bound.value:.3f} | {share:.0%} | {paired} | {one_arm[0]} / {one_arm[1]} | {goal} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=20_000, help="simulated runs per world for the laws")
    parser.add_argument("--draws", type=int, default=200_000, help="normal-model draws per hypothesis (previous bound)")
    parser.add_argument("--fit", type=int, default=10_000, help="draws of the alternative to find the mixture on")
    parser.add_argument("--evaluate", type=int, default=200_000, help="fresh draws the bound is evaluated on")
    parser.add_argument("--only", default="", help="only this design, e.g. 12x5@0.15")
    parser.add_argument("--rule-sims", type=int, default=4_000, help="runs per line of the rule's own table (0: none)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    old, new, fit, rule = [], [], [], []
    for fixtures, reps, gap, target in DESIGNS:
        if args.only and args.only != f"{fixtures}x{reps}@{gap:g}":
            continue
        start = time.perf_counter()
        name = f"{fixtures} × {reps}" + ("" if gap == GAP else f", gap {gap:.2f}")
        measured, sums = measure(fixtures, reps, gap, args.sims, rng)
        old.append(old_row(fixtures, reps, name[len(f"{fixtures} × {reps}"):], sums, args.draws, rng))
        grid, om2 = grid_of(measured, reps, fixtures)
        bounds = {k: least_favourable(grid.alt, grid.nulls(k), reps, fixtures, args.fit, args.evaluate, rng)
                  for k in ("a", "b", "c", "b0")}
        fit.append(fit_row(name, grid, bounds["a"], measured, args.sims, rng))
        goal = f"≥ {target:.2f} — {'below' if target < bounds['b'].value else '**above**'}" if target else "–"
        new.append(f"| {name} | {grid.alt.mean:.4f} | {math.sqrt(om2):.3f} | " + " | ".join(
            f"{'**' if k == 'b' else ''}{bounds[k].value:.3f}{'**' if k == 'b' else ''} ± {bounds[k].se:.3f}"
            for k in ("a", "b", "c", "b0"))
                   + f" | {mixture_text(bounds['b'])} | {goal} | {time.perf_counter() - start:.0f} |")
        print(new[-1], flush=True)
        if args.rule_sims:
            rule.append(rule_row(name, fixtures, reps, gap, bounds["b"], target, args.rule_sims, rng))
    print_tables(old, new, fit, rule)


def print_tables(old: list[str], new: list[str], fit: list[str], rule: list[str]) -> None:
    print("\n### The previous bound: nulls \"no shock\" and \"equal per-arm shocks\", D and S independent\n")
    print("| F × R | δ (measured) | τ²_D / τ²_S: no shock, gap δ, sd 0.5, sd 1.0 | known-variance z | bound, gaps "
          "only (α/2) | **bound with the arm sums (α/2)** | its LR test on the world's own runs: A/A sd 0.5 / power | "
          "bound with sums, sd 0.5 and 1.0 (α/2) | bound with sums, α one-sided | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(old))
    print("\n### The bound over every rule: the least favourable mixture of the null worlds\n")
    print("| F × R | δ (measured) | the alternative's fixture ω | (a) win ≤ α/2 at each null world | **(b) symmetric, "
          "result ≤ α at each null world** | (c) win ≤ α at each null world (α one-sided) | "
          "(b) without the fixture term | (b)'s least favourable mixture (logit sds; ω on the probability scale) | "
          "issue's target vs (b) | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(new))
    print("\n### Fit: (a)'s own test on the binomial world's runs / on the world's normal twin\n")
    print("| F × R | power (gap, no shock) | " + " | ".join(f"A/A: {w}" for w in WORLDS) +
          " | error mean square: alternative / no shock |")
    print("|---|" + "---|" * (len(WORLDS) + 2))
    print("\n".join(fit))
    if rule:
        print("\n### The rule (stats/ as it stands), the bound (b) and the paired t (no protection against shocks)\n")
        print("| F × R | the rule's power (win) [95% Wilson] | bound (b) | share of the bound | paired t's power | "
              "the rule's A/A result rate, shocks in one arm only (logit sd 0.8): baseline / variant | issue's "
              "target |")
        print("|---|---|---|---|---|---|---|")
        print("\n".join(rule))


if __name__ == "__main__":
    main()
