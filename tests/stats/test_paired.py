"""benchcard.stats.paired against scipy and against worked numbers (docs/statistics.md, "Worked cases")."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
import pytest
from scipy import stats as sps

from benchcard._util.hashing import seed_from
from benchcard.stats import paired as stats

# Case A: six fixtures, three repetitions.
BASE_A = np.array(
    [[0.5, 0.75, 0.5], [0.75, 0.75, 1], [0.25, 0.5, 0.5], [1, 0.75, 1], [0.5, 0.5, 0.75], [0.75, 1, 0.75]]
)
VAR_A = np.array(
    [[0.75, 0.75, 0.75], [1, 0.75, 1], [0.5, 0.5, 0.75], [1, 1, 1], [0.5, 0.75, 0.75], [0.75, 1, 1]]
)
TOL = 1e-6


# ------------------------------------------------------------------------------------- Case A numbers


def test_case_a_paired_gap_matches_worked_numbers() -> None:
    g = stats.paired_gap(BASE_A, VAR_A)
    assert g.gap == pytest.approx(0.111111, abs=TOL)
    assert g.se == pytest.approx(0.017568, abs=TOL)
    assert g.t == pytest.approx(6.3246, abs=1e-4)
    assert g.df == 5
    assert g.p_value == pytest.approx(0.001457, abs=TOL)
    assert g.ci_low == pytest.approx(0.065951, abs=TOL)
    assert g.ci_high == pytest.approx(0.156272, abs=TOL)
    assert g.p_signflip == pytest.approx(2 / 64, abs=1e-12)
    assert g.n_fixtures == 6


def test_case_a_one_sided_bounds_use_t_one_minus_alpha() -> None:
    g = stats.paired_gap(BASE_A, VAR_A, alpha=0.05)
    q = sps.t.ppf(0.95, 5)
    assert g.upper_one_sided == pytest.approx(g.gap + q * g.se, abs=1e-12)
    assert g.lower_one_sided == pytest.approx(g.gap - q * g.se, abs=1e-12)
    assert g.ci_low < g.lower_one_sided < g.gap < g.upper_one_sided < g.ci_high


def test_case_a_noise_floor_counts_only_the_excess_run_spread() -> None:
    nf = stats.noise_floor(BASE_A)
    assert nf.run_means == pytest.approx((0.625, 0.708333, 0.75), abs=TOL)
    assert nf.sd == pytest.approx(0.063647, abs=TOL)
    # two-way table by hand: MS_rep = F·Σ(M_r − M)²/(R − 1), MS_err from the interaction residuals
    b = np.array(BASE_A, dtype=float)
    f, r = b.shape
    ms_rep = f * sum((b[:, j].mean() - b.mean()) ** 2 for j in range(r)) / (r - 1)
    ms_err = sum((b[i, j] - b[i].mean() - b[:, j].mean() + b.mean()) ** 2
                 for i in range(f) for j in range(r)) / ((f - 1) * (r - 1))
    expected = sps.t.ppf(0.975, r - 1) * math.sqrt(2 * max(0.0, ms_rep - ms_err) / f / r)
    assert nf.value == pytest.approx(expected, abs=1e-12)
    assert nf.value == pytest.approx(0.092578, abs=TOL)
    # the first version's floor, t · sd(M_r) · √(2/R) = 0.223598, counted the sampling noise twice
    assert nf.value < sps.t.ppf(0.975, 2) * nf.sd * math.sqrt(2 / 3)


def test_case_b_noise_floor_from_run_means() -> None:
    run_means = np.array([0.71, 0.74, 0.69, 0.73, 0.72])
    offsets = np.array([0.2, -0.1, 0.05, -0.15, 0.0])  # fixture difficulty; sums to 0, so column means hold
    baseline = run_means[None, :] + offsets[:, None]
    nf = stats.noise_floor(baseline)
    assert nf.run_means == pytest.approx(tuple(run_means), abs=1e-12)
    assert nf.sd == pytest.approx(0.019235, abs=TOL)
    assert nf.value == pytest.approx(0.033777, abs=TOL)
    assert nf.value == pytest.approx(sps.t.ppf(0.975, 4) * nf.sd * math.sqrt(2 / 5), abs=1e-12)


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [(5, 5, 0.565518, 1.0), (2, 5, 0.117621, 0.769276), (12, 12, 0.757506, 1.0)],
)
def test_case_d_wilson(k: int, n: int, low: float, high: float) -> None:
    lo, hi = stats.wilson(k, n)
    assert lo == pytest.approx(low, abs=TOL)
    assert hi == pytest.approx(high, abs=TOL)


# -------------------------------------------------------------------------------------- against scipy


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("alpha", [0.05, 0.10])
def test_paired_gap_matches_scipy_ttest_rel(seed: int, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    f, r = int(rng.integers(3, 30)), int(rng.integers(1, 7))
    base = rng.random((f, r))
    var = np.clip(base + rng.normal(0.03, 0.2, (f, r)), 0, 1)
    g = stats.paired_gap(base, var, alpha=alpha)
    ref = sps.ttest_rel(var.mean(axis=1), base.mean(axis=1))
    ci = ref.confidence_interval(confidence_level=1 - alpha)
    assert g.t == pytest.approx(ref.statistic, rel=1e-9)
    assert g.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert g.df == ref.df
    assert (g.ci_low, g.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-9)
    upper = sps.ttest_rel(var.mean(axis=1), base.mean(axis=1), alternative="less")
    one = upper.confidence_interval(confidence_level=1 - alpha)
    assert g.upper_one_sided == pytest.approx(one.high, rel=1e-9)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (0, 7), (3, 7), (7, 7), (1, 40), (39, 40)])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_wilson_matches_scipy(k: int, n: int, alpha: float) -> None:
    ref = sps.binomtest(k, n).proportion_ci(confidence_level=1 - alpha, method="wilson")
    lo, hi = stats.wilson(k, n, alpha)
    assert (lo, hi) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_wilson_edges() -> None:
    assert stats.wilson(0, 0) == (0.0, 1.0)
    assert stats.wilson(0, 5)[0] == 0.0
    assert stats.wilson(5, 5)[1] == 1.0
    with pytest.raises(ValueError):
        stats.wilson(6, 5)


# ------------------------------------------------------------------------------------------ sign-flip


def _brute_signflip(d: npt.NDArray[np.float64]) -> float:
    obs = abs(float(d.mean()))
    patterns = itertools.product((1, -1), repeat=d.size)
    hits = sum(abs(float(np.mean(np.array(s) * d))) >= obs - 1e-12 for s in patterns)
    return hits / float(1 << d.size)


@pytest.mark.parametrize("seed", range(5))
def test_signflip_exact_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = rng.normal(0.05, 0.2, int(rng.integers(1, 11)))
    assert stats.signflip_p(d) == pytest.approx(_brute_signflip(d), abs=1e-12)


def test_signflip_ties_count_with_tolerance() -> None:
    # Scores in quarters: many patterns tie the observed sum exactly in real arithmetic.
    d = np.array([0.25, 0.25, 0.5, -0.25, 0.25, 0.0, 0.1 + 0.2 - 0.3])
    assert stats.signflip_p(d) == pytest.approx(_brute_signflip(np.round(d, 12)), abs=1e-12)
    assert stats.signflip_p(np.zeros(8)) == 1.0


def test_signflip_draws_close_to_exact_binomial_value() -> None:
    # |d| all equal: the sum of flipped signs is 2B − F with B ~ Binomial(F, ½), so the exact
    # two-sided p is the binomial test's. F = 30 > 20 forces the seeded draws.
    f, positives = 30, 20
    d = np.array([0.25] * positives + [-0.25] * (f - positives))
    exact = sps.binomtest(positives, f, 0.5).pvalue
    p = stats.signflip_p(d, n_draws=100_000, seed=7)
    assert exact == pytest.approx(0.098737, abs=1e-6)
    assert p == pytest.approx(exact, abs=0.005)  # Monte Carlo se ≈ 0.001
    assert stats.signflip_p(d, seed=7) == p  # deterministic for a seed
    assert stats.signflip_p(d, seed=8) != p


def test_signflip_draws_over_many_groups_match_the_binomial_test() -> None:
    # F = 1,001 fixtures: 63 groups of sixteen, the last one padded; the draws must still follow the binomial.
    f, positives = 1001, 530
    d = np.array([0.5] * positives + [-0.5] * (f - positives))
    exact = sps.binomtest(positives, f, 0.5).pvalue
    p = stats.signflip_p(d, n_draws=100_000, seed=3)
    assert p == pytest.approx(exact, abs=0.006)  # exact ≈ 0.069; Monte Carlo se ≈ 0.0008


def test_signflip_draws_never_zero() -> None:
    p = stats.signflip_p(np.ones(40), n_draws=1000, seed=0)
    assert p == pytest.approx(1 / 1001)


def test_signflip_exact_at_twenty_fixtures() -> None:
    d = np.full(20, 0.1)
    assert stats.signflip_p(d) == pytest.approx(2 / 2**20, rel=1e-12)


# ----------------------------------------------------------------------------------- degenerate cases


def test_constant_differences_are_not_taken_as_certainty() -> None:
    base = np.array([[0.2, 0.4], [0.5, 0.5], [0.9, 0.7]])
    g = stats.paired_gap(base, base + 0.1)
    assert g.se == 0.0
    assert g.gap == pytest.approx(0.1)
    # no interval [0.1, 0.1] and no p of 0: three fixtures moving alike show a sign-flip p of 2/8 and no more
    assert (g.ci_low, g.ci_high) == (-math.inf, math.inf)
    assert (g.lower_one_sided, g.upper_one_sided) == (-math.inf, math.inf)
    assert g.p_value == g.p_signflip == pytest.approx(0.25)
    assert g.no_interval == "every fixture moved alike: zero spread is no measure of the uncertainty"
    assert not any(math.isnan(v) for v in dataclasses.astuple(g))


def test_identical_arms_give_no_gap() -> None:
    g = stats.paired_gap(BASE_A, BASE_A)
    assert (g.gap, g.se, g.t, g.p_value, g.ci_low, g.ci_high) == (0.0, 0.0, 0.0, 1.0, -math.inf, math.inf)
    assert g.p_signflip == 1.0


def test_one_fixture_cannot_conclude() -> None:
    g = stats.paired_gap([[0.1, 0.2]], [[0.9, 0.8]])
    assert g.n_fixtures == 1
    assert g.p_value == 1.0
    assert g.ci_low == -math.inf
    assert g.ci_high == math.inf
    assert g.upper_one_sided == math.inf
    assert g.no_interval == "one fixture: no spread can be measured"


def test_noise_floor_needs_two_runs() -> None:
    nf = stats.noise_floor(np.array([[0.5], [0.7]]))
    assert nf.value == math.inf
    assert nf.run_means == pytest.approx((0.6,))


def test_missing_cells_are_left_out() -> None:
    base = BASE_A.copy()
    var = VAR_A.copy()
    var[0, 1] = np.nan  # one failed cell: fixture 0's variant mean uses the other two
    base[2, :] = np.nan  # a fixture never scored in the baseline: dropped from the pairing
    d = stats.fixture_differences(base, var)
    assert d.size == 5
    assert d[0] == pytest.approx(0.75 - BASE_A[0].mean())
    nf = stats.noise_floor(base)
    assert nf.run_means[0] == pytest.approx(np.delete(BASE_A[:, 0], 2).mean())


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="fixtures"):
        stats.paired_gap(np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError):
        stats.paired_gap(np.ones((2, 2, 2)), np.ones((2, 2, 2)))
    with pytest.raises(ValueError):
        stats.paired_gap(BASE_A, VAR_A, alpha=1.5)


# ------------------------------------------------------------------------------------ seeds and power


def test_seed_from_root() -> None:
    root = "sha256:" + "0123456789abcdef" * 4
    assert seed_from(root) == 0x0123456789ABCDEF
    assert seed_from(root.upper().replace("SHA256", "sha256")) == seed_from(root)
    np.random.default_rng(seed_from(root))  # a usable numpy seed
    for bad in ("0123", "sha256:xyz", "md5:" + "0" * 64, "sha256:" + "0" * 63):
        with pytest.raises(ValueError):
            seed_from(bad)


def test_results_are_frozen() -> None:
    g = stats.paired_gap(BASE_A, VAR_A)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.gap = 1.0  # type: ignore[misc]


def test_one_student_t_for_numbers_and_arrays_of_fractional_degrees_of_freedom() -> None:
    """`t_ppf`/`t_sf` are the statistics' only t functions (the crossed model had its own pair for arrays): a
    number for a number, element-wise for an array, both scipy's t."""
    df = np.array([4.0, 7.5, 30.0])
    assert stats.t_ppf(0.975, 4) == pytest.approx(sps.t.ppf(0.975, 4), rel=1e-12)
    assert isinstance(stats.t_ppf(0.975, 4), float) and isinstance(stats.t_sf(2.0, 4), float)
    np.testing.assert_allclose(stats.t_ppf(0.975, df), sps.t.ppf(0.975, df), rtol=1e-12)
    np.testing.assert_allclose(stats.t_sf(np.array([1.0, 2.0, 3.0]), df), sps.t.sf([1.0, 2.0, 3.0], df), rtol=1e-12)
    assert [stats.t_ppf(0.95, float(d)) for d in df] == stats.t_ppf(0.95, df).tolist()
    # an integer array of df: the quantile was taken at q = 0 (np.full_like kept the integers' dtype), so -inf
    whole = np.array([4, 9])
    assert stats.t_ppf(0.975, whole).tolist() == [stats.t_ppf(0.975, 4), stats.t_ppf(0.975, 9)]


def test_no_module_but_paired_computes_student_s_t_itself() -> None:
    """The one Student t is `paired.t_ppf`/`t_sf`: the worst-case calibration and the replication's intervals and
    drift called scipy's `stdtr`/`stdtrit` themselves after the crossed model's pair was folded in."""
    from pathlib import Path

    import benchcard

    package = Path(benchcard.__file__).parent
    calls = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                   if p.name != "paired.py" and ("stdtr(" in (text := p.read_text(encoding="utf-8"))
                                                 or "stdtrit(" in text or "stats.t." in text))
    assert calls == []


# ---------------------------------------------------------------------------- one Wilson formula (left25)

_WILSON_ALPHAS = (0.0001, 0.001, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5)
#: Look boundaries a sealed schedule gives (and 0.5, 4, no α spent): the z a probe's look held its mean to.
_LOOK_ZS = (0.5, 1.0, 1.2815515655446004, 1.6448536269514722, 1.959963984540054, 2.241402727604947,
            2.5758293035489004, 2.9677379253417944, 3.4710914099958713, 4.0, math.inf)
_WILSON_N = 120


def _bounds_digest(bounds: Iterable[tuple[float, float]]) -> str:
    import hashlib

    h = hashlib.sha256()
    for lo, hi in bounds:
        h.update(f"{float(lo).hex()} {float(hi).hex()}\n".encode())
    return "sha256:" + h.hexdigest()


def test_wilson_at_gives_both_former_copies_outputs_bit_for_bit() -> None:
    """`wilson` and a sequential probe's Wilson gate bound (`gate_bounds(..., "wilson")`, sealed as `gate_bound:
    wilson` before 2026-12-08) were two copies of one formula; they are now one (`wilson_at`). Its outputs are
    frozen here as the two copies gave them (digests of every bound's hex, computed at 5af7461 before the merge):
    every k ≤ n ≤ 120 at eight α, and every mean in quarters of 1/n over n ≤ 120 at eleven look boundaries, so
    that an old look re-verifies exactly as it was taken. The vectorised `replication.wilson_bounds` is not merged:
    it computes z²/(4n²) in one division where these take two, and differs in the last bit on some inputs
    (1,272 of 318,157 k ≤ n ≤ 300 at seven α), e.g. k = 4, n = 5, α = 0.01 below."""
    from benchcard.stats.replication import wilson_bounds
    from benchcard.stats.sequential import gate_bounds

    paired = ((k, n, a) for a in _WILSON_ALPHAS for n in range(_WILSON_N + 1) for k in range(n + 1))
    assert _bounds_digest(stats.wilson(k, n, a) for k, n, a in paired) == \
        "sha256:dd68d8df5529fad389d9fba0a6c8c76232eb2b91e4b53c289fe480d81ec991fb"
    looks = [(step / (4 * n) if n else 0.0, n, z) for z in _LOOK_ZS for n in range(_WILSON_N + 1)
             for step in range(4 * n + 1)]
    frozen = "sha256:8fc864122a84cccd7185358cb2d45468b62740fa65e63e4c86408e607c834fb2"
    assert _bounds_digest(gate_bounds(p, n, z, "wilson") for p, n, z in looks) == frozen
    assert _bounds_digest(stats.wilson_at(p, n, z) for p, n, z in looks) == frozen
    assert [x.hex() for x in stats.wilson(4, 5, 0.01)] == ["0x1.208a9675792bbp-2", "0x1.f3bef789905b2p-1"]
    assert [x.hex() for x in gate_bounds(0.75, 12, 2.241402727604947, "wilson")] == [
        "0x1.b802174a23818p-2", "0x1.d872c087d8de8p-1"]
    lo, hi = wilson_bounds(np.array([0.8]), np.array([5.0]), 0.01)
    assert (float(lo[0]), float(hi[0])) != stats.wilson(4, 5, 0.01)  # why the vectorised one stays apart
    assert float(hi[0]) == stats.wilson(4, 5, 0.01)[1] and abs(float(lo[0]) - stats.wilson(4, 5, 0.01)[0]) < 1e-15
