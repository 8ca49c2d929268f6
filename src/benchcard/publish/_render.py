"""How figures read on a page, and the Jinja2 environment that renders every page (autoescaping on)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from benchcard._util.numfmt import DASH, fixed, interval, millis, money, p_value, written_halfwidth, written_interval
from benchcard._util.text import balanced_isolates, displayable, reorders
from benchcard._util.version import __version__
from benchcard.publish._runs import Run, number
from benchcard.records.rows import RIG_SEP
from benchcard.records.verdictfigures import measured_bootstrap


def fmt_value(value: Any) -> str:
    """Any figure from a verdict or ledger row, compactly: numbers to 3 places, pairs as intervals."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return fixed(value, missing=DASH)
    if isinstance(value, list | tuple) and len(value) == 2 and all(number(v) is not None for v in value):
        return interval(value[0], value[1], missing=DASH)
    if isinstance(value, Mapping | list | tuple) and not value:  # e.g. no run means when nothing was scored
        return "—"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {fmt_value(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(fmt_value(v) for v in value)
    return str(value)


def unscored_words(counts: Mapping[str, int]) -> str:
    """Why cells have no score, each kind in its own words ("2 cut off at max_tokens, 1 failed in transport"):
    a cut-off output is the model's answer, stopped by the card's limit, never a failure of transport."""
    parts = []
    if counts.get("truncated"):
        parts.append(f"{counts['truncated']} cut off at max_tokens")
    if counts.get("failed"):
        parts.append(f"{counts['failed']} failed in transport")
    other = sum(n for status, n in counts.items() if status not in ("ok", "truncated", "failed"))
    if other:
        parts.append(f"{other} with no output")
    return ", ".join(parts)


#: A scored run's badge word and its class. "failed" alone read like a failure of transport (which the same table
#: says as "failed in transport"), so each is followed by what passed: "failed: 0 of 5 pass", the words
#: `benchcard verdict` prints ("0 of 5 pass (score 1)").
BADGES = {"passed": "pass", "failed": "fail", "partial": "partial"}
PASS_TOLERANCE = 1e-9  # a repetition passes when it scored 1 (the verdict's `passes`, up to float rounding)


def score_badge(run: Run) -> str:
    """What a run's Score cell says beside its mean: `failed: 0 of 5 pass` (every scored repetition failed the
    scorer), `partial: 3 of 5 pass`, `passed: 5 of 5 pass`, a pass being a repetition that scored 1; with no
    score, why (`5 failed in transport`, `2 cut off at max_tokens`); a published run's recorded status, with its
    count when it records its one output's score."""
    values = run.score_values
    if not values:
        return unscored_words(run.status_counts) or "not scored"
    score = sum(values) / len(values)
    word = "passed" if score >= 1.0 else ("failed" if score <= 0.0 else "partial")
    if run.published is not None and run.published.get("status"):
        word = str(run.published["status"])
        if word not in BADGES or "output" not in run.published:
            return word
    passes = sum(1 for v in values if abs(v - 1.0) <= PASS_TOLERANCE)
    return f"{word}: {passes} of {len(values)} pass"


def paragraphs(text: Any) -> list[str]:
    """Card prose split at blank lines."""
    if text is None:
        return []
    return [p.strip() for p in re.split(r"\n\s*\n", str(text)) if p.strip()]


def prose(value: Any) -> dict[str, Any]:
    """A `page:` section as the template shows it: paragraphs, a bullet list, or links."""
    if value is None:
        return {"paragraphs": [], "entries": [], "links": []}
    if isinstance(value, str):
        return {"paragraphs": paragraphs(value), "entries": [], "links": []}
    if isinstance(value, Mapping):
        value = [value]
    if isinstance(value, list):
        items, links = [], []
        for item in value:
            if isinstance(item, Mapping):
                title = str(item.get("title") or item.get("name") or item.get("url") or "")
                url = safe_url(item.get("url") or item.get("href"))
                links.append({"title": title, "url": url, "note": str(item.get("note") or "")})
            else:
                items.append(str(item))
        return {"paragraphs": [], "entries": items, "links": links}
    return {"paragraphs": [str(value)], "entries": [], "links": []}


#: The most characters of one output a page shows: a long answer (8,000 tokens) whole, while one output of
#: megabytes, which a page would carry twice (the run's page and its twin) and a browser takes seconds to lay
#: out, is cut with a link to the raw file that holds it whole (hostile audit: a 5 MB output made 8 MB pages).
PAGE_OUTPUT_CHARS = 40_000


def page_output(text: str) -> tuple[str, int]:
    """An output as a page shows it, and how many of its characters the page leaves to the raw file (0: none)."""
    if len(text) <= PAGE_OUTPUT_CHARS:
        return text, 0
    return text[:PAGE_OUTPUT_CHARS], len(text) - PAGE_OUTPUT_CHARS


SAFE_SCHEMES = ("http", "https", "mailto")


def safe_url(url: Any) -> str | None:
    """A link a card may carry, read as a browser reads it (WHATWG URL parsing): leading and trailing control
    characters and spaces are stripped and every tab and newline removed before the scheme is looked at, so
    `java\tscript:` is `javascript:`. Allowed: http, https and mailto, or a path relative to the page (not
    `//host` or `\\host`, which a browser takes to another site). Anything else is dropped."""
    if not isinstance(url, str):
        return None
    text = re.sub(r"[\t\n\r]", "", url.strip("".join(map(chr, range(0x21)))))
    if not text or re.search(r"[\x00-\x1f\x7f]", text):
        return None
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", text)
    if scheme:
        return text if scheme.group(1).lower() in SAFE_SCHEMES else None
    if text[:2].replace("\\", "/") == "//" or text.startswith("\\"):
        return None
    return text


def json_ld(obj: Any) -> Markup:
    """JSON for a `<script type="application/ld+json">` element that nothing inside can close or break."""
    text = json.dumps(obj, ensure_ascii=False, indent=1)
    for char, code in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                       ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, code)
    return Markup(text)


def isolated(value: Any) -> Any:
    """Every `{{ … }}` of a page: text that could reorder what is beside it (a title holding a right-to-left
    override) is put in a `<bdi>`, so a reader sees the line around it in its order; other values as they are,
    so a page of plain text is byte for byte what it was. Attributes take `|plain`, and the `<title>`, alt text
    and options `|isolated_text`."""
    if isinstance(value, str) and not isinstance(value, Markup) and reorders(value):
        return Markup("<bdi>{}</bdi>").format(balanced_isolates(value))
    return value


def plain(value: Any) -> Markup:
    """A value escaped and not isolated, for where no element may go (an attribute) and for a `<pre>`'s text, a
    block whose bidi cannot reach beyond it and whose characters a reader copies exactly (no isolate added)."""
    return Markup.escape(value)


def joined(values: Any, sep: str) -> Markup:
    """A list of names or rig lines, each isolated on its own (`isolated`): one `<bdi>` around the whole list
    would let a right-to-left item reorder the items after it, and show the list in reverse order."""
    return Markup.escape(sep).join(isolated(str(v)) for v in values)


def rig(value: Any) -> Markup:
    """A rig line (`model · effort high · provider`), each part isolated on its own (`isolated`): the line is
    stored as one string, and one `<bdi>` around it let an override in the model's name reverse the provider."""
    return joined(str(value).split(RIG_SEP), RIG_SEP)


def rigs(values: Any, sep: str) -> Markup:
    """A list of rig lines, each shown as `rig` shows one."""
    return Markup.escape(sep).join(rig(v) for v in values)


def isolated_text(value: Any) -> Markup:
    """`plain`, and text that could reorder what follows it wrapped in Unicode's own isolate (U+2068 … U+2069),
    for where no element may go but the text is read: the `<title>`, an image's alt text, a list option."""
    text = str(value)
    return Markup.escape(f"\u2068{balanced_isolates(text)}\u2069" if reorders(text) else text)


class _KeptBytecode(jinja2.BytecodeCache):
    """The templates' compiled code, kept for the process: each build makes its own environment (its globals are
    its own), and compiling the templates again cost each build about a second of pure-Python Jinja under load.
    A bucket is found by the template's name and file and holds only code compiled from the same source (Jinja
    checks its checksum), by environments that `environment` makes alike."""

    def __init__(self) -> None:
        self._kept: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = self._kept.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._kept[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _KeptBytecode()


def environment() -> jinja2.Environment:
    """The Jinja2 environment of every page: package templates, autoescaping, strict undefined."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("benchcard.publish", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=isolated,
        bytecode_cache=_COMPILED,
    )
    env.filters.update(num=lambda x, digits=2: fixed(x, digits, missing=DASH), p=lambda x: p_value(x, 3, missing=DASH),
                       money=money, ms=millis, value=fmt_value, paras=paragraphs,
                       plain=plain, isolated_text=isolated_text, joined=joined, rig=rig,
                       rigs=rigs)
    env.globals["ledger_problem"] = None  # the chain's complaint, set by the build when the ledger does not verify
    env.globals["viewer"] = False  # `site --serve` builds with it on: a nav link to the side-by-side pages
    return env


def write_page(env: jinja2.Environment, out: Path, page: str, template: str, context: dict[str, Any]) -> str:
    """Render one page into the site; returns its path relative to the site root."""
    depth = page.count("/")
    context = {"root": "../" * depth, **context}
    html = env.get_template(template).render(version=__version__, **context)
    target = out / page
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(displayable(html), encoding="utf-8")
    return page


CLAUSE_KEYS = {"metric", "test", "fixture", "margin", "holds", "why", "reason", "passed", "ok", "equals",
               "clause", "status", "outcome", "text", "variant", "broken", "name"}
_FIGURE_NAMES = {
    "gap": "gap", "se": "se", "df": "df", "ci": "CI", "ci_low": "CI low", "ci_high": "CI high", "p": "p",
    "p_value": "p", "p_signflip": "sign-flip p", "noise_floor": "run term",
    "baseline_noise_floor": "baseline run-to-run spread", "nf": "noise floor",
    "upper": "upper bound", "upper_one_sided": "one-sided upper bound", "lower_one_sided": "one-sided lower bound",
    "wilson": "Wilson interval", "k": "k", "n": "n", "bootstrap": "bootstrap CI", "bootstrap_ci": "bootstrap CI",
    "ci_bootstrap": "bootstrap CI", "tost_p": "TOST p", "means": "means", "n_fixtures": "fixtures",
    "baseline_run_means": "baseline run means", "baseline_k": "baseline k", "baseline_n": "baseline n",
    "rate": "rate", "planned": "planned",
}
_P_KEYS = ("p", "p_value", "p_signflip", "tost_p")
#: A verdict's intervals whose ends are written null where nothing bounds them (shown ∓∞, as the verdict says).
_INTERVAL_KEYS = ("ci", "ci_bootstrap", "bounded_gaps")


def labelled_figures(obj: Mapping[str, Any], skip: Iterable[str] = (),
                     only: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """The figures of a clause or metric, labelled, in the order the verdict wrote them (or `only`'s order)."""
    skip = set(skip)
    keys = [k for k in only if k in obj] if only else list(obj)
    out = []
    for key in keys:
        value = measured_bootstrap(obj[key]) if key == "ci_bootstrap" else obj[key]
        if key == "noise_floor" and value is None and obj.get("gap") is not None and key not in skip:
            out.append(("run term", written_halfwidth(None)))  # written null: unmeasured, ±∞ as the terminal says
            continue
        if key in skip or value is None or (isinstance(value, str) and key in CLAUSE_KEYS):
            continue
        label = _FIGURE_NAMES.get(key, key.replace("_", " "))
        if key == "by_variant" and isinstance(value, Mapping):  # each variant's figures, labelled as one's are
            text = "; ".join(f"{variant}: " + ", ".join(f"{name} {figure}" for name, figure in labelled_figures(figs))
                             for variant, figs in value.items() if isinstance(figs, Mapping))
        else:
            text = (p_value(value, 3, missing=DASH) if key in _P_KEYS
                    else written_interval(value, missing=DASH) if key in _INTERVAL_KEYS
                    else written_halfwidth(value, missing=DASH) if key == "noise_floor" else fmt_value(value))
        out.append((label, text))
    return out
