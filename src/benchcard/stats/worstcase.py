"""The calibrated t p: Satterthwaite's p, taken at its worst case over the variance components.

Satterthwaite's degrees of freedom are estimated from the same mean squares as the variance, and with two or
three repetitions the run term's R − 1 degrees of freedom make that estimate wild: when MS_rep comes out small
by chance both the variance and the df favour rejection. Plugged in as is, the rule said "result" in 6–9 % of
A/A runs at F = 24–48 with R = 3, and R = 2 (docs/statistics.md). So the verdict does not read the t p off
Student's t alone: it asks how often a t scoring at least this high (on Wallace's normal-score scale, which
makes t's of different df comparable) arises when the gap is truly 0, under the two-way normal model of
crossed.py, for every ratio of fixture, run and cell variance on a grid and every split of the cell noise and
of the run-level variance between the arms (a seeded, scrambled Sobol' sequence of the mean squares, cached per
design), and reports the largest such rate, never less than Student's p. That is the definition of a valid p
with nuisance parameters (the supremum over them), computed by simulation.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy import special

from benchcard.stats import _tablecache
from benchcard.stats.paired import t_ppf, t_sf

FloatArray = npt.NDArray[np.float64]

#: Fixture term R·ω²/σ²_e and run term F·σ²_run/σ²_e of the null grid (0 = absent, 100 = dominant).
FIXTURE_RATIOS = (0.0, 0.5, 2.0, 10.0, 100.0)
RUN_RATIOS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0, 100.0)
#: The variant's share of the arms' cell noise: alike (½), one arm steadier, one arm deterministic (0).
ARM_SHARES = (0.5, 0.25, 0.0)
#: The variant's share of the run-level (shock) variance, apart from the cell noise: the arms' shocks need not
#: be of one size (baseline shocks only, variant steady: 0).
RUN_SPLITS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: The interval is never narrower than this share of the run term's variance (docs/statistics.md, "What was tried").
RUN_SHARE = 0.6
#: The run term's df run from R − 1 (one arm's spread is all of it) to RUN_DF_SPAN·(R − 1) (the arms spread alike),
#: through the arms' balance β = 4·λ_V·λ_B/(λ_V + λ_B)² raised to BALANCE_POWER (docs/statistics.md, "What was tried").
RUN_DF_SPAN = 3.0
BALANCE_POWER = 2.0
#: Null draws per grid point (half of them the mirror image of the other half, so both tails are alike); the
#: other half a power of 2, as a Sobol' sequence's balance needs.
DRAWS = 32_768
SEED = 20261201
#: The Sobol' sequence's resolution (its points are multiples of 2^−SOBOL_BITS).
SOBOL_BITS = 30


def variance_and_df(a: FloatArray, b: FloatArray, c: FloatArray, arm_v: FloatArray, arm_b: FloatArray, r: int,
                    n: npt.ArrayLike, steady: npt.ArrayLike = False) -> tuple[FloatArray, FloatArray]:
    """se² and the reference df from a = MS_fix/(FR), b = MS_run/(FR), c = MS_err/(FR), each arm's own
    run-to-run spread arm_v, arm_b (max of its MS_rep and its MS_err, over F·R) and the fixtures n.

    MS_run pools the repetition mean squares of the gaps and of the arms' sums (crossed.py): it is the sum of the
    arms' own repetition mean squares, R − 1 df each. se² = a + b − c (each variance component once: fixtures,
    runs, cells), never below RUN_SHARE·b, so the arms' run-to-run spread is always inside the interval. The df
    is Satterthwaite's over the run term and the fixtures' excess max(0, a − c) (n − 1 df), the run term's own df
    running from R − 1 when all of it is one arm's (a deterministic arm, or shocks in one arm only) to
    RUN_DF_SPAN·(R − 1) when the arms spread alike, by their balance. Each arm's spread is its MS_rep, never taken
    below its MS_err (cell noise alone makes an arm spread that much from run to run; known on (F − 1)(R − 1)
    df). The df is a shape, not a claim: the calibration below makes the p valid whatever it is. One formula
    for the verdict and the null draws below, so the calibration is of the statistic used (the null draws
    compute its run and fixture parts once per grid value, not once per point)."""
    return _combined(a, b, c, _run_part(arm_v, arm_b, r), _fixture_part(a, c, n), r, steady)


def _run_part(arm_v: FloatArray, arm_b: FloatArray, r: int) -> tuple[FloatArray, FloatArray]:
    """variance_and_df's run term (the arms' spreads summed) and its share of Satterthwaite's denominator
    (run²/run df, the run df set by the arms' balance)."""
    run = arm_v + arm_b
    with np.errstate(invalid="ignore", divide="ignore"):
        balance = np.nan_to_num(4.0 * arm_v * arm_b / (run * run), nan=0.0)
        run_df = (r - 1) * (1.0 + (RUN_DF_SPAN - 1.0) * balance ** BALANCE_POWER)
        term: FloatArray = run * run / run_df
    return run, term


def _fixture_part(a: FloatArray, c: FloatArray, n: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """variance_and_df's fixture excess max(0, a − c), its share of Satterthwaite's denominator and its df."""
    fixture_df = np.maximum(np.asarray(n, dtype=np.float64) - 1.0, 1.0)
    excess = np.maximum(a - c, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        term: FloatArray = excess * excess / fixture_df
    return excess, term, fixture_df


def _combined(a: FloatArray, b: FloatArray, c: FloatArray, run_part: tuple[FloatArray, FloatArray],
              fixture_part: tuple[FloatArray, FloatArray, FloatArray], r: int,
              steady: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """variance_and_df from its run and fixture parts."""
    (run, run_term), (excess, excess_term, fixture_df) = run_part, fixture_part
    var = np.maximum(RUN_SHARE * b, a + b - c)
    var = np.where(var > 0, var, a)  # no run spread and no excess at all: the paired variance
    with np.errstate(invalid="ignore", divide="ignore"):
        satterthwaite = (run + excess) ** 2 / (run_term + excess_term)
    top = RUN_DF_SPAN * (r - 1) + fixture_df
    # NaN (no spread at all) is R − 1; ±inf is clipped to an end as nan_to_num's ±max would be (the null draws
    # call this some 600 times a table, so no copy more than needed)
    df = np.clip(np.where(np.isnan(satterthwaite), r - 1.0, satterthwaite), r - 1.0, top)
    if np.any(steady):
        df = np.where(steady, r - 1.0, df)
    out: FloatArray = var
    if np.shape(df) == np.shape(var) and isinstance(df, np.ndarray) and df.dtype == np.float64:
        return out, df
    return out, np.array(np.broadcast_to(df, np.shape(var)), dtype=np.float64)


def reference_df(df: npt.ArrayLike, n: npt.ArrayLike) -> FloatArray:
    """Student's df the calibrated p is never below: the lesser of the run term's and the fixtures' (F − 1),
    the two ends of the grid (a dominant run term, a dominant fixture term)."""
    out: FloatArray = np.minimum(np.asarray(df, dtype=np.float64),
                                 np.maximum(np.asarray(n, dtype=np.float64) - 1, 1.0))
    return out


def wallace(t: npt.ArrayLike, df: npt.ArrayLike) -> FloatArray:
    """Wallace's normal score of Student's t: monotone in t for each df and cheap (no incomplete beta).

    The calibration compares observed and null statistics on this one scale, so its accuracy as an
    approximation of the normal quantile (about 0.01) changes no validity, only what is compared."""
    t_arr, nu = np.asarray(t, dtype=np.float64), np.asarray(df, dtype=np.float64)
    out: FloatArray = t_arr * t_arr / nu
    if out.ndim == 0:
        scalar: FloatArray = np.sign(t_arr) * np.sqrt(nu * np.log1p(out)) * (8 * nu + 1) / (8 * nu + 3)
        return scalar
    # sign(t)·√(ν·log1p(t²/ν))·(8ν + 1)/(8ν + 3), each operation in place (the null draws score 600 arrays a table)
    np.log1p(out, out=out)
    out *= nu
    np.sqrt(out, out=out)
    out *= np.sign(t_arr)
    eight = 8 * nu
    out *= eight + 1
    out /= eight + 3
    return out


def wallace_inverse(w: npt.ArrayLike, df: npt.ArrayLike) -> FloatArray:
    """The t whose Wallace score is w at df (w ≥ 0)."""
    w_arr, nu = np.asarray(w, dtype=np.float64), np.asarray(df, dtype=np.float64)
    z = w_arr * (8 * nu + 3) / (8 * nu + 1)
    out: FloatArray = np.sqrt(nu * np.expm1(z * z / nu))
    return out


def _grid() -> list[tuple[float, float, float, float]]:
    """(fixture, run, cell share, run split) of every null point; the statistic is symmetric in the arms, so
    (share ½, split ρ) and (share ½, split 1 − ρ) are one point, and without a run term the split is moot."""
    points = []
    for fixture in FIXTURE_RATIOS:
        for run in RUN_RATIOS:
            for share in ARM_SHARES:
                for split in RUN_SPLITS:
                    if (run == 0 and split != RUN_SPLITS[0]) or (share == 0.5 and split > 0.5):
                        continue
                    points.append((fixture, run, share, share if run == 0 else split))
    return points


def null_scores(n: int, complete: int, r: int) -> FloatArray:
    """The worst case of the null's Wallace scores, (2, DRAWS): row 0 over every grid point, row 1 over the points
    where one arm is deterministic (no cell noise, no shocks). Element k of a row is the largest k-th smallest
    score over its points, so #(row ≥ s) = max over the points of #(their scores ≥ s): one sorted array answers
    "the largest rate over the grid of a null statistic at least s". Seeded, so kept on disk for the next
    process (stats/_tablecache.py): the same bytes as drawing it here; read from disk only for advisory figures
    (`_tablecache.advisory()`), so a decision never rests on a file someone else could have written."""
    return _null_scores(n, complete, r, _tablecache.reading())


@lru_cache(maxsize=128)
def _null_scores(n: int, complete: int, r: int, read: bool) -> FloatArray:
    """null_scores, kept per process (0.5 MB a table; a test worker meets about a hundred designs): an advisory
    caller reads a kept file first; a table drawn here, for either caller, is the one a decision uses (a table
    read from disk never serves a decision)."""
    if read:
        found = _tablecache.stored("null", (n, complete, r), (2, DRAWS))
        return _null_scores(n, complete, r, False) if found is None else found
    return _tablecache.table("null", (n, complete, r), (2, DRAWS), lambda: draw_null_scores(n, complete, r),
                             read=False)


def null_draws(n: int, complete: int, r: int, half: int, seed: int = SEED) -> tuple[FloatArray, ...]:
    """|z| and the four scaled chi-squares of the null draws (the fixtures' mean square on F − 1 df, each arm's
    repetition mean square on R − 1, the cells' on (F − 1)(R − 1)): a scrambled Sobol' sequence put through the
    inverse cdfs, whose tail rates err 2–5 times less than as many pseudo-random draws' (docs/statistics.md,
    "What was tried", the corner). Seeded by the design. (scipy.stats, for its Sobol' sequence, is imported here:
    about 0.5 CPU-s a process, which `check`, `seal` and `plan` spare when their tables are kept on disk.)"""
    from scipy.stats import qmc

    err = max(complete - 1, 1) * (r - 1)
    sobol = qmc.Sobol(5, scramble=True, bits=SOBOL_BITS, rng=np.random.default_rng([seed, n, complete, r]))
    with warnings.catch_warnings():  # a benchmark's trial DRAWS need not be a power of 2 (its balance is then lost)
        warnings.simplefilter("ignore", UserWarning)
        u = sobol.random(half)
    u += 0.5 ** (SOBOL_BITS + 1)  # the middle of each of the sequence's cells: never 0, never 1
    z: FloatArray = special.ndtri(0.5 + 0.5 * u[:, 0])
    chi: list[FloatArray] = [2.0 * special.gammaincinv(0.5 * df, u[:, k]) / df
                             for k, df in enumerate((max(n - 1, 1), r - 1, r - 1, err), start=1)]
    return (z, *chi)


def draw_null_scores(n: int, complete: int, r: int) -> FloatArray:
    """null_scores drawn here (about 0.4 CPU-s: 535 grid points of DRAWS draws each)."""
    return null_envelope(null_draws(n, complete, r, DRAWS // 2), n, complete, r)


def null_envelope(draws: tuple[FloatArray, ...], n: int, complete: int, r: int) -> FloatArray:
    """null_scores from null_draws' five arrays (a benchmark passes others: pseudo-random ones, more of them)."""
    z, u_fix, u_var, u_base, u_err = draws
    half = z.size
    # The draws are mirrored (z and −z, the rest alike), so a point's scores are ±w of its first half: only |w|
    # is computed and sorted, and a row is −(the least |w| at each rank), reversed, then the largest (the same
    # numbers as sorting all DRAWS, at half the work).
    top, least = np.full((2, half), -np.inf), np.full((2, half), np.inf)
    # variance_and_df's parts that depend on the fixture ratio alone, or on the run-level terms alone, are
    # computed once per value (the same operations on the same numbers: the table is unchanged)
    fixture_parts: dict[float, tuple[FloatArray, tuple[FloatArray, FloatArray, FloatArray]]] = {}
    run_parts: dict[tuple[float, float, float], tuple[FloatArray, FloatArray, tuple[FloatArray, FloatArray]]] = {}
    work = _Work(half, r, bool(np.all(z > 0)))
    with np.errstate(invalid="ignore", divide="ignore"):
        for fixture, run, share, split in _grid():
            # scaled so that σ²_e/(F·R) = 1: E[a] = 1 + fixture, E[b] = 1 + run, E[c] = 1; the variant's arm holds
            # `share` of the cell noise and `split` of the run-level variance
            lam_v, lam_b = share + split * run, (1 - share) + (1 - split) * run
            if fixture not in fixture_parts:
                a = (1 + fixture) * u_fix
                fixture_parts[fixture] = a, _fixture_part(a, u_err, n)
            if (run, share, split) not in run_parts:
                rep_v, rep_b = lam_v * u_var, lam_b * u_base
                b = rep_v + rep_b
                run_parts[run, share, split] = b, RUN_SHARE * b, _run_part(np.maximum(rep_v, share * u_err),
                                                                           np.maximum(rep_b, (1 - share) * u_err), r)
            (a, fixture_part), (b, floor, run_part) = fixture_parts[fixture], run_parts[run, share, split]
            ratio = work.ratio(a, b, u_err, floor, 1 + fixture + run, z)
            work.fold(work.score(ratio, work.df(run_part, fixture_part)), top[0], least[0])
            if lam_v == 0:  # a steady arm's rows are judged at R − 1 df (variance_and_df)
                work.fold(work.score(ratio, r - 1.0), top[1], least[1])
    every, fixed = (np.concatenate([-least[k, ::-1], top[k]]) for k in (0, 1))
    table: FloatArray = np.stack([every, fixed])
    table.setflags(write=False)
    return table


class _Work:
    """null_envelope's arithmetic for one grid point, in buffers kept across its points: variance_and_df's and
    wallace's operations in their order on the same numbers (so the same bytes; tests/stats/test_worstcase.py
    checks it against them), without their temporaries, copies and NaN guards that cannot fire here."""

    def __init__(self, half: int, r: int, positive: bool) -> None:
        self.var, self.ratio_, self.df_, self.spare, self.w, self.eight = (np.empty(half) for _ in range(6))
        self.r = r
        # every z > 0: every ratio is > 0 and wallace's sign(t) is 1 (a benchmark's |z| of 0 keeps the sign)
        self.positive = positive

    def ratio(self, a: FloatArray, b: FloatArray, c: FloatArray, floor: FloatArray, scale: float,
              z: FloatArray) -> FloatArray:
        """z·√(scale/se²), se² as _combined's max(RUN_SHARE·b, a + b − c), a where that is not > 0."""
        var = self.var
        np.add(a, b, out=var)
        var -= c
        np.maximum(floor, var, out=var)
        if not var.min() > 0:  # no run spread and no excess at all: the paired variance (NaN included)
            np.copyto(var, a, where=~(var > 0))
        out = self.ratio_
        np.divide(scale, var, out=out)
        np.sqrt(out, out=out)
        out *= z
        return out

    def df(self, run_part: tuple[FloatArray, FloatArray],
           fixture_part: tuple[FloatArray, FloatArray, FloatArray]) -> FloatArray:
        """_combined's df: Satterthwaite's, NaN as R − 1, clipped to [R − 1, top] (fmax then min: the same)."""
        (run, run_term), (excess, excess_term, fixture_df) = run_part, fixture_part
        out, spare, low = self.df_, self.spare, self.r - 1.0
        np.add(run, excess, out=out)
        np.square(out, out=out)
        np.add(run_term, excess_term, out=spare)
        out /= spare
        np.fmax(out, low, out=out)
        np.minimum(out, RUN_DF_SPAN * (self.r - 1) + fixture_df, out=out)
        return out

    def score(self, t: FloatArray, nu: FloatArray | float) -> FloatArray:
        """wallace(t, nu) into a kept buffer."""
        out, eight = self.w, self.eight
        np.multiply(t, t, out=out)
        out /= nu
        np.log1p(out, out=out)
        out *= nu
        np.sqrt(out, out=out)
        if not self.positive:
            out *= np.sign(t)
        np.multiply(8, nu, out=eight)
        spare = np.add(eight, 1, out=self.spare)
        out *= spare
        eight += 3
        out /= eight
        return out

    @staticmethod
    def fold(size: FloatArray, top: FloatArray, least: FloatArray) -> None:
        """Sort a point's scores and keep the largest and the least at each rank."""
        size.sort()
        np.maximum(top, size, out=top)
        np.minimum(least, size, out=least)


def calibrate(t: npt.ArrayLike, df: npt.ArrayLike, n: npt.NDArray[np.int64], complete: npt.NDArray[np.int64],
              r: int, applies: npt.NDArray[np.bool_], fixed: npt.NDArray[np.bool_] | None = None, *,
              worst: bool = True) -> FloatArray:
    """One-sided p for "the statistic t is this large", row by row: Student's p at df, raised to the worst-case
    rate of a null t scoring at least as high (rows where `applies` is False keep Student's p). Where `fixed`,
    one arm answered alike in every repetition: it has no variance to split, and the worst case is taken over
    the grid points where it has none. With `worst` False, Student's p alone, which the worst case only raises:
    a floor of the p, without the design's null table (a design search rules out with it what cannot win)."""
    t_arr = np.asarray(t, dtype=np.float64)
    df_arr = np.broadcast_to(np.asarray(df, dtype=np.float64), t_arr.shape)
    with np.errstate(invalid="ignore"):
        out: FloatArray = t_sf(t_arr, df_arr)
    if r < 2 or not applies.any():
        return out
    with np.errstate(invalid="ignore"):
        out = np.where(applies, t_sf(t_arr, reference_df(df_arr, n)), out)
    if not worst:
        return out
    score = wallace(t_arr, df_arr)
    one = np.zeros(t_arr.shape, dtype=bool) if fixed is None else np.broadcast_to(fixed, t_arr.shape)
    for nn, cc in _designs(n, complete, applies):
        rows = applies & (n == nn) & (complete == cc) & np.isfinite(score)
        table = null_scores(nn, cc, r)
        size = table.shape[1]
        for k, which in ((0, rows & ~one), (1, rows & one)):
            hits = size - np.searchsorted(table[k], score[which], side="left")
            out[which] = np.maximum(out[which], (hits + 1.0) / (size + 1.0))
    return np.minimum(out, 1.0)


def critical_t(u: float, df: npt.ArrayLike, n: npt.NDArray[np.int64], complete: npt.NDArray[np.int64], r: int,
               applies: npt.NDArray[np.bool_], fixed: npt.NDArray[np.bool_] | None = None) -> FloatArray:
    """The smallest t whose calibrated one-sided p is ≤ u, row by row: an interval drawn at it agrees with the
    test (Student's quantile where no run term is measured)."""
    df_arr = np.broadcast_to(np.asarray(df, dtype=np.float64), n.shape)
    out: FloatArray = np.array(t_ppf(1.0 - u, df_arr), dtype=np.float64)
    if r < 2 or not applies.any():
        return out
    out = np.where(applies, t_ppf(1.0 - u, reference_df(df_arr, n)), out)
    one = np.zeros(n.shape, dtype=bool) if fixed is None else np.broadcast_to(fixed, n.shape)
    for nn, cc in _designs(n, complete, applies):
        rows = applies & (n == nn) & (complete == cc)
        table = null_scores(nn, cc, r)
        allowed = int(np.floor(u * (table.shape[1] + 1.0))) - 1  # hits allowed for (hits + 1)/(N + 1) ≤ u
        for k, which in ((0, rows & ~one), (1, rows & one)):
            if allowed < 0:
                out[which] = np.inf
                continue
            score = float(table[k, table.shape[1] - allowed - 1])  # beyond it, ≤ allowed null scores
            out[which] = np.maximum(out[which], wallace_inverse(max(score, 0.0), df_arr[which]))
    return out


def _designs(n: npt.NDArray[np.int64], complete: npt.NDArray[np.int64],
             applies: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    pairs = {(int(a), int(b)) for a, b in zip(n[applies], complete[applies], strict=True)}
    return sorted((a, b) for a, b in pairs if a >= 2 and b >= 2)
