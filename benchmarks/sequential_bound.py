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
from scipy import special

from calibration import Line, simulate  # beside this script

Array = npt.NDArray[np.float64]

#: Planned gaps of benchmarks/sequential.py's designs table (the fixed rule wins 80% there; seed 1, 2,000 runs a
#: step of the bisection; docs/statistics.md, "Designs").
PLANNED = {"12x10": 0.178, "24x5": 0.192, "12x5": 0.291}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=40000, help="runs to measure the gap's variance per design")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--designs", default="12x10,24x5,12x5")
    parser.add_argument("--alpha", type=float, default=0.05, help="two-sided; the bound keeps wins ≤ α/2")
    parser.add_argument("--power", type=float, default=0.95 * 0.80, help="wins at the planned gap, at least")
    parser.add_argument("--points", type=int, default=401, help="grid points per look")
    parser.add_argument("--check", type=int, default=20000, help="binomial runs a world for the fit check (0: none)")
    args = parser.parse_args()
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
