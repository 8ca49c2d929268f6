"""Candidate draws of what a pilot leaves uncertain, for `benchmarks/calibration.py --plan-draws` (issue 23 point 6).

`plan` from a pilot simulates runs whose rate, fixture spread and run term are drawn from the pilot's mean squares
(`stats.simulate.drawn`), at a rate moved towards the noisiest one (`planning.power.hardest_rate`, RATE_SE standard
errors). Each candidate here swaps those for one plan (`using`), so that candidates are judged on the same pilots
and the same world as the product's own draw (docs/statistics.md, "`plan` keeps its word"). The names:

- `product`: today's (the fixture spread a scaled inverse χ² on F − 1, the rate moved one standard error, the run
  term the generalised pivotal);
- `fix-point`: the fixture spread at the pilot's estimate (the rate still drawn, with the same χ²);
- `no-move` / `half-move`: the rate not moved / moved half a standard error;
- `no-run`: no run term (θ = 0);
- `avg`: the model average (prior ½ on "no run term", ½ on θ > 0 with density (1 + θ)^−2: the run term's share of
  MS_rep's expectation, θ/(1 + θ), uniform), θ = F·σ²_run/σ²_err drawn from its posterior given the pilot's
  MS_rep/MS_err, σ²_err a scaled inverse χ² on the residual's degrees of freedom;
- `share`: the same prior without the point mass (the share uniform on (0, 1));
- `fix-mean` / `run-mean`: the fixture spread's / the run term's mean squares each drawn as MS·df/χ²_(df + 2),
  whose mean is the observed mean square (today's MS·df/χ²_df has mean df/(df − 2) times it: twice it on 4
  degrees of freedom, none on 2); `mean`: both;
- joined by `+`, e.g. `avg+fix-point+no-move`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np

from benchcard.planning import power
from benchcard.stats import simulate
from benchcard.stats.crossed import FloatArray
from benchcard.stats.simulate import Rates

_PRODUCT = simulate.drawn
GRID = 4000
"""Points of the run term's share on (0, 1) at which a posterior is tabulated (midpoints)."""


@dataclass(frozen=True)
class Candidate:
    fixture: str = "chi2"
    """`chi2` (today's) or `point`."""
    run: str = "pivotal"
    """`pivotal` (today's), `none` or `average`."""
    rate_se: float = 1.0
    """power.RATE_SE: how far the rate moves towards the noisiest (0: not at all)."""
    fixture_extra: int = 0
    """Degrees of freedom added to the χ² of the fixture spread's draw (`fix-mean`: 2)."""
    run_extra: int = 0
    """… and to those of the run term's two mean squares (`run-mean`: 2)."""
    prior_some: float = 0.5
    """The model average's prior weight on θ > 0 (1: no point mass at 0)."""


PARTS: dict[str, dict[str, str | float]] = {
    "product": {},
    "fix-point": {"fixture": "point"},
    "no-move": {"rate_se": 0.0},
    "half-move": {"rate_se": 0.5},
    "no-run": {"run": "none"},
    "avg": {"run": "average"},
    "share": {"run": "average", "prior_some": 1.0},
    "fix-mean": {"fixture_extra": 2},
    "run-mean": {"run_extra": 2},
    "mean": {"fixture_extra": 2, "run_extra": 2},
}


def candidate(name: str) -> Candidate:
    """A candidate by its name (parts joined by `+`); one line naming the unknown part."""
    out = Candidate()
    for part in name.split("+"):
        if part not in PARTS:
            raise SystemExit(f"--plan-draws: unknown part {part!r}; expected one of {', '.join(PARTS)}")
        out = replace(out, **PARTS[part])  # type: ignore[arg-type]
    return out


@contextmanager
def using(c: Candidate) -> Iterator[None]:
    """`simulate.drawn` and `power.RATE_SE` as the candidate has them, for the length of the block."""
    saved = simulate.drawn, power.RATE_SE
    if c != Candidate():
        vars(simulate)["drawn"] = lambda m, rng, n: _drawn(c, m, rng, n)
        vars(power)["RATE_SE"] = c.rate_se
    try:
        yield
    finally:
        vars(simulate)["drawn"], vars(power)["RATE_SE"] = saved


def _drawn(c: Candidate, m: Rates, rng: np.random.Generator, n: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """`simulate.drawn` with the candidate's fixture spread and run term (the same random numbers in the same
    order where the candidate draws what the product draws)."""
    rate, fixture, run = _PRODUCT(m, rng, n)
    p = m.pilot
    if p is None or p.fixture_ms <= 0 or p.fixtures < 2:
        return rate, fixture, run
    df = p.fixtures - 1
    if c.fixture == "point":
        fixture = np.sqrt(np.clip(p.fixture_ms - p.sampling, 0.0, rate * (1 - rate)))
    elif c.fixture_extra:
        tau = p.fixture_ms * df / rng.chisquare(df + c.fixture_extra, n)
        fixture = np.sqrt(np.clip(tau - p.sampling, 0.0, rate * (1 - rate)))
    if c.run == "none":
        run = np.zeros(n)
    elif c.run == "average" and p.run_df and p.err_df and p.err_ms > 0:
        theta = _average_theta(p.run_ms / p.err_ms, p.run_df, p.err_df, c.prior_some, rng, n)
        err = p.err_ms * p.err_df / rng.chisquare(p.err_df, n)
        run = np.sqrt(theta * err / p.fixtures)
    elif c.run_extra and p.run_df:
        run_var = p.run_ms * p.run_df / rng.chisquare(p.run_df + c.run_extra, n)
        if p.err_df and p.err_ms > 0:
            run_var = run_var - p.err_ms * p.err_df / rng.chisquare(p.err_df + c.run_extra, n)
        run = np.sqrt(np.maximum(run_var, 0.0) / p.fixtures)
    return rate, fixture, run


def _average_theta(ratio: float, d1: int, d2: int, some: float, rng: np.random.Generator, n: int) -> FloatArray:
    """n draws of θ from its posterior: MS_rep/MS_err is (1 + θ) times an F(d1, d2) variable; the prior puts
    1 − `some` on θ = 0 and `some` on θ > 0 with density (1 + θ)^−2, i.e. the share s = θ/(1 + θ) uniform."""
    from scipy import stats

    s = (np.arange(GRID) + 0.5) / GRID
    lam = 1 / (1 - s)
    # density of the share: uniform prior × likelihood f_F(ratio/λ)/λ (ds = dλ/λ² cancels the prior in λ)
    dens = some * stats.f.pdf(ratio / lam, d1, d2) / lam
    mass0 = (1 - some) * float(stats.f.pdf(ratio, d1, d2))
    cont = float(dens.sum()) / GRID
    total = mass0 + cont
    none = rng.random(n) < mass0 / total
    cdf = np.cumsum(dens)
    cdf /= cdf[-1]
    pick = np.searchsorted(cdf, rng.random(n))
    share = (np.minimum(pick, GRID - 1) + rng.random(n)) / GRID
    theta: FloatArray = np.where(none, 0.0, share / (1 - share))
    return theta
