"""The fewest calls any sequential rule can spend at the planned gap (issue 27 point 5): a bound over every rule.

**Why it covers every rule.** A rule that keeps its win rate ≤ α/2 at gap 0 whatever the variances is, in
particular, a level-α/2 test in the world where every variance is known. So the least expected calls at the
planned gap of any group-sequential test with known variances — looks after the card's blocks, at most the fixed
grid, win rate ≤ α/2 at gap 0, wins ≥ `--power` at the gap — is a lower bound for every valid rule, the
product's included. Losses need not be controlled and a loss may stop the grid like any other stop (a larger
class than the product's: the bound only falls). Randomised rules are in the class (the Lagrangian is linear in
a rule's randomisation); every rule runs at least its first block — without that, "skip the card in 5% of runs
and run the fixed design otherwise" would meet the power target with 95% of the calls.

**The model.** The normal model of the gap: in a balanced grid with known variance components (fixture term ω²,
run term, cell noise), the mean gap after r repetitions, d̄_r, is the sufficient statistic for the gap δ at that
look (the constant vector is an eigenvector of the cells' covariance), the sequence is transitive (the next
block's mean given the cells so far depends on them only through d̄_r), and Cov(d̄_j, d̄_k) = Var(d̄_k) for j < k:
the canonical joint normal with information I_r = 1/Var(d̄_r). The arm sums carry nothing: at the null world whose
arms' level is the alternative's mean level (a null the rule must keep), the sums have the same law under both
hypotheses and are independent of the gaps (arms of equal variance), so a rule reading them is a randomised rule
of the gaps (the least-favourable-null argument of Neyman–Pearson). Var(d̄_r) and the gap are measured in
`calibration.simulate`'s binomial world at the gap, so the drift is the one the known-variance z test sees (the
clipped gap differs a little between fixtures: a fixture term, which a null world the rule must keep has too).

**The bound.** For any λ0, λ1 ≥ 0 and any rule that is feasible (win rate ≤ α/2 at 0, power ≥ p at the gap),

    E_δ[N] ≥ E_δ[N] + λ0 (P_0(win) − α/2) + λ1 (p − P_δ(win)) ≥ min over ALL rules of [that] =: D(λ0, λ1),

(weak Lagrangian duality), and the minimum over all rules is computed exactly (up to quadrature) by backward
induction on the score S(t) = I_k d̄_k / √I_K: at a look, stop (calls so far; win if λ0/LR(s) < λ1, LR the
likelihood ratio of the gap to 0) or go on (the expected cost of the next look under the gap). The largest D over
λ is the bound; the rule that attains it is evaluated forward (its α, power and calls), which shows the bound is
tight (there is such a rule) when those meet the constraints.

The fit check applies the rule that attains the bound (looks 2..R) to calibration's binomial runs: at the gap,
and in A/A worlds without and with run shocks (where a rule that knows the variances is not valid).

**Charging for the unknown run variance** (`--tables unknown`). The bound above lets the rule know every variance,
so it does not charge for what the product's rule pays most for: a run term known only from the repetitions so
far. Here the null worlds are several, one per size of run shock: gap 0, the alternative's cell noise and fixture
term, and independent per-arm repetition shocks of equal size (SHOCKS, then κ = 10 and 30), so that the gaps' and
the sums' run-to-run variance is κτ² (κ ≥ 1; τ² the alternative's, shock-free). The class: every rule unchanged
when both arms' scores move by the same amount (the arms' common level is a nuisance) whose win rate is ≤ α/2 at
every one of these worlds and ≥ `--power` at the gap. In the normal model the sufficient statistic at look r is
(d̄_r, SS_r), SS_r the gaps' and the sums' scatter about their means pooled (2(r − 1) df; their law is
κτ² χ²): the density of the contrasts of the gaps and of the sums, the fixture term common to a run's repetitions
so that d̄_r carries the gap; the next block's mean gap depends on the past only through d̄_r, and the scatter grows
by the block's between term plus an independent κτ² χ²_{2m−1}. Weak duality with one λ_j per null,

    E_δ[N] ≥ min over all rules of E_δ[N] + Σ_j λ_j (P_j(win) − α/2) + λ_1 (p − P_δ(win)),

the minimum by backward induction on a grid of (d̄_r, log SS_r) per look (the next block's mean by Gauss–Hermite,
its χ² scatter by generalised Gauss–Laguerre, bilinear interpolation), the λ by L-BFGS-B on the concave dual with
the minimising rule's rates as its supergradient. Any λ gives a valid bound (up to the quadrature: `--grid`);
the minimising rule's wins at every null and its power say how close the λ found is to the best. Nulls with
shocks in one arm only (the gaps and sums then correlated) or shared by both arms would only raise it: they need
the 2 × 2 scatter of the gaps and sums (a 4-dimensional state), not built.

    python benchmarks/sequential_bound.py --sims 40000 --seed 5
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy import optimize, special, stats
from scipy.ndimage import map_coordinates

from calibration import Line, simulate  # beside this script

Array = npt.NDArray[np.float64]

#: Planned gaps of benchmarks/sequential.py's designs table (the fixed rule wins 80% there; seed 1, 2,000 runs a
#: step of the bisection; docs/statistics.md, "Designs").
PLANNED = {"12x10": 0.178, "24x5": 0.188, "12x5": 0.286}


@dataclass(frozen=True)
class Problem:
    """The canonical problem: looks at information fractions `t` (the last 1), calls `calls` at each, drift
    `theta` (the z at the last look has mean theta under the gap), one-sided level `alpha`, power target `power`."""

    t: tuple[float, ...]
    calls: tuple[float, ...]
    theta: float
    alpha: float
    power: float
    points: int = 1601
    width: float = 10.0


def _grid(p: Problem, k: int) -> tuple[Array, Array]:
    """Nodes of the score at look k (± width sd about its mean under the gap) and trapezoid weights."""
    tk = p.t[k]
    nodes = p.theta * tk + math.sqrt(tk) * np.linspace(-p.width, p.width, p.points)
    w = np.full(p.points, nodes[1] - nodes[0])
    w[[0, -1]] /= 2
    return nodes, w


@lru_cache(maxsize=64)
def _kernel(p: Problem, k: int) -> tuple[Array, Array]:
    """The transition density × weights from look k − 1's nodes (or the origin) to look k's nodes, under the
    gap; rows renormalised so that the grid's truncation never loses mass."""
    frm = _grid(p, k - 1)[0] if k > 0 else np.zeros(1)
    before = p.t[k - 1] if k > 0 else 0.0
    dt = p.t[k] - before
    nodes, w = _grid(p, k)
    diff = (nodes[None, :] - frm[:, None] - p.theta * dt) / math.sqrt(dt)
    m = np.exp(-0.5 * diff * diff) * w[None, :]
    m /= m.sum(axis=1, keepdims=True)
    return nodes, m


def _log_lr(p: Problem, k: int, s: Array) -> Array:
    out: Array = p.theta * s - 0.5 * p.theta ** 2 * p.t[k]
    return out


def solve(p: Problem, lam0: float, lam1: float) -> tuple[float, list[npt.NDArray[np.int8]], float]:
    """min over all rules of E_δ[N] + λ0 P_0(win) − λ1 P_δ(win): its value, each look's action on its grid
    (0 stop without a win, 1 stop with a win, 2 go on), and again the value (every rule runs its first block)."""
    k_last = len(p.t) - 1
    actions: list[npt.NDArray[np.int8]] = [np.zeros(0, dtype=np.int8)] * len(p.t)
    value: Array = np.zeros(0)
    for k in range(k_last, -1, -1):
        nodes, _ = _grid(p, k)
        win = p.calls[k] + np.minimum(0.0, lam0 * np.exp(-np.clip(_log_lr(p, k, nodes), -700, 700)) - lam1)
        stop = np.minimum(p.calls[k], win)
        go = np.full(nodes.shape, np.inf) if k == k_last else _kernel(p, k + 1)[1] @ value
        value = np.minimum(stop, go)
        actions[k] = np.where(go < stop, 2, np.where(win < p.calls[k], 1, 0)).astype(np.int8)
    start = float((_kernel(p, 0)[1] @ value)[0])
    return start, actions, start


def evaluate(p: Problem, actions: list[npt.NDArray[np.int8]]) -> tuple[float, float, float]:
    """The rule's P_0(win), P_δ(win) and E_δ[N] / calls at the last look, carried forward on the grids (P_0 as
    E_δ[win / LR])."""
    carried = np.ones(1)
    a0 = p1 = calls = 0.0
    for k in range(len(p.t)):
        nodes, m = _kernel(p, k)
        mass = carried @ m
        act = actions[k]
        won = act == 1
        a0 += float((mass[won] * np.exp(-_log_lr(p, k, nodes[won]))).sum())
        p1 += float(mass[won].sum())
        calls += p.calls[k] * float(mass[act != 2].sum())
        carried = np.where(act == 2, mass, 0.0)
    return a0, p1, calls / p.calls[-1]


def _bisect(lo: float, hi: float, too_high: Callable[[float], bool], steps: int = 28) -> float:
    """The boundary on a log scale between lo (not too high) and hi (too high) of a monotone test."""
    for _ in range(steps):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if too_high(mid) else (mid, hi)
    return math.sqrt(lo * hi)


def bound(p: Problem) -> tuple[float, float, float, tuple[float, float, float]]:
    """The bound D(λ0, λ1) on E_δ[N] / calls at the last look at the λ where the attaining rule has wins at 0 =
    α and power = p (λ0 by bisection for each λ1: a larger λ0 prices wins at 0 higher; λ1 by bisection on the
    power), its λ, and that rule's (P_0(win), P_δ(win), E_δ[N] share). Any λ gives a valid bound; this one is
    the tightest when the rule meets both constraints with equality (complementary slackness)."""
    scale = p.calls[-1]

    def lam0_for(lam1: float) -> float:
        return _bisect(1e-2 * scale, 1e5 * scale, lambda lam0: evaluate(p, solve(p, lam0, lam1)[1])[0] <= p.alpha)

    def powerful(lam1: float) -> bool:
        return evaluate(p, solve(p, lam0_for(lam1), lam1)[1])[1] >= p.power

    lam1 = _bisect(1e-2 * scale, 1e3 * scale, powerful, steps=24)
    lam0 = lam0_for(lam1)
    v, actions, _ = solve(p, lam0, lam1)
    return (v - lam0 * p.alpha + lam1 * p.power) / scale, lam0, lam1, evaluate(p, actions)


def measure(f: int, r: int, gap: float, sims: int, seed: int) -> tuple[float, Array]:
    """The mean gap at the last look and Var(d̄_r) for r = 1..R in calibration's world at the gap (its fixture
    term included: the clipped gap differs between fixtures; a null world with that fixture term is one the
    rule must keep, so the same covariance serves both hypotheses)."""
    base, variants, _ = simulate(Line("bound", fixtures=f, repetitions=r, gap=gap), sims, np.random.default_rng(seed))
    d = (variants[0] - base).mean(axis=1)  # (S, R): each repetition's mean gap
    dbar = np.cumsum(d, axis=1) / np.arange(1, r + 1)
    out: Array = dbar.var(axis=0, ddof=1)
    return float(dbar[:, -1].mean()), out


def apply_rule(p: Problem, actions: list[npt.NDArray[np.int8]], info: Array, reps: list[int], base: Array,
               variant: Array) -> tuple[float, float]:
    """The attaining rule on simulated runs of the cells: each look's score from the run's own mean gap (the
    nearest grid node's action): its win rate and calls (share of the fixed design's)."""
    d = (variant - base).mean(axis=1)
    dbar = np.cumsum(d, axis=1) / np.arange(1, d.shape[1] + 1)
    going = np.ones(dbar.shape[0], dtype=bool)
    win = np.zeros(dbar.shape[0], dtype=bool)
    calls = np.full(dbar.shape[0], float(reps[-1]))
    for k, r in enumerate(reps):
        nodes, _ = _grid(p, k)
        score = dbar[:, r - 1] * info[r - 1] / math.sqrt(info[-1])
        at = np.clip(np.rint((score - nodes[0]) / (nodes[1] - nodes[0])).astype(np.int64), 0, nodes.size - 1)
        act = actions[k][at]
        stop = going & (act != 2)
        win |= stop & (act == 1)
        calls[stop] = r
        going &= ~stop
    return float(win.mean()), float(calls.mean()) / reps[-1]


def fit_check(design: str, p: Problem, lam: tuple[float, float], info: Array, reps: list[int], sims: int,
              seed: int) -> str:
    """A table row: the attaining rule on calibration's binomial runs at the gap and in three A/A worlds."""
    f, r = (int(x) for x in design.split("x"))
    actions = solve(p, *lam)[1]
    rng = np.random.default_rng(seed)
    cells = []
    for gap, shock in ((PLANNED[design], 0.0), (0.0, 0.0), (0.0, 0.5), (0.0, 1.0)):
        base, variants, _ = simulate(Line("check", fixtures=f, repetitions=r, gap=gap, arm_shock=shock), sims, rng)
        wins, calls = apply_rule(p, actions, info, reps, base, variants[0])
        cells.append(f"{wins:.4f} / {calls:.3f}" if gap else f"{wins:.4f}")
    return f"| {f} × {r} | {reps[0]}..{r} | " + " | ".join(cells) + " |"



# ---- The bound that charges for the unknown run-term variance (`--unknown`) ----------------------------------------

#: Per-arm repetition shock sds (logit scale) of the null worlds: calibration.py's A/A lines go to 1.5; the worlds
#: between are ones the product must keep too (it claims every size). Beyond them, κ = 10 and 30 (much larger).
SHOCKS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
LARGE_KAPPAS = (10.0, 30.0)


@dataclass(frozen=True)
class Model:
    """The normal model of one design at its planned gap: the mean gap `delta`, the gaps' run-to-run variance
    `tau2` (per repetition; the sums' is the same: arms of equal noise), the fixture term `w` (Var of the run's
    fixtures' mean gap), and the null worlds' run-to-run variances as multiples `kappas` of tau2."""

    delta: float
    tau2: float
    w: float
    kappas: tuple[float, ...]


def measure_model(f: int, r: int, gap: float, sims: int, seed: int) -> Model:
    """The model measured in calibration's binomial world: at the gap (no shock) and in A/A worlds with equal
    per-arm shocks of SHOCKS; a null's κ = 1 + (its gaps' run-to-run variance − the shock-free A/A's) / tau2 —
    the alternative's cell noise plus the shock's own variance."""
    rng = np.random.default_rng(seed)
    base, variants, _ = simulate(Line("bound", fixtures=f, repetitions=r, gap=gap), sims, rng)
    d = (variants[0] - base).mean(axis=1)  # (S, R): each repetition's mean gap
    tau2 = float(d.var(axis=1, ddof=1).mean())
    w = max(0.0, float(d.mean(axis=1).var(ddof=1)) - tau2 / r)
    spreads = []
    for sd in SHOCKS:
        b0, v0, _ = simulate(Line("A/A", fixtures=f, repetitions=r, arm_shock=sd), sims, rng)
        spreads.append(float((v0[0] - b0).mean(axis=1).var(axis=1, ddof=1).mean()))
    kappas = tuple(1.0 + (x - spreads[0]) / tau2 for x in spreads) + LARGE_KAPPAS
    return Model(float(d.mean()), tau2, w, kappas)


@dataclass(frozen=True)
class Grids:
    """Quadrature and grid sizes: score nodes per look (±`width` sd), log-scatter nodes, Gauss–Hermite nodes for
    the next block's mean gap and generalised Gauss–Laguerre nodes for its χ² scatter."""

    ny: int = 161
    nu: int = 321  # 81 overshot the bound by 0.003-0.004 (docs/statistics.md, "Trying to break it, 2026-12-05 evening")
    nh: int = 32
    nc: int = 20
    width: float = 8.0


class Unknown:
    """Backward induction over (d̄_r, SS_r) for one design and schedule (the module docstring's "Charging for the
    unknown run variance"): the state at look k on a grid of y = (d̄ − δ)/sd(d̄_r) and u = log(SS_r/τ²)."""

    def __init__(self, model: Model, reps: list[int], alpha: float, power: float, grids: Grids = Grids(),
                 per: int = 2) -> None:
        """`per`: the scatter's degrees of freedom per repetition after the first: 2 when it pools the gaps' and the
        sums' (the bound), 1 when it is the gaps' alone (a rule that reads no sums: benchmarks/sequential_rule.py)."""
        self.m, self.reps, self.alpha, self.power, self.g, self.per = model, reps, alpha, power, grids, per
        self.calls = [x / reps[-1] for x in reps]
        self.y = np.linspace(-grids.width, grids.width, grids.ny)
        self.u = [np.zeros(0) if x == 1 else np.linspace(math.log(stats.chi2.ppf(1e-10, per * (x - 1))),
                                                          math.log(stats.chi2.ppf(1 - 1e-12, per * (x - 1))), grids.nu)
                  for x in reps]
        h, hw = special.roots_hermitenorm(grids.nh)
        self.h, self.hw = h, hw / hw.sum()

    def _sd(self, r: int) -> float:
        return math.sqrt(self.m.w + self.m.tau2 / r)

    def _chi(self, df: int) -> tuple[Array, Array]:
        """Nodes and weights of χ²_df (a point at 0 for df 0)."""
        if df <= 0:
            return np.zeros(1), np.ones(1)
        t, wt = special.roots_genlaguerre(self.g.nc, df / 2 - 1)
        return 2 * t, wt / wt.sum()

    def _scatter(self, k: int) -> Array:
        return np.zeros(1) if self.u[k].size == 0 else np.exp(self.u[k])

    def log_lr(self, k: int) -> Array:
        """log f_j / f_alt at look k's nodes, (J, ny, nz): d̄ ~ N(gap, w + κτ²/r), SS ~ κτ² χ² on per·(r − 1) df."""
        r, m = self.reps[k], self.m
        x = (m.delta + self._sd(r) * self.y)[:, None]
        z = self._scatter(k)[None, :]
        va = m.w + m.tau2 / r
        out = []
        for kappa in m.kappas:
            vj = m.w + kappa * m.tau2 / r
            own = -0.5 * x ** 2 / vj - 0.5 * math.log(vj) + 0.5 * (x - m.delta) ** 2 / va + 0.5 * math.log(va)
            out.append(own - 0.5 * self.per * (r - 1) * math.log(kappa) - 0.5 * z * (1 / kappa - 1))
        return np.stack(out)

    def _at(self, k: int, v: Array, y: Array, u: Array) -> Array:
        """v (look k's grid) at the points (y, u), bilinear, clamped at the grid's edges."""
        iy = (y - self.y[0]) / (self.y[1] - self.y[0])
        iu = (u - self.u[k][0]) / (self.u[k][1] - self.u[k][0])
        out: Array = map_coordinates(v, [iy.ravel(), iu.ravel()], order=1, mode="nearest").reshape(y.shape)
        return out

    def expect(self, k: int, after: Array) -> Array:
        """E_alt[v at look k + 1 | each node of look k], for each channel of `after` (C, ny, nu): the next block's
        mean gap by Gauss–Hermite (given d̄_r through the fixture term's posterior), then its pure-noise scatter
        (χ² on per·m − 1 df: 2m − 1 pooled) by Gauss–Laguerre, one after the other (the two are independent)."""
        m, r, nxt = self.m, self.reps[k], self.reps[k + 1]
        step = nxt - r
        x = m.delta + self._sd(r) * self.y
        rho = m.w / (m.w + m.tau2 / r)
        new = (m.delta + rho * (x - m.delta))[:, None] + math.sqrt(m.w * (1 - rho) + m.tau2 / step) * self.h[None, :]
        y_next = ((r * x[:, None] + step * new) / nxt - m.delta) / self._sd(nxt)
        between = (r * step / nxt) * (new - x[:, None]) ** 2 / m.tau2  # (ny, nh)
        mid = np.exp(self.u[k + 1])
        u_next = np.log(mid[None, :, None] + between[:, None, :])  # (ny, nu, nh)
        y_b = np.broadcast_to(y_next[:, None, :], u_next.shape)
        cn, cw = self._chi(self.per * step - 1)
        iu = np.clip((np.log(self._scatter(k)[:, None] + cn[None, :]) - self.u[k + 1][0]) /
                     (self.u[k + 1][1] - self.u[k + 1][0]), 0, self.g.nu - 1)
        lo = np.minimum(np.floor(iu).astype(np.int64), self.g.nu - 2)
        frac = iu - lo
        out = []
        for v in after:
            inner = (self._at(k + 1, v, y_b, u_next) * self.hw).sum(axis=2)  # (ny, nu of look k + 1)
            out.append(((inner[:, lo] * (1 - frac) + inner[:, lo + 1] * frac) * cw).sum(axis=2))
        return np.stack(out)

    def start(self, first: Array) -> Array:
        """E_alt of each channel of `first` (C, ny, nz) at the first look."""
        if self.u[0].size == 0:
            return np.array([float(np.interp(self.h, self.y, v[:, 0]) @ self.hw) for v in first])
        cn, cw = self._chi(self.per * (self.reps[0] - 1))
        yy, uu = np.meshgrid(self.h, np.log(cn), indexing="ij")
        return np.array([float(self.hw @ self._at(0, v, yy, uu) @ cw) for v in first])

    def solve(self, mu: Array, mu_alt: float) -> tuple[float, list[npt.NDArray[np.int8]]]:
        """min over all rules of E_alt[N] + Σ_j μ_j (P_j(win) − α) + μ_alt (power − P_alt(win)) (N as a share of
        the fixed grid) and the minimising rule's action per node (0 stop, 1 stop with a win, 2 go on)."""
        last = len(self.reps) - 1
        actions: list[npt.NDArray[np.int8]] = [np.zeros(0, dtype=np.int8)] * len(self.reps)
        value = np.zeros(0)
        for k in range(last, -1, -1):
            win = self.calls[k] + np.tensordot(mu, np.exp(np.clip(self.log_lr(k), -700, 700)), 1) - mu_alt
            stop = np.minimum(self.calls[k], win)
            go = np.full(stop.shape, np.inf) if k == last else self.expect(k, value[None])[0]
            value = np.minimum(stop, go)
            actions[k] = np.where(go < stop, 2, np.where(win < self.calls[k], 1, 0)).astype(np.int8)
        return float(self.start(value[None])[0]) - self.alpha * float(mu.sum()) + mu_alt * self.power, actions

    def evaluate(self, actions: list[npt.NDArray[np.int8]]) -> Array:
        """The rule's E_alt[N] (share), P_alt(win) and P_j(win) for every null (as E_alt[win · f_j/f_alt])."""
        carried = np.zeros(0)
        for k in range(len(self.reps) - 1, -1, -1):
            act = actions[k]
            stop, win = act != 2, (act == 1).astype(np.float64)
            here = np.concatenate([np.full((1, *act.shape), self.calls[k]), win[None],
                                   win[None] * np.exp(np.clip(self.log_lr(k), -700, 700))]) * stop[None]
            carried = here if k == len(self.reps) - 1 else here + self.expect(k, carried) * ~stop[None]
        return self.start(carried)


def unknown_bound(problem: Unknown) -> tuple[float, Array, Array]:
    """The largest D(μ) found (L-BFGS-B on μ ≥ 0, its supergradient from the minimising rule's rates), that μ
    (nulls, then the power's) and the minimising rule's (E[N], power, wins at each null). Any μ gives a valid
    bound; the rule's rates show how close to the best μ it is (wins ≤ α at every null, power at its target)."""
    n = len(problem.m.kappas)

    def negative(mu: Array) -> tuple[float, Array]:
        value, actions = problem.solve(mu[:n], float(mu[n]))
        rates = problem.evaluate(actions)
        return -value, -np.concatenate([rates[2:] - problem.alpha, [problem.power - rates[1]]])

    start = np.concatenate([np.full(n, 0.5), [1.0]])
    found = optimize.minimize(negative, start, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * (n + 1),
                              options={"maxiter": 200})
    mu: Array = found.x
    value, actions = problem.solve(mu[:n], float(mu[n]))
    return value, mu, problem.evaluate(actions)


def unknown_table(args: argparse.Namespace) -> None:
    """Print the bound charging for the unknown run variance, per design and first look."""
    grids = Grids(*(int(x) for x in args.grid.split(",")))
    print(f"\n## Charging for the unknown run variance: wins ≤ {args.alpha / 2:g} at every null world, "
          f"≥ {args.power:.3f} at the gap; {args.sims:,} runs a world, seed {args.seed}, grid {args.grid}\n\n"
          "| design | planned gap (mean) | τ², w | null worlds' κ | looks | **bound: least E[calls] / fixed** | "
          "the minimising rule: calls / power / wins at each null (max) | binding nulls (κ: μ) | seconds |\n"
          "|---|---|---|---|---|---|---|---|---|")
    for design in args.designs.split(","):
        f, r = (int(x) for x in design.split("x"))
        started = time.perf_counter()
        model = measure_model(f, r, PLANNED[design], args.sims, args.seed)
        for first in (int(x) for x in args.first.split(",")):
            problem = Unknown(model, list(range(first, r + 1)), args.alpha / 2, args.power, grids)
            value, mu, rates = unknown_bound(problem)
            binding = ", ".join(f"{k:.2f}: {m:.3g}" for k, m in zip(model.kappas, mu, strict=False) if m > 1e-6)
            print(f"| {f} × {r} | {PLANNED[design]:.3f} ({model.delta:.4f}) | {model.tau2:.4g}, {model.w:.2g} | "
                  f"{', '.join(f'{k:.2f}' for k in model.kappas)} | {first}..{r} | **{value:.3f}** | "
                  f"{rates[0]:.3f} / {rates[1]:.3f} / {rates[2:].max():.4f} | {binding} | "
                  f"{time.perf_counter() - started:.0f} |", flush=True)

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=40000, help="runs to measure the gap's variance per design")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--designs", default="12x10,24x5,12x5")
    parser.add_argument("--alpha", type=float, default=0.05, help="two-sided; the bound keeps wins ≤ α/2")
    parser.add_argument("--power", type=float, default=0.95 * 0.80, help="wins at the planned gap, at least")
    parser.add_argument("--points", type=int, default=401, help="grid points per look")
    parser.add_argument("--check", type=int, default=20000, help="binomial runs a world for the fit check (0: none)")
    parser.add_argument("--tables", default="known,unknown", help="known (variances known), unknown (run variance)")
    parser.add_argument("--first", default="2,1", help="--unknown: the first looks tried (after this many blocks)")
    parser.add_argument("--grid", default="161,321,32,20",
                        help="--unknown: score, log-scatter, Hermite, Laguerre nodes")
    args = parser.parse_args()
    if "unknown" in args.tables:
        unknown_table(args)
    if "known" not in args.tables.split(","):
        return
    print(f"# The fewest calls at the planned gap: wins ≤ {args.alpha / 2:g} at 0, ≥ {args.power:.3f} at the gap; "
          f"{args.sims:,} runs to measure each design's variance, seed {args.seed}, {args.points} grid points\n")
    print("| design | planned gap (measured mean) | drift θ = gap / sd | known-variance z, fixed: power | looks | "
          "**bound: least E[calls] / fixed** | λ0, λ1 | the optimal rule: wins at 0 / power / calls | "
          "z's own 80% gap (θ 2.80): bound | seconds |\n|---|---|---|---|---|---|---|---|---|---|")
    z_crit = float(special.ndtri(1 - args.alpha / 2))
    checks = []
    for design in args.designs.split(","):
        started = time.perf_counter()
        f, r = (int(x) for x in design.split("x"))
        gap, var = measure(f, r, PLANNED[design], args.sims, args.seed)
        info = 1.0 / var
        theta = gap * math.sqrt(info[-1])
        z_power = float(special.ndtr(theta - z_crit))
        for first in (1, 2):
            reps = list(range(first, r + 1))
            t = tuple(float(info[x - 1] / info[-1]) for x in reps)
            p = Problem(t, tuple(float(x) for x in reps), theta, args.alpha / 2, args.power, args.points)
            b, lam0, lam1, (a0, p1, n1) = bound(p)
            own = Problem(t, p.calls, float(z_crit + special.ndtri(0.80)), args.alpha / 2, args.power, args.points)
            b_own = bound(own)[0]
            if first == 2 and args.check:
                checks.append(fit_check(design, p, (lam0, lam1), info, reps, args.check, args.seed))
            print(f"| {f} × {r} | {PLANNED[design]:.3f} ({gap:.4f}) | {theta:.3f} | {z_power:.3f} | "
                  f"{first}..{r} | **{b:.3f}** | {lam0:.3g}, {lam1:.3g} | {a0:.4f} / {p1:.3f} / {n1:.3f} | "
                  f"{b_own:.3f} | {time.perf_counter() - started:.1f} |", flush=True)
    if checks:
        print("\n## The fit check: the attaining rule (looks 2..R) on calibration's binomial runs\n\n"
              "| design | looks | at the planned gap: wins / calls | A/A, no shock: wins | "
              "A/A, per-arm shocks sd 0.5 | sd 1.0 |\n"
              "|---|---|---|---|---|---|")
        print("\n".join(checks))


if __name__ == "__main__":
    main()
