"""The SVG figure of a clause (matplotlib): per-fixture paired differences, the gap's interval and the noise floor.

The band is the verdict's own calibrated interval wherever a verdict exists (`_plotband.py`), so that a figure
can never show an interval excluding 0 beside a verdict that says the gap is not shown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchcard._util.hashing import digest, seed_from
from benchcard._util.names import MAX_NAME_BYTES, visible
from benchcard._util.numfmt import DASH, fixed, interval
from benchcard.card.model import Card
from benchcard.publish._judgedby import ClauseRef, baseline_of, clauses_for
from benchcard.publish._plotband import CALIBRATED, Band, paired_band, verdict_band
from benchcard.publish._runs import Run
from benchcard.scoring.scorers import LOWER_IS_BETTER

if TYPE_CHECKING:  # matplotlib itself is imported only when a figure is drawn
    from matplotlib.typing import RcKeyType

WIDE_IN = 5.6
"""Width of the figure a laptop shows (at most 38rem, i.e. 608 CSS px, about its natural width)."""
NARROW_IN = 3.6
"""Width of the figure a phone shows instead (`<picture>`, below 40rem): narrow, so that scaling it to the
screen does not shrink its text."""
PHONE_SHOWN_PX = 330
"""The narrowest the phone figure is shown: a 390 px screen less the page's margins (tests/publish/test_site_browser.py
measures it in Chromium)."""
MIN_LABEL_PX = 11.0
NARROW_FONT = round((MIN_LABEL_PX + 1.0) * NARROW_IN * 72 / PHONE_SHOWN_PX, 1)
"""The phone figure's smallest font, in its own points, so that shown at PHONE_SHOWN_PX wide every label is at
least MIN_LABEL_PX (with a pixel to spare): an SVG's text scales with the image."""
DRAWN_KEPT = 256
#: Fixtures a figure names, one row each; above it the dots are drawn in rows without names, the figure no taller
#: than this many rows: 1,000 named rows made an SVG of 730 KB and 240 inches that took matplotlib about 20 s to
#: lay out, four of them a run (hostile audit 13).
MAX_NAMED = 100
"""Figures a process keeps, by everything they are drawn from (`_draw`); about 20-40 KB each."""
_DRAWN: dict[str, bytes] = {}


def figure_rc(font: float) -> dict[RcKeyType, Any]:
    """matplotlib's settings for every figure of the pages (this one, the looks', the replications'): a
    deterministic SVG whose text stays text, and no mathtext. A label is a name from a card or another tool's log
    (a fixture id, a variant, a metric, a model, a task argument), and matplotlib typesets text between two `$`
    as TeX: `cost $5 to $10` showed as `cost 5−to−10` in italics, and `x$^$y` (or a TeX expression cut at 40
    characters) was a ValueError that ended `site` and `compare` in a traceback."""
    return {"svg.hashsalt": "benchcard", "svg.fonttype": "none", "font.size": font,
            "font.family": ["DejaVu Sans", "sans-serif"], "text.parse_math": False}


def good_sign(metric: str, clause: ClauseRef) -> float:
    """+1 when a higher value of `metric` is better, -1 when lower is: what the clause claims (rises and
    not_falls want it higher; falls and not_rises lower), else what the scorer declares of the metric."""
    test = clause.test
    if test in ("falls", "not_rises"):
        return -1.0
    if test in ("rises", "not_falls"):
        return 1.0
    return -1.0 if metric in LOWER_IS_BETTER else 1.0


def _grid(df: Any, metric: str, variant: str, fixtures: Sequence[str]) -> Any:
    import numpy as np

    sub = df[(df["metric"] == metric) & (df["variant"] == variant)]
    col = "repetition" if "repetition" in df.columns else None
    if col is None:
        pivot = sub.groupby("fixture")["value"].mean().to_frame()
    else:
        pivot = sub.pivot_table(index="fixture", columns=col, values="value", aggfunc="mean")
    return np.asarray(pivot.reindex(list(fixtures)).to_numpy(dtype=float), dtype=np.float64)


def _fixture_means(grid: Any) -> Any:
    """Each fixture's mean over its scored repetitions, NaN where none was scored.

    Not np.nanmean: a fixture whose every cell was truncated or failed is normal in a run, and nanmean warns
    ("Mean of empty slice") on it, which np.errstate does not silence.
    """
    import numpy as np

    valid = ~np.isnan(grid)
    counts = valid.sum(axis=1)
    sums = np.where(valid, grid, 0.0).sum(axis=1)
    return np.divide(sums, counts, out=np.full(sums.shape, np.nan), where=counts > 0)


def draw_plots(run: Run, card: Card | None, folder: Path, prefix: str, *, narrow: bool = False
               ) -> list[dict[str, Any]]:
    """One SVG per (variant, clause metric compared across arms): fixture differences, CI, noise floor; with
    `narrow`, a second one drawn for phones (`src_narrow`)."""
    df = run.table
    baseline = baseline_of(run, card)
    if df is None or df.empty or baseline is None:
        return []
    alpha, seed = _alpha_and_seed(run, card)
    out = []
    clauses = [c for c in clauses_for(run, card) if c.test != "holds"]
    taken: set[str] = set()  # the figures' file names so far, case folded (`_file_name`)
    variants = sorted(v for v in df["variant"].dropna().unique() if v != baseline)
    for clause in clauses:
        if clause.metric not in set(df["metric"]):
            continue
        for variant in variants:
            if clause.variant not in (None, variant):  # a verdict's clause is one variant's
                continue
            view = _plot(run, df, clause, variant, baseline, alpha, seed, folder, prefix, narrow=narrow, taken=taken)
            if view is not None:
                out.append(view)
    return out


def _alpha_and_seed(run: Run, card: Card | None) -> tuple[float, int]:
    """The level the figures' intervals are drawn at (the judged file's, else the card's, else 0.05) and the
    resampling seed (from the run's seal, 0 without one)."""
    alpha = card.win.alpha if card is not None and card.win is not None else 0.05
    alpha = float((run.judged_file.alpha if run.judged_file else None) or alpha)
    seal_root = run.manifest.seal_root if run.manifest else ""
    try:
        seed = seed_from(seal_root)
    except ValueError:
        seed = 0
    return alpha, seed


def _plot(run: Run, df: Any, clause: ClauseRef, variant: str, baseline: str, alpha: float, seed: int, folder: Path,
          prefix: str, *, narrow: bool, taken: set[str]) -> dict[str, Any] | None:
    """One clause's figure for one variant (and its narrow copy), and what the page says of it; None when no
    fixture has a difference or no interval can be drawn."""
    import numpy as np

    from benchcard.stats import paired as stats

    metric, fixture = clause.metric, clause.fixture
    fixtures = sorted(df[(df["metric"] == metric)]["fixture"].dropna().unique())
    if fixture:
        fixtures = [f for f in fixtures if f == fixture]
    base = _grid(df, metric, baseline, fixtures)
    var = _grid(df, metric, variant, fixtures)
    d = _fixture_means(var) - _fixture_means(base)
    keep = ~np.isnan(d)
    if not keep.any():
        return None
    band = verdict_band(run, clause, variant)
    try:
        floor = stats.noise_floor(base, alpha)
        if band is None:
            band = paired_band(stats.paired_gap(base, var, alpha, seed=seed))
    except ValueError:
        return None
    name = _file_name(f"{run.run_id}-{variant}-{metric}" + (f"-{fixture}" if fixture else ""), taken) + ".svg"
    kept = [f for f, k in zip(fixtures, keep, strict=True) if k]
    _draw(folder / name, kept, d[keep].tolist(), band, floor.value, metric, variant, baseline, clause)
    narrow_name = name.removesuffix(".svg") + "-narrow.svg"
    if narrow:
        _draw(folder / narrow_name, kept, d[keep].tolist(), band, floor.value, metric, variant, baseline,
              clause, narrow=True)
    return (_view(band, prefix + name, prefix + narrow_name if narrow else None, metric, variant,
                  baseline, clause, floor.value, run.judged_file is not None, _no_band(base))
            | {"n": int(keep.sum()), "skipped": [f for f, k in zip(fixtures, keep, strict=True) if not k]})


def _no_band(base: Any) -> str:
    """Why no grey band is drawn when the baseline's run-to-run spread is infinite (`stats.noise_floor`): one
    repetition, or fewer than two fixtures scored in every repetition. The caption read "Grey band: … ±∞" with no
    band on the figure."""
    import numpy as np

    if base.ndim < 2 or base.shape[1] < 2:
        return "the run-to-run spread cannot be measured with one repetition"
    whole = int((~np.isnan(base).any(axis=1)).sum())
    return ("the run-to-run spread cannot be measured: it needs two fixtures scored in every repetition of the "
            f"baseline, and {whole} {'is' if whole == 1 else 'are'}")


def _view(band: Band, src: str, src_narrow: str | None, metric: str, variant: str, baseline: str,
          clause: ClauseRef, floor: float, judged: bool, no_band: str) -> dict[str, Any]:
    """What the page says of one figure: its alt text and the caption's figures, naming the interval drawn, and
    why no grey band is drawn where the baseline's run-to-run spread is unmeasured (`no_band`, said only then)."""
    band_text = f"±{fixed(floor, missing=DASH)}" if math.isfinite(floor) else f"not measured ({no_band})"
    level = f"{1 - band.alpha:.0%}"
    ci = (f"no interval ({band.no_interval}; sign-flip p {fixed(band.p_signflip, missing=DASH)})" if band.no_interval
          else interval(band.ci_low, band.ci_high, missing=DASH))
    alt = (f"{metric}, {variant} minus {baseline}, per fixture: gap {fixed(band.gap, missing=DASH)}, {level} CI {ci}, "
           f"{band.name}{'' if judged or band.kind == CALIBRATED else ' (no verdict yet)'}; baseline run-to-run spread "
           f"{band_text}")
    bound = ({"side": band.bound[0], "value": fixed(band.bound[1], missing=DASH)} if band.bound else None)
    return {"src": src, "src_narrow": src_narrow, "better": "lower" if good_sign(metric, clause) < 0 else "higher",
            "alt": alt, "metric": metric, "variant": variant, "gap": fixed(band.gap, missing=DASH), "ci": ci,
            "no_interval": band.no_interval, "p_signflip": fixed(band.p_signflip, missing=DASH),
            "floor": fixed(floor, missing=DASH), "no_band": None if math.isfinite(floor) else no_band,
            "level": level, "calibrated": band.kind == CALIBRATED,
            "judged": judged, "bound": bound, "truncated": band.truncated,
            "bounded_gaps": [fixed(x, missing=DASH) for x in band.bounded_gaps] if band.bounded_gaps else None}


def guard_line(clause: ClauseRef) -> float | None:
    """Where a guard's margin is drawn (−margin for not_falls), None for a clause without one."""
    margin = clause.margin
    if not isinstance(margin, int | float) or isinstance(margin, bool):
        return None
    return (-1.0 if clause.test == "not_falls" else 1.0) * float(margin)


def x_span(diffs: Sequence[float], gap: Band, floor: float, guard: float | None) -> tuple[float, float]:
    """The x axis: every fixture's difference, the interval, the grey band, 0 and the guard's margin line on it."""
    finite = [x for x in (gap.ci_low, gap.ci_high, -floor, floor) if math.isfinite(x)]
    points = [*diffs, *finite, 0.0, *([guard] if guard is not None else [])]
    lo, hi = min(points), max(points)
    pad = max(0.05, (hi - lo) * 0.08)
    return lo - pad, hi + pad


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def _file_name(text: str, taken: set[str]) -> str:
    """A figure's file name (without `.svg`) for `text` (run, variant, metric), unique among `taken` even where
    case is not told apart (macOS, Windows), and short on every disk: the slug as it was when it is `text` itself,
    new and at most `MAX_NAME_BYTES`, else its first `MAX_NAME_BYTES` and 8 hex digits of `text`'s digest
    (`_util/hashing.digest`). Slugs alone drew variants `B B` and `B_B` into one file, and `A` and `a` into one on
    a case-insensitive disk, so one variant's figure showed the other's; a variant of 240 letters made a name no
    file system holds, and `site` ended in 'File name too long'."""
    name = _slug(text)
    if (name != text or len(name) > MAX_NAME_BYTES
            or {name.casefold(), f"{name}-narrow".casefold()} & taken):
        name = f"{name[:MAX_NAME_BYTES]}-{digest(text).removeprefix('sha256:')[:8]}"
    taken.update({name.casefold(), f"{name}-narrow".casefold()})
    return name


def _draw(path: Path, fixtures: Sequence[str], diffs: Sequence[float], gap: Band, floor: float, metric: str,
          variant: str, baseline: str, clause: ClauseRef, narrow: bool = False) -> None:
    """The figure's SVG at `path`. A figure drawn before in this process from the same inputs (each float by its
    repr, so -0.0 is not 0.0) is written again from its bytes: the SVG is deterministic (`svg.hashsalt`, no date),
    and drawing one costs matplotlib about a fifth of a CPU-second, for each figure of a site built again
    (`site --serve`, `view`, and a test process building the same runs many times)."""
    key = repr((tuple(fixtures), tuple(diffs), gap, floor, metric, variant, baseline, clause, narrow))
    svg = _DRAWN.get(key)
    if svg is not None:
        path.write_bytes(svg)
        return
    # each name as it shows (`names.visible`): a card's names are refused when they hold what does not show, but
    # another tool's log (compare) may name a sample or a metric with ESC, which matplotlib wrote raw into the SVG
    # (no XML reader then reads it) and whose missing glyph it warned about, raw, on the terminal
    _render(path, [visible(str(f)) for f in fixtures], diffs, gap, floor, visible(metric), visible(variant),
            visible(baseline), clause, narrow)
    if len(_DRAWN) >= DRAWN_KEPT:
        _DRAWN.clear()
    _DRAWN[key] = path.read_bytes()


def _render(path: Path, fixtures: Sequence[str], diffs: Sequence[float], gap: Band, floor: float, metric: str,
            variant: str, baseline: str, clause: ClauseRef, narrow: bool) -> None:
    """Draw the figure with matplotlib (`_draw`)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    font = NARROW_FONT if narrow else 10.5
    small = font if narrow else 9.5  # the legend: on the phone figure no smaller than the rest
    with matplotlib.rc_context(figure_rc(font)):
        n = len(fixtures)
        named = n <= MAX_NAMED
        # text stays text (svg.fonttype none), so that its size on screen can be measured and read
        fig = Figure(figsize=(NARROW_IN if narrow else WIDE_IN, (2.6 if narrow else 2.2) + 0.24 * min(n, MAX_NAMED)),
                     layout="constrained")
        ax = fig.add_subplot()
        ys = list(range(n))
        handles: list[Any] = []
        if math.isfinite(floor):
            ax.axvspan(-floor, floor, color="#9a9a9a", alpha=0.25, lw=0)
            handles.append(Patch(color="#9a9a9a", alpha=0.4, label=f"baseline run-to-run spread ±{floor:.3f}"))
        if math.isfinite(gap.ci_low) and math.isfinite(gap.ci_high):
            ax.axvspan(gap.ci_low, gap.ci_high, color="#3b6fd8", alpha=0.18, lw=0)
            which = "verdict's" if gap.kind == CALIBRATED else "paired t"
            handles.append(Patch(color="#3b6fd8", alpha=0.35,
                                 label=f"{which} {1 - gap.alpha:.0%} CI [{gap.ci_low:.3f}, {gap.ci_high:.3f}]"))
        elif gap.no_interval:  # never a band of zero width: zero spread is not certainty
            handles.append(Patch(fill=False, lw=0, label=f"no interval: {gap.no_interval.split(':')[0]} "
                                 f"(sign-flip p {gap.p_signflip:.3f})"))
        else:  # an end nothing bounds (one repetition, one fixture): no band to draw, the words the verdict uses
            which = "verdict's" if gap.kind == CALIBRATED else "paired t"
            handles.append(Patch(fill=False, lw=0, label=f"{which} {1 - gap.alpha:.0%} CI "
                                 f"{interval(gap.ci_low, gap.ci_high)}"))
        ax.axvline(0.0, color="#222222", lw=0.8)
        handles.append(ax.axvline(gap.gap, color="#1f4bb0", lw=1.6, label=f"gap {gap.gap:.3f}"))
        guard = guard_line(clause)
        if guard is not None:
            handles.append(ax.axvline(guard, color="#b3261e", lw=1.2, ls="--", label=f"guard margin {guard:+.2f}"))
        # blue where the variant did better on this metric, red where it did worse (lower is better for some)
        sign = good_sign(metric, clause)
        colours = ["#1f4bb0" if d * sign > 0 else ("#b3261e" if d * sign < 0 else "#555555") for d in diffs]
        ax.scatter(diffs, ys, c=colours, s=28 if named else 8, zorder=3)
        if named:
            ax.set_yticks(ys, list(fixtures))
        else:  # too many to name: rows in the run's order, said so on the axis
            ax.set_yticks([])
            ax.set_ylabel(f"{n:,} fixtures, in the run's order", fontsize=small)
        ax.invert_yaxis()
        ax.set_xlabel(f"{variant} − {baseline}, mean over repetitions")
        ax.set_title(f"{metric}: per-fixture differences" if narrow else
                     f"{metric}: per-fixture paired differences", loc="left", fontsize=font + 1.0)
        ax.set_xlim(*x_span(diffs, gap, floor, guard))
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6, symmetric=False))
        ax.grid(axis="x", color="#dddddd", lw=0.6)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        fig.legend(handles=handles, loc="outside lower center", ncol=1 if narrow else 2, frameon=False, fontsize=small,
                   columnspacing=1.2, handlelength=1.6)
        fig.savefig(path, format="svg", metadata={"Date": None})
