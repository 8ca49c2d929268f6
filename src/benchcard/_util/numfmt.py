"""How a number reads wherever benchcard prints one (verdict text, pages, `plan`, the judge's figures): one of
each formatter, so a figure, a p-value, an interval or a cost reads the same on the terminal and on a page.

A missing figure is `missing` (the terminal's `n/a`, a page's `—`): None, NaN, or anything that is not a
number (true and false are not numbers). A negative figure has a true minus sign (U+2212) unless `minus` says
otherwise (`plan` and the judge's figures have always printed `-`).
"""

from __future__ import annotations

import math
import numbers

MINUS = "\u2212"
DASH = "—"  # a page's missing figure
#: A figure that could not be measured (a sequential look's statistic before any gap has an interval), said as
#: such on the terminal and the pages, never as a measured 0.
UNMEASURED = "none"


def real(x: object) -> float | None:
    """`x` as a float when it is a number (numpy's included) and not NaN; None otherwise."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return None
    value = float(x)
    return None if math.isnan(value) else value


def fixed(x: object, digits: int = 3, *, signed: bool = False, missing: str = "n/a", minus: str = MINUS) -> str:
    """`x` to `digits` places (`signed`: with its sign, `+0.120`); an infinity as `∞` or `−∞`."""
    value = real(x)
    if value is None:
        return missing
    if math.isinf(value):
        return "∞" if value > 0 else f"{minus}∞"
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return text.replace("-", minus)


def interval(lo: object, hi: object, *, digits: int = 3, missing: str = "n/a") -> str:
    """`[lo, hi]`, each a `fixed` figure."""
    return f"[{fixed(lo, digits, missing=missing)}, {fixed(hi, digits, missing=missing)}]"


def written_interval(pair: object, *, digits: int = 3, missing: str = "n/a") -> str:
    """An interval as verdict.json or a ledger row holds it, `[lo, hi]`, in the words the verdict's sentences
    use: an end written null is one nothing bounds (it was infinite when computed: one repetition, one
    fixture, a count's cut-off cells; strict JSON has no infinity) and reads `−∞` or `∞`; `missing` when there
    is no interval at all (null: every fixture moved alike)."""
    if not isinstance(pair, list | tuple) or len(pair) != 2:
        return missing
    lo, hi = pair
    return interval(-math.inf if lo is None else lo, math.inf if hi is None else hi, digits=digits, missing=missing)


def written_halfwidth(x: object, *, digits: int = 3, missing: str = "n/a") -> str:
    """A ± half-width as verdict.json or a ledger row holds it (a clause's run term, `noise_floor`), read as
    written_interval reads an end: null is a half-width nothing bounds (infinite when computed: one repetition,
    or too few fixtures scored in every repetition) and reads `±∞`, on the terminal, the pages and the plots
    alike; `missing` only where there is no figure at all (an older file without it, a metric with no gap)."""
    if x is None:
        return f"±{fixed(math.inf)}"
    value = real(x)
    return missing if value is None else f"±{fixed(value, digits)}"


def p_value(x: object, digits: int = 4, *, missing: str = "n/a") -> str:
    """A p-value to `digits` places, or `< 0.0001` below the smallest it can show."""
    value = real(x)
    if value is None:
        return missing
    floor = 10.0 ** -digits
    return f"< {floor:.{digits}f}" if value < floor else f"{value:.{digits}f}"


def p_equals(x: object) -> str:
    """`= 0.0123` or `< 0.0001`, to follow a `p`."""
    text = p_value(x)
    return text if text.startswith("<") else f"= {text}"


def level(alpha: float) -> str:
    """The confidence level of `alpha`, e.g. `95%`."""
    return f"{100 * (1 - alpha):g}%"


def money(x: object, *, missing: str = "—") -> str:
    """Dollars: `$0`, cents, or four places below a cent."""
    value = real(x)
    if value is None:
        return missing
    if value == 0:
        return "$0"
    return f"${value:.4f}" if value < 0.01 else f"${value:.2f}"


def dollars(x: object, digits: int = 4, *, missing: str = "n/a") -> str:
    """A cost on the terminal (a run's, a judge's, a plan's): dollars to `digits` places, thousands grouped."""
    value = real(x)
    return missing if value is None else f"${value:,.{digits}f}"


def millis(x: object, *, missing: str = "—") -> str:
    """Milliseconds, rounded, with thousands separators."""
    value = real(x)
    return missing if value is None else f"{round(value):,} ms"
