"""The fewest calls at the planned gap for every rule that keeps its A/A wins ≤ α/2 under run shocks of any size in
either arm, equal or not (issue 27 point 5): a Lagrangian bound over every rule, on the per-arm state.

**Why a new state.** `sequential_bound.py --tables unknown` keeps wins ≤ α/2 only where both arms' repetitions are
shocked alike, and its state pools the gaps' and the sums' scatter. The product must also keep one-arm shocks (the
A/A lines "variant shocks sd 1.0, baseline none" and "baseline shocks sd 1.0, variant none"), where the pooled
scatter's law changes. Here each null world is a pair (κ_v, κ_b): arm a's repetition means scatter κ_a times as much
as the alternative's (κ_a = 1 + its shock variance over the arm's shock-free run-to-run variance τ²/2), which holds
every equal shock (κ_v = κ_b), every one-arm shock (one of them 1) and the unequal ones between.

**The model** (normal; every assumption is listed in docs/statistics.md, "The fewest calls when a shock may hit
one arm, or the fixtures differ in their gap"): cell
y_{a,f,r} = μ_a + u_{a,f} + s_{a,r} + e_{a,f,r}, e of one variance σ² in both arms and every world (the
alternative's cell noise), s_{a,r} independent N(0, (κ_a − 1) σ²/F), the gap's fixture term φ_f = u_{v,f} − u_{b,f}
normal of the alternative's variance in every world, independent of the sums' fixture terms. Arm a's repetition
means Y_{a,r} then scatter as independent N(·, κ_a τ0²), τ0² = σ²/F = τ²/2.

**Sufficiency and invariance.** (1) A rule unchanged when both arms move by the same amount reads no common level
(the verdict reads differences and spreads). (2) The fixture × repetition interactions of each arm, the sums'
fixture contrasts and (without `--fixture`) the gaps' have one law in every world and are independent of the
repetition means: a rule reading them is a randomised rule of the rest (ancillary). (3) What is left after look r is
(Y_{v,·}, Y_{b,·}) up to a common shift, of which (ḡ_r, S_v,r, S_b,r) — the mean gap and each arm's scatter of its
repetition means about its own mean — is sufficient for the whole family: the 2 × 2 scatter's density under a
diagonal covariance depends on it only through its diagonal. (4) It is Markov: with one repetition a block, ḡ_{r+1}
= (r ḡ_r + G)/(r + 1) and S_a,r+1 = S_a,r + r/(r + 1) · (Y_a,r+1 − ȳ_a,r)², where, given the past, the gap
innovation u = G − ḡ_r depends on it through ḡ_r only (the fixture term's posterior) and the sum innovation v (a +
b) is independent of it, a = (u + v)/2, b = (v − u)/2. (5) With `--fixture`, worlds with a large fixture term c: the
gaps' fixture scatter at the last look, q, is revealed to the rule from the start (a larger class, so a lower but
valid bound); given q the rest is as above, so the induction runs once per Gauss–Laguerre node of q with the
multipliers scaled by q's likelihood ratios.

**The bound.** For any μ ≥ 0 (one per null world, one for the power) and every rule of the class,
E_alt[N] ≥ min over all rules of E_alt[N] + Σ_j μ_j (P_j(win) − α/2) + μ_alt (power − P_alt(win)) =: D(μ)
(weak duality). D(μ) is computed by backward induction on a grid of (y, √S_v, √S_b) at each look (y the mean gap in
sd's of the alternative), the next repetition by Gauss–Hermite in (u, v) and trilinear interpolation; μ by L-BFGS-B
on the concave dual (on `--grid`), its supergradient from the minimising rule's rates by Monte Carlo on normal paths
(any μ gives a valid bound: the optimiser only decides how tight). D at that μ is computed on the three `--grids`;
the figure reported is their step² extrapolation less its own correction once more, or the Monte Carlo Lagrangian
of the finest grid's rule less two standard errors where that is lower (a rule's Lagrangian is never below the exact
D(μ), so a grid figure above it overshoots). The fit check applies that rule to calibration.py's
binomial runs (at the gap and in A/A worlds of the design).

    python benchmarks/arm_bound.py --sims 40000 --seed 5 --designs 12x10,12x5,24x5
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import optimize, special, stats

from calibration import AA_LINES, Line, simulate  # beside this script
from sequential_bound import PLANNED, measure_model

Array = npt.NDArray[np.float64]

#: Each arm's scatter factors κ_a of the null worlds: every pair of EQUAL, every one-arm pair (1, κ) and (κ, 1) of
#: ONE_ARM, and the unequal pairs of MIXED (variant's, baseline's); all with the alternative's fixture term.
EQUAL = (1.0, 1.15, 1.3, 1.6, 2.0, 2.5, 3.2, 5.0, 10.0, 30.0)
ONE_ARM = (1.3, 1.6, 2.0, 2.5, 3.2, 4.0, 5.0, 7.0, 10.0, 20.0, 60.0)
MIXED = ((2.0, 1.3), (1.3, 2.0), (4.0, 2.0), (2.0, 4.0), (3.0, 1.6), (1.6, 3.0))
#: Fixture terms c of the null worlds with a large one (variance of the fixtures' mean gap over τ², i.e. a fixture's
#: gap variance over the gap's cell noise; calibration.py's "variant deterministic" A/A lines are c ≈ 0.6), each with
#: the shocks of WITH_SHOCKS.
FIXTURE = (0.02, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0)
WITH_SHOCKS = ((1.0, 1.0), (1.6, 1.6), (2.5, 1.0), (1.0, 2.5))


def null_worlds(fixture: bool) -> tuple[tuple[float, float, float], ...]:
    """The null worlds (κ_v, κ_b, c) the class keeps wins ≤ α/2 at; c 0: the alternative's fixture term."""
    one = [(k, 1.0) for k in ONE_ARM] + [(1.0, k) for k in ONE_ARM]
    shocks = [(k, k, 0.0) for k in EQUAL] + [(*p, 0.0) for p in one + list(MIXED)]
    large = [(kv, kb, c) for c in FIXTURE for kv, kb in WITH_SHOCKS] if fixture else []
    return tuple(shocks + large)


@dataclass(frozen=True)
class ArmModel:
    """One design at its planned gap: mean gap `delta`, the gap's shock-free run-to-run variance `tau2` (each arm's
    τ²/2), the fixture term `w` (variance of the fixtures' mean gap) and the null worlds."""

    delta: float
    tau2: float
    w: float
    nulls: tuple[tuple[float, float, float], ...]
    fixtures: int


@dataclass(frozen=True)
class ArmGrid:
    """Grid sizes: score nodes (±`width` sd), log-scatter nodes per arm, Gauss–Hermite nodes per innovation, and the
    scatter axis' tail quantiles of χ² (the mass beyond them is read at the edge node)."""

    ny: int = 61
    nu: int = 31
    nh: int = 12
    nq: int = 12
    width: float = 7.0
    low: float = 1e-6
    high: float = 1e-8


class ArmProblem:
    """Backward induction over (ḡ_r, S_v,r, S_b,r) for looks after repetitions `reps` (one repetition a block)."""

    def __init__(self, model: ArmModel, reps: list[int], alpha: float, power: float, grid: ArmGrid) -> None:
        if reps[0] < 2 or any(b - a != 1 for a, b in itertools.pairwise(reps)):
            raise ValueError("looks after every repetition from the second or later")
        self.m, self.reps, self.alpha, self.power, self.g = model, reps, alpha, power, grid
        self.t0 = model.tau2 / 2
        self.calls = [x / reps[-1] for x in reps]
        self.y = np.linspace(-grid.width, grid.width, grid.ny)
        self.u = [np.linspace(0.0, math.sqrt(stats.chi2.isf(grid.high, r - 1)), grid.nu) for r in reps]
        h, hw = special.roots_hermitenorm(grid.nh)
        self.h, self.hw = h, hw / hw.sum()
        self.kv = np.array([k[0] for k in model.nulls])
        self.kb = np.array([k[1] for k in model.nulls])
        self.wj = np.array([model.w if k[2] == 0 else k[2] * model.tau2 for k in model.nulls])
        big = np.array([k[2] > 0 for k in model.nulls])
        if big.any():  # the fixtures' scatter at the last look, revealed from the start: χ² on F − 1 df at the gap
            t, wt = special.roots_genlaguerre(grid.nq, (model.fixtures - 1) / 2 - 1)
            q, self.qw = 2 * t, wt / wt.sum()
        else:
            q, self.qw = np.zeros(1), np.ones(1)
        last = reps[-1]
        ratio = np.where(big, (1 + last * self.wj / model.tau2) / (1 + last * model.w / model.tau2), 1.0)
        self.lq = (-0.5 * (model.fixtures - 1) * np.log(ratio))[:, None] - 0.5 * q[None] * (1 / ratio - 1)[:, None]

    def sd(self, r: int) -> float:
        return math.sqrt(self.m.w + self.m.tau2 / r)

    def log_parts(self, k: int, x: Array, sv: Array, sb: Array) -> tuple[Array, Array, Array]:
        """log f_j/f_alt split in three factors (the mean gap's, S_v's, S_b's), each (J, len of its argument)."""
        r, m = self.reps[k], self.m
        va = m.w + m.tau2 / r
        vj = (self.wj + self.t0 * (self.kv + self.kb) / r)[:, None]
        own = -0.5 * x[None] ** 2 / vj - 0.5 * np.log(vj) + 0.5 * (x[None] - m.delta) ** 2 / va + 0.5 * math.log(va)
        df = r - 1
        pv = -0.5 * df * np.log(self.kv)[:, None] - 0.5 * sv[None] * (1 / self.kv - 1)[:, None]
        pb = -0.5 * df * np.log(self.kb)[:, None] - 0.5 * sb[None] * (1 / self.kb - 1)[:, None]
        return own, pv, pb

    def penalty(self, k: int, mu: Array) -> Array:
        """Σ_j μ_j f_j/f_alt on look k's grid (ny, nu, nu)."""
        x = self.m.delta + self.sd(self.reps[k]) * self.y
        s = self.u[k] ** 2
        own, pv, pb = (np.exp(np.clip(p, -700, 700)) for p in self.log_parts(k, x, s, s))
        out: Array = np.einsum("j,jy,jv,jb->yvb", mu, own, pv, pb, optimize=True)
        return out

    def _index(self, axis: Array, x: Array) -> tuple[npt.NDArray[np.int64], Array]:
        i = np.clip((x - axis[0]) / (axis[1] - axis[0]), 0, axis.size - 1 - 1e-9)
        lo = np.floor(i).astype(np.int64)
        return lo, i - lo

    def expect(self, k: int, nxt: Array) -> Array:
        """E_alt[V at look k + 1 | each node of look k]: the next repetition's gap and sum innovations by
        Gauss–Hermite, V trilinear on look k + 1's grid."""
        m, r = self.m, self.reps[k]
        x = m.delta + self.sd(r) * self.y
        rho = m.w / (m.w + m.tau2 / r)
        g_new = (m.delta + rho * (x - m.delta))[:, None] + math.sqrt(m.w * (1 - rho) + m.tau2) * self.h[None]
        u = g_new - x[:, None]  # (ny, nh)
        v = math.sqrt(m.tau2 * (1 + 1 / r)) * self.h  # (nh,)
        iy, fy = self._index(self.y, ((r * x[:, None] + g_new) / (r + 1) - m.delta) / self.sd(r + 1))
        vy = nxt[iy] * (1 - fy)[..., None, None] + nxt[iy + 1] * fy[..., None, None]  # (ny, nh, nu, nu)
        c = r / (r + 1) / self.t0
        a = (u[:, :, None] + v[None, None]) / 2  # (ny, nh, nh)
        b = (v[None, None] - u[:, :, None]) / 2
        s = self.u[k] ** 2
        out = np.empty((self.g.ny, self.g.nu, self.g.nu))
        w2 = self.hw[:, None] * self.hw[None]
        for i in range(self.g.ny):
            iv, fv = self._index(self.u[k + 1], np.sqrt(s[None, None] + c * a[i, :, :, None] ** 2))  # (nh, nh, nu)
            ib, fb = self._index(self.u[k + 1], np.sqrt(s[None, None] + c * b[i, :, :, None] ** 2))
            t = vy[i]  # (nh1, nu', nu')
            h1 = np.arange(self.g.nh)[:, None, None, None]
            ivx, fvx = iv[..., :, None], fv[..., :, None]
            ibx, fbx = ib[..., None, :], fb[..., None, :]
            val = ((t[h1, ivx, ibx] * (1 - fbx) + t[h1, ivx, ibx + 1] * fbx) * (1 - fvx)
                   + (t[h1, ivx + 1, ibx] * (1 - fbx) + t[h1, ivx + 1, ibx + 1] * fbx) * fvx)  # (nh1, nh2, nu, nu)
            out[i] = np.tensordot(w2, val, axes=([0, 1], [0, 1]))
        return out

    def start(self, v0: Array) -> float:
        """E_alt[V at the first look]: y standard normal, each arm's S/τ0² a χ² on r − 1 df."""
        r = self.reps[0]
        t, wt = special.roots_genlaguerre(2 * self.g.nh, (r - 1) / 2 - 1)
        cn, cw = 2 * t, wt / wt.sum()
        iy, fy = self._index(self.y, self.h)
        vy = v0[iy] * (1 - fy)[:, None, None] + v0[iy + 1] * fy[:, None, None]
        vy = np.tensordot(self.hw, vy, axes=1)  # (nu, nu)
        iu, fu = self._index(self.u[0], np.sqrt(cn))
        vv = vy[iu] * (1 - fu)[:, None] + vy[iu + 1] * fu[:, None]
        vb = vv[:, iu] * (1 - fu)[None] + vv[:, iu + 1] * fu[None]
        return float(cw @ vb @ cw)

    def solve(self, mu: Array, mu_alt: float) -> tuple[float, list[list[Array]]]:
        """D(μ) and, for each node of the fixtures' scatter, each look's expected cost of going on on its grid."""
        total, goes = 0.0, []
        for i, weight in enumerate(self.qw):
            value, go = self.backward(self.scaled(mu, i), mu_alt)
            total += weight * value
            goes.append(go)
        return total - self.alpha * float(mu.sum()) + mu_alt * self.power, goes

    def scaled(self, mu: Array, i: int) -> Array:
        """μ_j times f_j/f_alt of the fixtures' scatter at its node i."""
        out: Array = mu * np.exp(np.clip(self.lq[:, i], -700, 700))
        return out

    def backward(self, mu: Array, mu_alt: float) -> tuple[float, list[Array]]:
        """E_alt of the least cost at the first look, the fixtures' scatter fixed (μ scaled by its likelihood
        ratios), and each look's expected cost of going on (the last look's +inf) on its grid."""
        last = len(self.reps) - 1
        goes: list[Array] = [np.zeros(0)] * len(self.reps)
        value = np.zeros(0)
        for k in range(last, -1, -1):
            stop = np.minimum(self.calls[k], self.calls[k] + self.penalty(k, mu) - mu_alt)
            go = np.full(stop.shape, np.inf) if k == last else self.expect(k, value)
            goes[k] = go
            value = np.minimum(stop, go)
        return self.start(value), goes


@dataclass(frozen=True)
class Paths:
    """Normal paths of each arm's repetition means (S, R) under one world, and the state at every repetition."""

    gbar: Array
    sv: Array
    sb: Array


def draw_paths(model: ArmModel, reps: int, sims: int, rng: np.random.Generator, gap: float, kv: float,
               kb: float, w: float | None = None) -> Paths:
    """Paths of (ḡ_r, S_v,r/τ0², S_b,r/τ0²) r = 1..R in the normal model: the gap's fixture term, each arm's
    repetition means with κ_a τ0² scatter."""
    t0 = model.tau2 / 2
    fixture = math.sqrt(model.w if w is None else w) * rng.standard_normal((sims, 1))
    yv = gap + fixture + math.sqrt(kv * t0) * rng.standard_normal((sims, reps))
    yb = math.sqrt(kb * t0) * rng.standard_normal((sims, reps))
    n = np.arange(1, reps + 1)

    def scatter(y: Array) -> Array:
        mean = np.cumsum(y, axis=1) / n
        out: Array = (np.cumsum(y * y, axis=1) - n * mean * mean) / t0
        return np.maximum(out, 1e-300)

    return Paths(np.cumsum(yv - yb, axis=1) / n, scatter(yv), scatter(yb))


def apply(problem: ArmProblem, mu: Array, mu_alt: float, goes: list[Array], paths: Paths) -> tuple[Array, Array,
                                                                                                   Array, Array]:
    """The rule at each path's exact state: stop where the stop cost (exact) is at most the interpolated cost of
    going on. Each path's calls (share), win, and look it stopped at, and log f_j/f_alt at its stop (J, S)."""
    s = paths.gbar.shape[0]
    going = np.ones(s, dtype=bool)
    calls, win = np.ones(s), np.zeros(s, dtype=bool)
    loglr = np.zeros((len(problem.m.nulls), s))
    for k, r in enumerate(problem.reps):
        x, sv, sb = paths.gbar[:, r - 1], paths.sv[:, r - 1], paths.sb[:, r - 1]
        own, pv, pb = problem.log_parts(k, x, sv, sb)
        lr = own + pv + pb
        pen = np.exp(np.clip(lr, -700, 700)).T @ mu
        stop_cost = np.minimum(problem.calls[k], problem.calls[k] + pen - mu_alt)
        if k < len(problem.reps) - 1:
            go = _trilinear(problem, k, goes[k], x, sv, sb)
            stop = going & (stop_cost <= go)
        else:
            stop = going
        won = stop & (pen - mu_alt < 0)
        calls[stop] = problem.calls[k]
        win |= won
        loglr[:, stop] = lr[:, stop]
        going &= ~stop
    return calls, win, loglr, going


def _trilinear(problem: ArmProblem, k: int, v: Array, x: Array, sv: Array, sb: Array) -> Array:
    iy, fy = problem._index(problem.y, (x - problem.m.delta) / problem.sd(problem.reps[k]))
    iv, fv = problem._index(problem.u[k], np.sqrt(sv))
    ib, fb = problem._index(problem.u[k], np.sqrt(sb))
    out = np.zeros(x.shape)
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dv, wv in ((0, 1 - fv), (1, fv)):
            for db, wb in ((0, 1 - fb), (1, fb)):
                out += wy * wv * wb * v[iy + dy, iv + dv, ib + db]
    return out


def rates(problem: ArmProblem, mu: Array, mu_alt: float, goes: list[list[Array]], paths: Paths) -> tuple[float,
                                                                                                        float, Array]:
    """E_alt[N], P_alt(win) and P_j(win) (as E_alt[win · f_j/f_alt]) of the rule on paths drawn at the gap, over
    the nodes of the fixtures' scatter by their weights."""
    calls = power = 0.0
    pj = np.zeros(len(problem.m.nulls))
    for i, weight in enumerate(problem.qw):
        n, win, loglr, _ = apply(problem, problem.scaled(mu, i), mu_alt, goes[i], paths)
        calls += weight * float(n.mean())
        power += weight * float(win.mean())
        pj += weight * (np.exp(np.clip(loglr + problem.lq[:, i : i + 1], -700, 700)) * win[None]).mean(axis=1)
    return calls, power, pj


def lagrangian(problem: ArmProblem, mu: Array, mu_alt: float, goes: list[list[Array]], paths: Paths) -> tuple[float,
                                                                                                          float]:
    """The rule's Lagrangian by Monte Carlo on paths at the gap (never below the exact D(μ) but for its noise) and
    its standard error."""
    each = np.zeros(paths.gbar.shape[0])
    for i, weight in enumerate(problem.qw):
        calls, win, loglr, _ = apply(problem, problem.scaled(mu, i), mu_alt, goes[i], paths)
        lr = np.exp(np.clip(loglr + problem.lq[:, i : i + 1], -700, 700))
        each += weight * (calls + (mu @ lr - mu_alt) * win)
    each += mu_alt * problem.power - problem.alpha * float(mu.sum())
    return float(each.mean()), float(each.std(ddof=1) / math.sqrt(each.size))


def stops(problem: ArmProblem, mu: Array, mu_alt: float, goes: list[list[Array]], paths: Paths) -> str:
    """The share of runs at the gap stopping at each look, and of them with a win (the rule's shape)."""
    share, won = np.zeros(len(problem.reps)), np.zeros(len(problem.reps))
    for i, weight in enumerate(problem.qw):
        calls, win, _, _ = apply(problem, problem.scaled(mu, i), mu_alt, goes[i], paths)
        look = np.rint(calls * problem.reps[-1]).astype(np.int64) - problem.reps[0]
        share += weight * np.bincount(look, minlength=share.size) / look.size
        won += weight * np.bincount(look[win], minlength=share.size) / look.size
    return " / ".join(f"{s:.3f} ({w:.3f})" for s, w in zip(share, won, strict=True))


def direct(problem: ArmProblem, mu: Array, mu_alt: float, goes: list[list[Array]], sims: int, seed: int) -> Array:
    """Each null world's win rate from paths drawn in it (not reweighted from the gap's), over the nodes of the
    fixtures' scatter by their weights times its likelihood ratio there."""
    m, out = problem.m, np.zeros(len(problem.m.nulls))
    for j, (kv, kb, _) in enumerate(m.nulls):
        null = draw_paths(m, problem.reps[-1], sims, np.random.default_rng([seed, 3, j]), 0.0, kv, kb,
                          float(problem.wj[j]))
        for i, weight in enumerate(problem.qw):
            won = apply(problem, problem.scaled(mu, i), mu_alt, goes[i], null)[1]
            out[j] += weight * math.exp(problem.lq[j, i]) * float(won.mean())
    return out


def warm(nulls: tuple[tuple[float, float, float], ...], text: str) -> Array:
    """A starting μ from "κ_v,κ_b,c=μ;…;alt=μ_alt" (a previous run's binding nulls); every other null's 0 (0.3 when
    none is given), the power's 1.0 when not given."""
    given = dict(item.split("=") for item in text.split(";") if item)
    out = np.array([float(given.get(",".join(f"{x:g}" for x in w), 0.3 if not given else 0.0)) for w in nulls])
    return np.concatenate([out, [float(given.get("alt", 1.0))]])


def dual(problem: ArmProblem, paths: Paths, iters: int, start: Array) -> tuple[Array, float]:
    """μ by L-BFGS-B on −D(μ) (grid), its supergradient from the minimising rule's rates on `paths`."""
    n = len(problem.m.nulls)

    def negative(z: Array) -> tuple[float, Array]:
        value, goes = problem.solve(z[:n], float(z[n]))
        _, power, pj = rates(problem, z[:n], float(z[n]), goes, paths)
        return -value, -np.concatenate([pj - problem.alpha, [problem.power - power]])

    found = optimize.minimize(negative, start, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * (n + 1),
                              options={"maxiter": iters})
    return found.x, -float(found.fun)


def world_of(line: Line, tau2: float, sims: int, rng: np.random.Generator) -> tuple[float, float, float]:
    """An A/A line of calibration.py as a null world of the model: each arm's κ_a = 1 + (its repetition means'
    run-to-run variance − the shock-free A/A's) / (τ²/2), and c = its fixtures' mean gap's variance (less the
    repetitions' share) / τ², τ² the design's at the planned gap."""

    def spread(x: Line) -> tuple[float, float, float]:
        base, variants, _ = simulate(x, sims, rng)
        yv, yb = np.nanmean(variants[0], axis=1), base.mean(axis=1)
        d = yv - yb
        within = float(d.var(axis=1, ddof=1).mean())
        return (float(yv.var(axis=1, ddof=1).mean()), float(yb.var(axis=1, ddof=1).mean()),
                max(0.0, float(d.mean(axis=1).var(ddof=1)) - within / x.repetitions))

    v0, b0, _ = spread(Line("A/A", fixtures=line.fixtures, repetitions=line.repetitions))
    v, b, w = spread(line)
    return 1 + (v - v0) / (tau2 / 2), 1 + (b - b0) / (tau2 / 2), w / tau2


def binomial_paths(base: Array, variant: Array, model: ArmModel) -> tuple[Paths, Array]:
    """calibration's binomial runs as the model's state: (ḡ_r, S_v,r/τ0², S_b,r/τ0²) and the fixtures' scatter of
    the gaps at the last repetition, scaled to χ² on F − 1 df at the gap (the bound reveals it from the start)."""
    f, r = base.shape[1], base.shape[2]
    t0, n = model.tau2 / 2, np.arange(1, r + 1)
    yv, yb = variant.mean(axis=1), base.mean(axis=1)

    def scatter(y: Array) -> Array:
        mean = np.cumsum(y, axis=1) / n
        out: Array = (np.cumsum(y * y, axis=1) - n * mean * mean) / t0
        return np.maximum(out, 1e-300)

    contrasts = (variant - base).sum(axis=2)
    contrasts = contrasts - contrasts.mean(axis=1, keepdims=True)
    q = (contrasts ** 2).sum(axis=1) / (r * f * model.tau2 * (1 + r * model.w / model.tau2))
    return Paths(np.cumsum(yv - yb, axis=1) / n, scatter(yv), scatter(yb)), q


def fit_check(problem: ArmProblem, mu: Array, mu_alt: float, goes: list[list[Array]], sims: int,
              seed: int) -> list[str]:
    """The minimising rule on calibration's binomial runs (each run at the node of the fixtures' scatter nearest its
    own): wins and calls at the planned gap, wins in the design's A/A worlds."""
    f, r = problem.m.fixtures, problem.reps[-1]
    gap = PLANNED[f"{f}x{r}"]
    lines = [Line("at the planned gap", f, r, gap=gap), Line("A/A, no shock", f, r),
             Line("A/A, per-arm shocks sd 1.0", f, r, arm_shock=1.0),
             Line("A/A, variant shocks sd 1.0, baseline none", f, r, arm_shock=0.0, variant_shock=1.0),
             Line("A/A, baseline shocks sd 1.0, variant none", f, r, arm_shock=1.0, variant_shock=0.0),
             Line("A/A, variant deterministic, baseline sampled", f, r, deterministic_variant=True)]
    if problem.qw.size > 1:
        t, _ = special.roots_genlaguerre(problem.g.nq, (f - 1) / 2 - 1)
        nodes = 2 * t
    rng = np.random.default_rng([seed, 5])
    out = []
    for line in lines:
        base, variants, _ = simulate(line, sims, rng)
        paths, q = binomial_paths(base, variants[0], problem.m)
        at = np.zeros(sims, dtype=np.int64) if problem.qw.size == 1 else np.argmin(np.abs(q[:, None] - nodes), axis=1)
        calls, win = np.zeros(sims), np.zeros(sims, dtype=bool)
        for i in range(problem.qw.size):
            these = at == i
            if these.any():
                part = Paths(paths.gbar[these], paths.sv[these], paths.sb[these])
                n_i, w_i, _, _ = apply(problem, problem.scaled(mu, i), mu_alt, goes[i], part)
                calls[these], win[these] = n_i, w_i
        text = f"{win.mean():.4f} / {calls.mean():.3f}" if line.gap else f"{win.mean():.4f}"
        out.append(f"{line.name}: {text}")
    return out


def extrapolated(values: list[float], sizes: list[int]) -> tuple[float, float]:
    """D(μ) as the grid's step goes to 0, from the two finest grids (error ∝ step², as the three grids show), and the
    bound reported: that less the correction once more (the safe side)."""
    (d1, d2), (n1, n2) = values[-2:], sizes[-2:]
    limit = (d2 * n2 ** 2 - d1 * n1 ** 2) / (n2 ** 2 - n1 ** 2)
    return limit, limit - abs(d2 - limit)


def lines_table(args: argparse.Namespace) -> None:
    """Print each one-variant A/A line of calibration.py with the fixtures of a design as the model's (κ_v, κ_b, c)."""
    print("| design (τ² at its gap) | A/A line | κ_v | κ_b | c |\n|---|---|---|---|---|")
    for design in args.designs.split(","):
        f, r = (int(x) for x in design.split("x"))
        tau2 = measure_model(f, r, PLANNED[design], args.sims, args.seed).tau2
        rng = np.random.default_rng([args.seed, 4])
        for line in AA_LINES:
            if line.fixtures == f and line.variants == 1 and not line.guards and not line.strict:
                kv, kb, c = world_of(line, tau2, args.sims // 4, rng)
                print(f"| {f} × {r} ({tau2:.4g}) | {line.name} | {kv:.2f} | {kb:.2f} | {c:.3f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=40000, help="binomial runs to measure each design's model")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--designs", default="12x10,12x5,24x5")
    parser.add_argument("--alpha", type=float, default=0.05, help="two-sided; the class keeps wins ≤ α/2")
    parser.add_argument("--power", type=float, default=0.95 * 0.80)
    parser.add_argument("--fixture", action="store_true", help="add the null worlds with a large fixture term")
    parser.add_argument("--warm", default="", help="starting multipliers: κ_v,κ_b,c=μ;…;alt=μ (else 0.3 and 1)")
    parser.add_argument("--check", type=int, default=20000, help="binomial runs a world for the fit check (0: none)")
    parser.add_argument("--lines", action="store_true", help="only: calibration's A/A lines as (κ_v, κ_b, c)")
    parser.add_argument("--paths", type=int, default=100000, help="normal paths for the supergradient and checks")
    parser.add_argument("--direct", type=int, default=20000, help="normal paths a null world for the direct check")
    parser.add_argument("--iters", type=int, default=60,
                        help="L-BFGS-B iterations on the dual (0: the bound at --warm's μ)")
    parser.add_argument("--grid", default="61,31,12,10", help="score, scatter (each arm), Hermite, fixture-scatter "
                        "nodes of the dual")
    parser.add_argument("--grids", default="41,25,10,12;61,31,12,12;81,41,14,16",
                        help="grids D(μ) is computed on, finest last")
    args = parser.parse_args()
    grids = [ArmGrid(*(int(x) for x in g.split(","))) for g in args.grids.split(";")]
    if args.lines:
        lines_table(args)
        return
    worlds = null_worlds(args.fixture)
    print(f"# Wins ≤ {args.alpha / 2:g} at {len(worlds)} null worlds (κ_v, κ_b, c), ≥ {args.power:.3f} at the gap; "
          f"model from {args.sims:,} binomial runs, seed {args.seed}; {args.paths:,} normal paths; "
          f"grids {args.grids}\n")
    print("| design | planned gap (mean) | τ², w | D(μ) on each grid | D extrapolated | **bound** | Monte Carlo "
          "Lagrangian of the finest grid's rule | that rule: calls / power / most wins at a null (direct) | "
          "binding nulls (κ_v, κ_b, c): μ | seconds |\n|---|---|---|---|---|---|---|---|---|---|")
    for design in args.designs.split(","):
        f, r = (int(x) for x in design.split("x"))
        started = time.perf_counter()
        old = measure_model(f, r, PLANNED[design], args.sims, args.seed)
        model = ArmModel(old.delta, old.tau2, old.w, worlds, f)
        reps = list(range(2, r + 1))
        n = len(model.nulls)
        paths = draw_paths(model, r, args.paths, np.random.default_rng([args.seed, 1]), model.delta, 1.0, 1.0)
        coarse = ArmProblem(model, reps, args.alpha / 2, args.power, ArmGrid(*(int(x) for x in args.grid.split(","))))
        mu = warm(model.nulls, args.warm)
        if args.iters:
            mu = dual(coarse, paths, args.iters, mu)[0]
        values = []
        for grid in grids:
            problem = ArmProblem(model, reps, args.alpha / 2, args.power, grid)
            value, goes = problem.solve(mu[:n], float(mu[n]))
            values.append(value)
        limit, reported = extrapolated(values, [g.ny for g in grids])
        check = draw_paths(model, r, args.paths, np.random.default_rng([args.seed, 2]), model.delta, 1.0, 1.0)
        calls, power, _ = rates(problem, mu[:n], float(mu[n]), goes, check)
        lagr, se = lagrangian(problem, mu[:n], float(mu[n]), goes, check)
        reported = min(reported, lagr - 2 * se)
        wins = direct(problem, mu[:n], float(mu[n]), goes, args.direct, args.seed)
        binding = ";".join(f"{kv:g},{kb:g},{c:g}={m:.3g}" for (kv, kb, c), m in zip(model.nulls, mu, strict=False)
                           if m > 1e-3) + f";alt={mu[n]:.4g}"
        worst = int(np.argmax(wins))
        print(f"| {f} × {r} | {PLANNED[design]:.3f} ({model.delta:.4f}) | {model.tau2:.4g}, {model.w:.2g} | "
              f"{' / '.join(f'{v:.4f}' for v in values)} | {limit:.4f} | **{reported:.4f}** | {lagr:.4f} ± {se:.4f} | "
              f"{calls:.3f} / {power:.3f} / {wins[worst]:.4f} at {model.nulls[worst]} | {binding} | "
              f"{time.perf_counter() - started:.0f} |", flush=True)
        print(f"  stops at looks {reps[0]}..{r} at the gap (of them wins): "
              f"{stops(problem, mu[:n], float(mu[n]), goes, check)}", flush=True)
        if args.check:
            print("  fit check on calibration's binomial runs (wins / calls): " +
                  "; ".join(fit_check(problem, mu[:n], float(mu[n]), goes, args.check, args.seed)), flush=True)


if __name__ == "__main__":
    main()
