"""`benchcard site`: static pages like the seeds, from cards/, keys/ and results/.

Nothing here needs a server or JavaScript: every link is relative, the one stylesheet is a local file, the plots
are SVG files next to the pages, and each run's raw files are copied into the site so that every "Evidence"
link works from `file://` as well as from any static host.

Every string that reaches a page (model outputs, card prose, verdict notes) goes through Jinja2 with
autoescaping on; the only markup built in Python is the JSON-LD block, which is escaped for a `<script>`
element by `json_ld` (no `<`, `>` or `&` survives as itself, so nothing can close the element).

Run folders are read tolerantly: a field the runner or the verdict did not write shows as a dash, a line of a
JSONL file cut short by a killed run is skipped (the raw file is still published unedited), and a folder that
is not a run (no manifest.json) is left out.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from . import __version__
from .card import VARIANT_SLOT, Card, load_cards
from .errors import BenchcardError, LedgerError
from .project import Project
from .scoring import ExactSpec, FieldsScoring, RulesSpec

MARKER = ".benchcard-site"
"""A file written at the top of every built site: only a folder holding it may be emptied and rebuilt."""

RUN_FILES = ("manifest.json", "outputs.jsonl", "scores.jsonl", "verdict.json", "table.csv")
RUN_DIRS = ("sealed", "grades")
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
SCHEMA_ORG = "https://schema.org"


@dataclass(frozen=True)
class SiteReport:
    """What a build wrote: the output folder, every page (relative paths) and how many runs it shows."""

    out_dir: Path
    pages: tuple[str, ...]
    cards: int
    runs: int
    plots: int
    skipped: tuple[str, ...] = ()


# ----------------------------------------------------------------------------------------------- reading


@dataclass
class Run:
    """One run of one card version: a folder under results/, or a run the card's history records."""

    card: str
    version: int
    run_id: str
    folder: Path | None
    manifest: dict[str, Any] = field(default_factory=dict)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)
    assignment: list[dict[str, Any]] = field(default_factory=list)
    verdict: dict[str, Any] | None = None
    table: Any = None  # pandas.DataFrame of table.csv, when the verdict wrote one
    published: Mapping[str, Any] | None = None  # a `history[].published_runs` entry
    ledger_row: dict[str, Any] | None = None

    @property
    def href(self) -> str:
        """The evidence page, relative to the site root."""
        return f"runs/{self.card}/v{self.version}/{self.run_id}/index.html"

    @property
    def site_dir(self) -> str:
        return f"runs/{self.card}/v{self.version}/{self.run_id}"

    @property
    def started(self) -> str:
        if self.published is not None:
            return str(self.published.get("date") or "")
        return str(self.manifest.get("started_at") or _date_from_run_id(self.run_id) or "")

    @property
    def date(self) -> str:
        return self.started[:10]

    @property
    def rig(self) -> dict[str, Any]:
        rig = self.manifest.get("rig")
        return rig if isinstance(rig, dict) else {}

    @property
    def model(self) -> str:
        if self.published is not None:
            return str(self.published.get("model") or "")
        return str(self.rig.get("model") or self.manifest.get("model") or "")

    @property
    def model_name(self) -> str:
        if self.published is not None:
            return str(self.published.get("model_name") or "")
        return str(self.rig.get("name") or "")

    @property
    def rig_line(self) -> str:
        line = self.rig.get("line")
        if line:
            return str(line)
        if self.ledger_row and self.ledger_row.get("rig"):
            return str(self.ledger_row["rig"])
        parts = [self.model] if self.model else []
        if self.rig.get("effort"):
            parts.append(f"effort {self.rig['effort']}")
        surface = self.rig.get("surface") or self.rig.get("provider")
        if surface:
            parts.append(str(surface))
        return " · ".join(parts)

    @property
    def score_values(self) -> list[float]:
        if self.published is not None:
            s = _number(self.published.get("score"))
            return [] if s is None else [s]
        return [v for v in (_number(r.get("score")) for r in self.scores) if v is not None]

    @property
    def score(self) -> float | None:
        values = self.score_values
        return sum(values) / len(values) if values else None

    @property
    def status_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for row in self.outputs:
            status = str(row.get("status") or "unknown")
            counts[status] = counts.get(status, 0) + 1
        if not counts and isinstance(self.manifest.get("counts"), dict):
            counts = {str(k): int(v) for k, v in self.manifest["counts"].items() if isinstance(v, int) and v}
        return counts

    @property
    def unscored(self) -> int:
        """Cells that were truncated or failed in transport: recorded, never scored as a wrong answer."""
        return sum(n for status, n in self.status_counts.items() if status != "ok")

    @property
    def cost(self) -> float | None:
        if self.published is not None:
            return _number(self.published.get("cost"))
        values = [v for v in (_number(r.get("cost")) for r in self.outputs) if v is not None]
        if values:
            return sum(values)
        return _number((self.ledger_row or {}).get("cost")) if self.ledger_row else None

    @property
    def latency_ms(self) -> float | None:
        """Median latency of the run's calls."""
        if self.published is not None:
            return _number(self.published.get("latency_ms"))
        values = [v for v in (_number(r.get("latency_ms")) for r in self.outputs) if v is not None]
        return float(statistics.median(values)) if values else None

    @property
    def finding(self) -> str:
        for source in (self.verdict, self.ledger_row):
            if source and source.get("finding"):
                return str(source["finding"])
        return ""

    @property
    def outcome(self) -> str:
        for source in (self.verdict, self.ledger_row):
            if source and source.get("outcome"):
                return str(source["outcome"])
        return ""


def _date_from_run_id(run_id: str) -> str | None:
    m = re.match(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z", run_id)
    if not m:
        return None
    y, mo, d, h, mi, s = m.groups()
    return f"{y}-{mo}-{d}T{h}:{mi}:{s}Z"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _read_json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSONL file; a line that does not parse (a run killed mid-write) is skipped, not fatal."""
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _read_table(path: Path) -> Any:
    if not path.is_file():
        return None
    import pandas as pd

    try:
        df = pd.read_csv(path, dtype={"fixture": str, "variant": str, "metric": str, "rig": str})
    except (OSError, ValueError):
        return None
    if not {"fixture", "variant", "metric", "value"} <= set(df.columns):
        return None
    df["value"] = pd.to_numeric(df["value"], errors="coerce")
    return df


def read_ledger(project: Project) -> tuple[list[dict[str, Any]], str | None]:
    """Every ledger row in order, and the chain check's complaint (None when the chain verifies).

    A broken chain does not stop the build: the page shows the rows and says plainly that they fail
    verification, which is what a reader needs to know.
    """
    from . import ledger as ledger_mod

    rows = ledger_mod.read(project)
    try:
        ledger_mod.verify(project)
    except LedgerError as exc:
        return rows, str(exc)
    return rows, None


def read_runs(project: Project, skipped: list[str]) -> list[Run]:
    """Every run folder under results/<card>/v<N>/<run>/ that has a manifest."""
    runs: list[Run] = []
    root = project.results_dir
    if not root.is_dir():
        return runs
    for card_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for version_dir in sorted(p for p in card_dir.iterdir() if p.is_dir()):
            m = re.fullmatch(r"v(\d+)", version_dir.name)
            if not m:
                continue
            for run_dir in sorted(p for p in version_dir.iterdir() if p.is_dir()):
                manifest = _read_json(run_dir / "manifest.json")
                if manifest is None:
                    continue
                if not SAFE_NAME.match(run_dir.name) or not SAFE_NAME.match(card_dir.name):
                    skipped.append(f"{project.relative(run_dir)}: not a run id; left out")
                    continue
                runs.append(
                    Run(
                        card=card_dir.name,
                        version=int(m.group(1)),
                        run_id=run_dir.name,
                        folder=run_dir,
                        manifest=manifest,
                        outputs=_read_jsonl(run_dir / "outputs.jsonl"),
                        scores=_read_jsonl(run_dir / "scores.jsonl"),
                        assignment=_read_jsonl(run_dir / "sealed" / "assignment.jsonl"),
                        verdict=_read_json(run_dir / "verdict.json"),
                        table=_read_table(run_dir / "table.csv"),
                    )
                )
    return runs


def published_runs(card: Card, skipped: list[str]) -> list[Run]:
    """Runs a card's history records from before benchcard kept their folders (e.g. run 19 of a v2)."""
    out = []
    for entry in card.history:
        for item in entry.published_runs:
            run_id = str(item.get("run") or "")
            if not SAFE_NAME.match(run_id):
                skipped.append(f"{card.id}: history v{entry.version}: published run {run_id!r} has no usable id")
                continue
            out.append(Run(card=card.id, version=entry.version, run_id=run_id, folder=None, published=item))
    return out


# ------------------------------------------------------------------------------------------- formatting


def fmt_num(value: Any, digits: int = 2) -> str:
    x = _number(value)
    if x is None or math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    text = f"{x:.{digits}f}"
    return text.replace("-", "−") if text.startswith("-") else text


def fmt_p(value: Any) -> str:
    x = _number(value)
    if x is None or math.isnan(x):
        return "—"
    return "< 0.001" if x < 0.001 else f"{x:.3f}"


def fmt_money(value: Any) -> str:
    x = _number(value)
    if x is None:
        return "—"
    if x == 0:
        return "$0"
    return f"${x:.4f}" if x < 0.01 else f"${x:.2f}"


def fmt_ms(value: Any) -> str:
    x = _number(value)
    return "—" if x is None else f"{round(x):,} ms"


def fmt_value(value: Any) -> str:
    """Any figure from a verdict or ledger row, compactly: numbers to 3 places, pairs as intervals."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return fmt_num(value, 3)
    if isinstance(value, list | tuple) and len(value) == 2 and all(_number(v) is not None for v in value):
        return f"[{fmt_num(value[0], 3)}, {fmt_num(value[1], 3)}]"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {fmt_value(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(fmt_value(v) for v in value)
    return str(value)


def paragraphs(text: Any) -> list[str]:
    """Card prose split at blank lines."""
    if text is None:
        return []
    return [p.strip() for p in re.split(r"\n\s*\n", str(text)) if p.strip()]


def prose(value: Any) -> dict[str, Any]:
    """A `page:` section as the template shows it: paragraphs, a bullet list, or links."""
    if value is None:
        return {"paragraphs": [], "items": [], "links": []}
    if isinstance(value, str):
        return {"paragraphs": paragraphs(value), "items": [], "links": []}
    if isinstance(value, Mapping):
        value = [value]
    if isinstance(value, list):
        items, links = [], []
        for item in value:
            if isinstance(item, Mapping):
                title = str(item.get("title") or item.get("name") or item.get("url") or "")
                url = _safe_url(item.get("url") or item.get("href"))
                links.append({"title": title, "url": url, "note": str(item.get("note") or "")})
            else:
                items.append(str(item))
        return {"paragraphs": [], "items": items, "links": links}
    return {"paragraphs": [str(value)], "items": [], "links": []}


def _safe_url(url: Any) -> str | None:
    """A link a card may carry: http(s) or a relative path; anything else (javascript:, data:) is dropped."""
    if not isinstance(url, str) or not url.strip():
        return None
    text: str = url.strip()
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", text)
    if scheme and scheme.group(1).lower() not in ("http", "https"):
        return None
    return text


def json_ld(obj: Any) -> Markup:
    """JSON for a `<script type="application/ld+json">` element that nothing inside can close or break."""
    text = json.dumps(obj, ensure_ascii=False, indent=1)
    for char, code in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                       ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, code)
    return Markup(text)


# ------------------------------------------------------------------------------------------- the build


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("benchcard", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(num=fmt_num, p=fmt_p, money=fmt_money, ms=fmt_ms, value=fmt_value, paras=paragraphs)
    return env


def _prepare_out(project: Project, out_dir: Path) -> Path:
    """Empty the output folder, refusing any folder that benchcard did not build (or the project itself)."""
    out = out_dir.resolve()
    root = project.root.resolve()
    if out == root or out in root.parents:
        raise BenchcardError(f"--out {out_dir}: refusing to build the site over the project folder")
    for protected in (project.cards_dir, project.results_dir, root / "keys", root / "fixtures", root / "src"):
        p = protected.resolve()
        if out == p or p in out.parents:
            raise BenchcardError(f"--out {out_dir}: refusing to build the site inside {project.relative(p)}/")
    if out.exists():
        if not out.is_dir():
            raise BenchcardError(f"--out {out_dir}: exists and is not a folder")
        if any(out.iterdir()):
            if not (out / MARKER).is_file():
                raise BenchcardError(
                    f"--out {out_dir}: folder is not empty and was not built by benchcard site; "
                    "choose an empty or new folder"
                )
            shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("built by benchcard site; this folder is rebuilt on every build\n",
                              encoding="utf-8")
    return out


def build_site(project: Project, out_dir: Path) -> SiteReport:
    """Build every page into `out_dir` (emptied first if benchcard built it before)."""
    from .providers import load_config

    cards = load_cards(project)
    ledger, chain_problem = read_ledger(project)
    config = load_config(project.root)
    skipped: list[str] = []
    runs = read_runs(project, skipped)
    out = _prepare_out(project, out_dir)
    env = _environment()

    by_run = {(str(r.get("card")), str(r.get("run"))): r for r in ledger}
    for run in runs:
        run.ledger_row = by_run.get((run.card, run.run_id))
    cards_by_id = {c.id: c for c in cards}
    for card in cards:
        runs.extend(published_runs(card, skipped))
    runs.sort(key=lambda r: (r.started, r.run_id))

    static = Path(__file__).parent / "static" / "style.css"
    shutil.copyfile(static, out / "style.css")

    pages: list[str] = []
    plots = 0
    for run in runs:
        card_obj = cards_by_id.get(run.card)
        _copy_run(run, out)
        pages.append(_write(env, out, run.href, "run.html", _run_context(run, card_obj)))

    summaries = []
    for card in cards:
        card_runs = [r for r in runs if r.card == card.id]
        page = f"cards/{card.id}/index.html"
        if card.is_ab:
            context, n_plots = _ab_context(card, card_runs, project, out, config)
            plots += n_plots
            pages.append(_write(env, out, page, "runcard.html", context))
        else:
            pages.append(_write(env, out, page, "probe.html", _probe_context(card, card_runs, config)))
        summaries.append(_summary(card, card_runs, ledger))

    ledger_page = _ledger_context(ledger, runs, cards_by_id, chain_problem)
    pages.append(_write(env, out, "ledger.html", "ledger.html", ledger_page))
    pages.append(_write(env, out, "index.html", "index.html",
                        {"root": "", "cards": summaries, "ledger_rows": len(ledger), "title": "Cards"}))
    return SiteReport(out_dir=out, pages=tuple(pages), cards=len(cards), runs=len(runs), plots=plots,
                      skipped=tuple(skipped))


def _write(env: jinja2.Environment, out: Path, page: str, template: str, context: dict[str, Any]) -> str:
    depth = page.count("/")
    context = {"root": "../" * depth, **context}
    html = env.get_template(template).render(version=__version__, **context)
    target = out / page
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html, encoding="utf-8")
    return page


def _run_dirs(run: Run) -> tuple[str, ...]:
    """The folders of a run that are published: an ab run's sealed/ (which variant made which output, and the
    request bodies that show it) only once the verdict has unblinded the run."""
    if run.manifest.get("kind") == "ab" and run.verdict is None:
        return tuple(d for d in RUN_DIRS if d != "sealed")
    return RUN_DIRS


def _copy_run(run: Run, out: Path) -> None:
    """The run's raw files, byte for byte, into the site; a published run gets its recorded entry."""
    dest = out / run.site_dir
    dest.mkdir(parents=True, exist_ok=True)
    if run.folder is None:
        record = dict(run.published or {})
        (dest / "published.json").write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n",
                                             encoding="utf-8")
        return
    for name in RUN_FILES:
        if (run.folder / name).is_file():
            shutil.copyfile(run.folder / name, dest / name)
    for name in _run_dirs(run):
        if (run.folder / name).is_dir():
            shutil.copytree(run.folder / name, dest / name, dirs_exist_ok=True)


def _run_files(run: Run) -> list[dict[str, str]]:
    """Links (relative to the evidence page) to every raw file copied for a run."""
    if run.folder is None:
        return [{"name": "published.json", "href": "published.json"}]
    files = [{"name": n, "href": n} for n in RUN_FILES if (run.folder / n).is_file()]
    for d in _run_dirs(run):
        folder = run.folder / d
        if folder.is_dir():
            for p in sorted(folder.rglob("*")):
                if p.is_file():
                    rel = p.relative_to(run.folder).as_posix()
                    files.append({"name": rel, "href": rel})
    return files


# ----------------------------------------------------------------------------------------- probe pages


def _probe_row(run: Run, root: str) -> dict[str, Any]:
    score = run.score
    counts = run.status_counts
    if score is None:
        badge = "not scored" if not run.unscored else ", ".join(f"{n} {s}" for s, n in sorted(counts.items())
                                                                if s != "ok")
    elif run.published is not None and run.published.get("status"):
        badge = str(run.published["status"])
    else:
        badge = "passed" if score >= 1.0 else ("failed" if score <= 0.0 else "partial")
    note = ""
    if score is not None and run.unscored:
        note = f"{run.unscored} of {sum(counts.values())} cells not scored (transport)"
    return {
        "model": run.model,
        "model_name": run.model_name,
        "score": fmt_num(score),
        "badge": badge,
        "badge_class": {"passed": "pass", "failed": "fail", "partial": "partial"}.get(badge, "na"),
        "note": note,
        "cost": fmt_money(run.cost),
        "latency": fmt_ms(run.latency_ms),
        "date": run.date or "—",
        "href": root + run.href,
        "run_id": run.run_id,
    }


def _version_groups(card: Card, runs: Sequence[Run], root: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    current = [_probe_row(r, root) for r in runs if r.version == card.version]
    older = []
    notes = {h.version: h.note for h in card.history}
    for version in sorted({r.version for r in runs if r.version != card.version}, reverse=True):
        group = [r for r in runs if r.version == version]
        scores = [s for s in (r.score for r in group) if s is not None]
        older.append({
            "version": version,
            "superseded": version < card.version,
            "count": len(group),
            "mean": fmt_num(sum(scores) / len(scores)) if scores else "—",
            "note": notes.get(version, ""),
            "rows": [_probe_row(r, root) for r in group],
        })
    return current, older


def _scoring_view(card: Card) -> dict[str, Any]:
    spec = card.scoring
    if isinstance(spec, ExactSpec):
        how = ["surrounding whitespace ignored" if spec.trim else "whitespace significant"]
        if not spec.case_sensitive:
            how.append("case-insensitive")
        return {"method": "exact", "expected": spec.expected, "how": ", ".join(how)}
    if isinstance(spec, RulesSpec):
        rules = [{"id": r.id, "kind": "must match" if r.kind == "must_match" else "must NOT match",
                  "pattern": r.pattern, "why": r.why} for r in spec.rules]
        return {"method": "rules", "rules": rules}
    assert isinstance(spec, FieldsScoring)
    return {"method": "fields", "fields": list(spec.fields), "abstain_field": spec.abstain_field}


def _examples_view(card: Card) -> list[dict[str, Any]]:
    out = []
    for ex in card.examples:
        if ex.expect == "pass":
            expect = "must score 1.00"
        elif ex.expect == "fail":
            expect = ""
        else:
            assert isinstance(ex.expect, Mapping)
            expect = "expects " + ", ".join(f"{k} = {fmt_value(v)}" for k, v in ex.expect.items())
        out.append({"label": ex.label, "expect": expect, "pass": ex.expect == "pass", "output": ex.output,
                    "fixture": ex.fixture})
    return out


def _history_view(card: Card) -> list[dict[str, Any]]:
    out = []
    for h in sorted(card.history, key=lambda h: h.version, reverse=True):
        changes = []
        for name, value in h.changes.items():
            if name == "prompt" and isinstance(value, Mapping):
                for role in ("system", "user"):
                    if value.get(role) is not None:
                        changes.append({"label": f"prompt · {role} at v{h.version}", "text": str(value[role])})
            else:
                changes.append({"label": f"{name} at v{h.version}",
                                "text": json.dumps(value, indent=2, ensure_ascii=False, default=str)})
        out.append({"version": h.version, "current": h.version == card.version, "date": h.date or "",
                    "note": h.note, "changes": changes})
    return out


def _params_view(card: Card) -> list[tuple[str, str]]:
    out = [(k, json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v) for k, v in card.params.items()]
    if card.rig.effort:
        out.append(("effort", card.rig.effort))
    if card.repetitions != 1:
        out.append(("repetitions", str(card.repetitions)))
    return out


def _curl(card: Card, config: Mapping[str, Any], variant: str | None = None, fixture: str | None = None) -> str:
    from .curl import curl_command

    try:
        return curl_command(card, dict(config), variant=variant, fixture=fixture)
    except BenchcardError as exc:
        return f"# cannot build the request: {exc}"


def _dataset(card: Card, runs: Sequence[Run], page_root: str) -> Markup | None:
    """schema.org Dataset JSON-LD, only when the page shows real runs."""
    if not runs:
        return None
    dates = sorted(r.date for r in runs if r.date)
    measured = ["score"]
    if card.is_ab and card.win is not None:
        measured = list(dict.fromkeys(c.metric for c in card.win.clauses))
    data: dict[str, Any] = {
        "@context": SCHEMA_ORG,
        "@type": "Dataset",
        "name": f"{card.title} (v{card.version})" if card.title else card.id,
        "description": card.summary or card.question or card.variable or card.title,
        "identifier": card.id,
        "version": str(card.version),
        "keywords": [k for k in (card.category, card.kind) if k],
        "isAccessibleForFree": True,
        "variableMeasured": measured,
        "measurementTechnique": {"exact": "exact match", "rules": "regular-expression rules",
                                 "fields": "field extraction scored against an answer key"}[
            _scoring_view(card)["method"]],
        "distribution": [
            {"@type": "DataDownload", "encodingFormat": "application/jsonl", "name": f"run {r.run_id}",
             "contentUrl": page_root + r.site_dir + ("/outputs.jsonl" if r.folder else "/published.json")}
            for r in runs
        ],
    }
    if dates:
        data["dateModified"] = dates[-1]
        data["temporalCoverage"] = dates[0] if dates[0] == dates[-1] else f"{dates[0]}/{dates[-1]}"
    return json_ld(data)


def _probe_context(card: Card, runs: Sequence[Run], config: Mapping[str, Any]) -> dict[str, Any]:
    root = "../../"
    current, older = _version_groups(card, runs, root)
    dates = sorted(r.date for r in runs if r.date)
    messages = card.messages()
    return {
        "root": root,
        "card": card,
        "last_run": dates[-1] if dates else "",
        "current": current,
        "older": older,
        "messages": messages,
        "scoring": _scoring_view(card),
        "examples": _examples_view(card),
        "history": _history_view(card),
        "params": _params_view(card),
        "curl": _curl(card, config),
        "json_ld": _dataset(card, runs, root),
        "title": card.title,
    }


# -------------------------------------------------------------------------------------- run-card pages


def _clause_text(clause: Mapping[str, Any]) -> str:
    metric = str(clause.get("metric") or "?")
    test = str(clause.get("test") or "?")
    words = {"rises": "rises", "falls": "falls", "not_rises": "does not rise", "not_falls": "does not fall",
             "holds": "holds"}.get(test, test)
    text = f"{metric} {words}"
    if clause.get("fixture"):
        text += f" on {clause['fixture']}"
    if clause.get("margin") is not None:
        text += f" (margin {fmt_value(clause['margin'])})"
    return text


_CLAUSE_KEYS = {"metric", "test", "fixture", "margin", "holds", "why", "reason", "passed", "ok", "equals",
                "clause", "status", "outcome", "text", "variant", "broken", "name"}
_FIGURE_NAMES = {
    "gap": "gap", "se": "se", "df": "df", "ci": "CI", "ci_low": "CI low", "ci_high": "CI high", "p": "p",
    "p_value": "p", "p_signflip": "sign-flip p", "noise_floor": "noise floor", "nf": "noise floor",
    "upper": "upper bound", "upper_one_sided": "one-sided upper bound", "lower_one_sided": "one-sided lower bound",
    "wilson": "Wilson interval", "k": "k", "n": "n", "bootstrap": "bootstrap CI", "bootstrap_ci": "bootstrap CI",
    "ci_bootstrap": "bootstrap CI", "tost_p": "TOST p", "means": "means", "n_fixtures": "fixtures",
    "baseline_run_means": "baseline run means", "baseline_k": "baseline k", "baseline_n": "baseline n",
    "rate": "rate", "planned": "planned",
}
_P_KEYS = ("p", "p_value", "p_signflip", "tost_p")
# The columns of a grading disagreement worth a row on the page (the sheet and its row are in grades/).
_GRADE_COLUMNS = (("cell", "cell"), ("fixture", "fixture"), ("variant", "variant"), ("repetition", "rep"),
                  ("auto_score", "scorer"), ("human_grade", "human"), ("note", "note"))
# Figures worth a reader's eye on the clause line; the rest stay in verdict.json, which the page links.
_CLAUSE_FIGURES = {
    "rises": ("gap", "ci", "ci_bootstrap", "p", "p_signflip", "noise_floor", "n_fixtures"),
    "falls": ("gap", "ci", "ci_bootstrap", "p", "p_signflip", "noise_floor", "n_fixtures"),
    "not_rises": ("gap", "upper_one_sided", "ci", "p", "noise_floor", "n_fixtures"),
    "not_falls": ("gap", "lower_one_sided", "ci", "p", "noise_floor", "n_fixtures"),
    "holds": ("k", "n", "planned", "wilson", "baseline_k", "baseline_n"),
}


def _figures(obj: Mapping[str, Any], skip: Iterable[str] = (), only: Sequence[str] | None = None
             ) -> list[tuple[str, str]]:
    """The figures of a clause or metric, labelled, in the order the verdict wrote them (or `only`'s order)."""
    skip = set(skip)
    keys = [k for k in only if k in obj] if only else list(obj)
    out = []
    for key in keys:
        value = obj[key]
        if key in skip or value is None or (isinstance(value, str) and key in _CLAUSE_KEYS):
            continue
        label = _FIGURE_NAMES.get(key, key.replace("_", " "))
        text = fmt_p(value) if key in _P_KEYS else fmt_value(value)
        out.append((label, text))
    return out


def _clause_holds(clause: Mapping[str, Any]) -> bool | None:
    for key in ("holds", "passed", "ok"):
        if isinstance(clause.get(key), bool):
            return bool(clause[key])
    status = clause.get("status") or clause.get("outcome")
    if isinstance(status, str):
        return status.lower() in ("holds", "held", "pass", "passed", "true", "ok")
    return None


def _verdict_view(run: Run, card: Card | None) -> dict[str, Any]:
    """The verdict as written by `benchcard verdict` (read tolerantly: a missing field shows as nothing)."""
    verdict = run.verdict or run.ledger_row or {}
    clauses = verdict.get("clauses")
    if isinstance(clauses, Mapping):
        clauses = [dict(v, name=k) if isinstance(v, Mapping) else {"name": k, "holds": v} for k, v in clauses.items()]
    raw = [c for c in (clauses if isinstance(clauses, list) else []) if isinstance(c, Mapping)]
    several = len({c.get("variant") for c in raw}) > 1
    clause_views = []
    for c in raw:
        holds = _clause_holds(c)
        text = str(c.get("text") or c.get("clause") or _clause_text(c))
        if several and c.get("variant"):
            text = f"{c['variant']}: {text}"
        only = _CLAUSE_FIGURES.get(str(c.get("test") or ""))
        clause_views.append({
            "text": text,
            "holds": holds,
            "state": ("holds" if holds else ("significantly broken" if c.get("broken") else "does not hold")
                      if holds is not None else "—"),
            "figures": _figures(c, skip=_CLAUSE_KEYS, only=only),
            "why": str(c.get("why") or c.get("reason") or ""),
        })
    metrics = verdict.get("metrics")
    metric_views = []
    if isinstance(metrics, Mapping):
        for name, figs in metrics.items():
            if isinstance(figs, Mapping):
                metric_views.append({"name": str(name), "figures": _figures(figs)})
    notes: list[dict[str, Any]] = []
    human = verdict.get("human")
    if isinstance(human, Mapping):
        summary = {k: human[k] for k in ("graded", "agreement", "kappa", "pass_rule") if k in human}
        if summary:
            notes.append({"title": "Agreement of the human grades with the blind scorer", "table": _tabulate(summary)})
        for key, title in (("disagreements", "Disagreements"), ("notes", "Grader notes")):
            rows = human.get(key)
            if isinstance(rows, list):
                picked = [{label: r.get(field) for field, label in _GRADE_COLUMNS if field in r}
                          for r in rows if isinstance(r, Mapping)]
                notes.append({"title": title, "table": _tabulate(picked) if picked else {"text": "None."}})
    else:
        for key in ("scorer_notes", "grading", "grades", "disagreements"):
            if verdict.get(key):
                notes.append({"title": key.replace("_", " ").capitalize(), "table": _tabulate(verdict[key])})
    counts = verdict.get("counts")
    other = []
    if isinstance(counts, Mapping):
        other.append(("cells", ", ".join(f"{v} {k}" for k, v in counts.items())))
    elif verdict.get("cells") is not None:
        other.append(("cells", fmt_value(verdict["cells"])))
    if verdict.get("alpha") is not None:
        other.append(("α", fmt_value(verdict["alpha"])))
    comparisons = verdict.get("comparisons")
    for comp in comparisons if isinstance(comparisons, list) else []:
        eq = comp.get("equivalence") if isinstance(comp, Mapping) else None
        if isinstance(eq, Mapping) and eq.get("tost_p") is not None:
            label = "equivalence" if not several else f"equivalence ({comp.get('variant')})"
            other.append((label, f"TOST p {fmt_p(eq['tost_p'])} against ±{fmt_value(eq.get('margin'))}"))
    run_notes = [str(n) for n in verdict.get("notes") or [] if isinstance(n, str)]
    return {"finding": run.finding, "outcome": run.outcome, "clauses": clause_views, "metrics": metric_views,
            "notes": notes, "other": other, "run_notes": run_notes,
            "summary": str(verdict.get("why") or verdict.get("summary") or "")}


def _tabulate(obj: Any) -> dict[str, Any]:
    """Scorer notes of any shape as something a template can show: a table, a list, or text."""
    if isinstance(obj, list) and obj and all(isinstance(r, Mapping) for r in obj):
        columns = list(dict.fromkeys(k for r in obj for k in r))
        rows = [[r.get(c) if isinstance(r.get(c), str) else fmt_value(r.get(c)) for c in columns] for r in obj]
        return {"columns": columns, "rows": rows}
    if isinstance(obj, Mapping):
        return {"columns": ["", ""], "rows": [[str(k).replace("_", " "), v if isinstance(v, str) else fmt_value(v)]
                                               for k, v in obj.items()]}
    if isinstance(obj, list):
        return {"items": [v if isinstance(v, str) else fmt_value(v) for v in obj]}
    return {"text": str(obj)}


def _clauses_for(run: Run, card: Card | None) -> list[dict[str, Any]]:
    """The win rule the run was judged by: as the verdict wrote it, else the card's own."""
    raw = (run.verdict or {}).get("clauses")
    if isinstance(raw, list) and raw and all(isinstance(c, Mapping) and "metric" in c for c in raw):
        return [dict(c) for c in raw]
    if card is not None and card.win is not None and run.version == card.version:
        return [{"metric": c.metric, "test": c.test, "fixture": c.fixture, "margin": c.margin}
                for c in card.win.clauses]
    return []


def _baseline_of(run: Run, card: Card | None) -> str | None:
    for source in (run.verdict or {}, run.manifest):
        if isinstance(source.get("baseline"), str):
            return str(source["baseline"])
    return card.baseline if card is not None else None


def _pivots(run: Run, card: Card | None) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Fixture × variant means from table.csv: one table for the win rule's metrics, one for the rest."""
    df = run.table
    if df is None or df.empty:
        return None, None
    baseline = _baseline_of(run, card)
    variants = sorted(df["variant"].dropna().unique(), key=lambda v: (v != baseline, v))
    first = list(dict.fromkeys(str(c["metric"]) for c in _clauses_for(run, card)))
    present = set(df["metric"].dropna())
    main = [m for m in first if m in present]
    rest = sorted(m for m in present if m not in main)
    per_fixture = {str(c["metric"]) for c in _clauses_for(run, card) if c.get("test") == "holds"}
    return (_pivot(df, main, variants, baseline, no_delta=per_fixture),
            _pivot(df, rest, variants, baseline))


def _pivot(df: Any, metrics: Sequence[str], variants: Sequence[str], baseline: str | None,
           no_delta: Iterable[str] = ()) -> dict[str, Any] | None:
    """One table: a row per fixture, for each metric a column per variant (and variant − baseline)."""
    if not metrics:
        return None
    groups: list[dict[str, Any]] = []
    columns: list[tuple[str, str, str | None]] = []
    starts: list[int] = []
    sub = df[df["metric"].isin(list(metrics))]
    means = sub.pivot_table(index="fixture", columns=["metric", "variant"], values="value", aggfunc="mean")
    for metric in metrics:
        cols = [v for v in variants if (metric, v) in means.columns]
        others = [v for v in cols if v != baseline]
        heads = list(cols)
        starts.append(len(columns))
        for v in cols:
            columns.append((metric, v, None))
        if baseline in cols and len(others) == 1 and metric not in set(no_delta):
            heads.append("Δ")
            columns.append((metric, others[0], baseline))
        groups.append({"metric": metric, "heads": heads})
    rows = []
    for fixture, row in means.iterrows():
        cells = []
        for metric, v, base in columns:
            value = row.get((metric, v))
            cells.append(fmt_num(value - row.get((metric, base)) if base else value, 3))
        rows.append({"fixture": str(fixture), "cells": cells})
    totals = []
    for metric, v, base in columns:
        col = means[(metric, v)] - means[(metric, base)] if base else means[(metric, v)]
        totals.append(fmt_num(col.mean(), 3))
    reps = sub.groupby(["fixture", "variant", "metric"])["value"].count()
    deltas = sorted({f"{v} − {base}" for _, v, base in columns if base})
    return {"groups": groups, "rows": rows, "mean": totals, "starts": starts, "deltas": deltas,
            "reps": int(reps.max()) if len(reps) else 0}


def _grid(df: Any, metric: str, variant: str, fixtures: Sequence[str]) -> Any:
    import numpy as np

    sub = df[(df["metric"] == metric) & (df["variant"] == variant)]
    col = "repetition" if "repetition" in df.columns else None
    if col is None:
        pivot = sub.groupby("fixture")["value"].mean().to_frame()
    else:
        pivot = sub.pivot_table(index="fixture", columns=col, values="value", aggfunc="mean")
    return np.asarray(pivot.reindex(list(fixtures)).to_numpy(dtype=float), dtype=np.float64)


def _plots(run: Run, card: Card | None, folder: Path, prefix: str) -> list[dict[str, Any]]:
    """One SVG per (variant, clause metric compared across arms): fixture differences, CI, noise floor."""
    df = run.table
    baseline = _baseline_of(run, card)
    if df is None or df.empty or baseline is None:
        return []
    import numpy as np

    from . import stats

    alpha = card.win.alpha if card is not None and card.win is not None else 0.05
    alpha = float((run.verdict or {}).get("alpha") or alpha)
    seal_root = str(run.manifest.get("seal_root") or "")
    try:
        seed = stats.seed_from(seal_root)
    except ValueError:
        seed = 0
    out = []
    clauses = [c for c in _clauses_for(run, card) if c.get("test") != "holds"]
    variants = sorted(v for v in df["variant"].dropna().unique() if v != baseline)
    for clause in clauses:
        metric = str(clause["metric"])
        if metric not in set(df["metric"]):
            continue
        for variant in variants:
            fixtures = sorted(df[(df["metric"] == metric)]["fixture"].dropna().unique())
            base = _grid(df, metric, baseline, fixtures)
            var = _grid(df, metric, variant, fixtures)
            with np.errstate(all="ignore"):
                d = np.nanmean(var, axis=1) - np.nanmean(base, axis=1)
            keep = ~np.isnan(d)
            if not keep.any():
                continue
            try:
                gap = stats.paired_gap(base, var, alpha, seed=seed)
                floor = stats.noise_floor(base, alpha)
            except ValueError:
                continue
            name = _slug(f"{run.run_id}-{variant}-{metric}") + ".svg"
            _draw(folder / name, [f for f, k in zip(fixtures, keep, strict=True) if k], d[keep].tolist(),
                  gap, floor.value, metric, variant, baseline, clause)
            alt = (f"{metric}, {variant} minus {baseline}, per fixture: gap {fmt_num(gap.gap, 3)}, "
                   f"{1 - alpha:.0%} CI [{fmt_num(gap.ci_low, 3)}, {fmt_num(gap.ci_high, 3)}], "
                   f"baseline noise floor ±{fmt_num(floor.value, 3)}")
            out.append({"src": prefix + name, "alt": alt, "metric": metric, "variant": variant,
                        "gap": fmt_num(gap.gap, 3), "ci": f"[{fmt_num(gap.ci_low, 3)}, {fmt_num(gap.ci_high, 3)}]",
                        "floor": fmt_num(floor.value, 3), "level": f"{1 - alpha:.0%}",
                        "n": int(keep.sum())})
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def _draw(path: Path, fixtures: Sequence[str], diffs: Sequence[float], gap: Any, floor: float, metric: str,
          variant: str, baseline: str, clause: Mapping[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    with matplotlib.rc_context({"svg.hashsalt": "benchcard", "svg.fonttype": "none", "font.size": 10.5,
                                "font.family": ["DejaVu Sans", "sans-serif"]}):
        n = len(fixtures)
        # Sized to stay legible when a phone scales it to ~360 px wide; text stays text (svg.fonttype none).
        fig = Figure(figsize=(5.6, 2.2 + 0.24 * n), layout="constrained")
        ax = fig.add_subplot()
        ys = list(range(n))
        handles: list[Any] = []
        if math.isfinite(floor):
            ax.axvspan(-floor, floor, color="#9a9a9a", alpha=0.25, lw=0)
            handles.append(Patch(color="#9a9a9a", alpha=0.4, label=f"baseline noise floor ±{floor:.3f}"))
        if math.isfinite(gap.ci_low) and math.isfinite(gap.ci_high):
            ax.axvspan(gap.ci_low, gap.ci_high, color="#3b6fd8", alpha=0.18, lw=0)
            handles.append(Patch(color="#3b6fd8", alpha=0.35,
                                 label=f"{1 - gap.alpha:.0%} CI of the gap [{gap.ci_low:.3f}, {gap.ci_high:.3f}]"))
        ax.axvline(0.0, color="#222222", lw=0.8)
        handles.append(ax.axvline(gap.gap, color="#1f4bb0", lw=1.6, label=f"gap {gap.gap:.3f}"))
        margin = clause.get("margin")
        if isinstance(margin, int | float) and not isinstance(margin, bool):
            sign = -1.0 if clause.get("test") == "not_falls" else 1.0
            handles.append(ax.axvline(sign * float(margin), color="#b3261e", lw=1.2, ls="--",
                                      label=f"guard margin {sign * float(margin):+.2f}"))
        colours = ["#1f4bb0" if d > 0 else ("#b3261e" if d < 0 else "#555555") for d in diffs]
        ax.scatter(diffs, ys, c=colours, s=28, zorder=3)
        ax.set_yticks(ys, list(fixtures))
        ax.invert_yaxis()
        ax.set_xlabel(f"{variant} − {baseline}, mean over repetitions")
        ax.set_title(f"{metric}: per-fixture paired differences", loc="left", fontsize=11.5)
        lo = min([*diffs, gap.ci_low if math.isfinite(gap.ci_low) else 0.0,
                  -floor if math.isfinite(floor) else 0.0, 0.0])
        hi = max([*diffs, gap.ci_high if math.isfinite(gap.ci_high) else 0.0,
                  floor if math.isfinite(floor) else 0.0, 0.0])
        pad = max(0.05, (hi - lo) * 0.08)
        ax.set_xlim(lo - pad, hi + pad)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6, symmetric=False))
        ax.grid(axis="x", color="#dddddd", lw=0.6)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False, fontsize=9.5,
                   columnspacing=1.2, handlelength=1.6)
        fig.savefig(path, format="svg", metadata={"Date": None})


def _prompt_view(card: Card) -> dict[str, Any]:
    """The exact template, baseline block in place, and each variant's block shown once, below it."""
    assert card.baseline is not None
    base_block = card.variants.get(card.baseline, "")
    blocks = []
    for name in card.variant_names()[1:]:
        text = card.variants[name]
        where = "in place of the baseline's block" if base_block else "at the marked place"
        for part in (card.prompt.system or "", card.prompt.user):
            if VARIANT_SLOT in part:
                after = part.split(VARIANT_SLOT, 1)[1].split("\n", 1)[0]
                tag = re.match(r"<([A-Za-z][\w-]*)>", after)
                if tag and "{{fixture}}" in after:
                    where = f"immediately before the {tag.group(1)}"
                elif "{{fixture}}" in after:
                    where = "immediately before the fixture"
                elif not after.strip():
                    where = "at the end of its line"
        verb = "replaces the baseline's block with" if base_block else "adds only"
        blocks.append({"name": name, "text": text, "head": f"--- VARIANT {name} {verb} the block below, {where} ---"})

    def show(text: str) -> str:
        return text.replace(VARIANT_SLOT, base_block).replace("{{fixture}}", "{{FIXTURE}}")

    return {"system": show(card.prompt.system) if card.prompt.system is not None else None,
            "user": show(card.prompt.user), "blocks": blocks}


def _ab_context(card: Card, runs: Sequence[Run], project: Project, out: Path,
                config: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    root = "../../"
    folder = out / "cards" / card.id
    folder.mkdir(parents=True, exist_ok=True)
    # The fixtures and answer keys, published alongside the card.
    materials = []
    for fixture_id, path in sorted(card.fixtures.items()):
        (folder / "fixtures").mkdir(exist_ok=True)
        shutil.copyfile(path, folder / "fixtures" / path.name)
        entry = {"id": fixture_id, "fixture": f"fixtures/{path.name}", "key": None}
        key = project.keys_dir(card.id) / f"{fixture_id}.json"
        if key.is_file():
            (folder / "keys").mkdir(exist_ok=True)
            shutil.copyfile(key, folder / "keys" / key.name)
            entry["key"] = f"keys/{key.name}"
        materials.append(entry)
    seal = project.seal_path(card.id, card.version)
    seal_href = None
    if seal.is_file():
        (folder / "keys").mkdir(exist_ok=True)
        shutil.copyfile(seal, folder / "keys" / seal.name)
        seal_href = f"keys/{seal.name}"

    n_plots = 0
    run_views = []
    for run in sorted(runs, key=lambda r: (r.version != card.version, -r.version, r.started), reverse=False):
        plots = _plots(run, card, folder, "") if run.verdict is not None or run.table is not None else []
        n_plots += len(plots)
        main, rest = _pivots(run, card)
        run_views.append({
            "run": run,
            "current": run.version == card.version,
            "verdict": _verdict_view(run, card) if run.verdict is not None or run.ledger_row else None,
            "plots": plots,
            "pivot": main,
            "more_pivot": rest,
            "href": root + run.href,
            "table_href": root + run.site_dir + "/table.csv" if run.folder and (run.folder / "table.csv").is_file()
            else None,
            "files": [dict(f, href=root + run.site_dir + "/" + f["href"]) for f in _run_files(run)],
        })
    current_runs = [v for v in run_views if v["current"]]
    latest = current_runs[-1] if current_runs else None
    win = None
    if card.win is not None:
        from .verdict import clause_text  # the verdict's own wording of a clause

        win = {"clauses": [clause_text(c) for c in card.win.clauses],
               "alpha": card.win.alpha, "equivalence_margin": card.win.equivalence_margin,
               "allow_failed": card.win.allow_failed}
    page = dict(card.page)
    context = {
        "root": root,
        "card": card,
        "label": str(page.get("label") or card.id.upper()),
        "not_run_text": str(page.get("result") or "Result: not run here"),
        "page": {k: prose(page.get(k)) for k in ("not_this_card", "fixture", "controls", "scoring_rule",
                                                 "evidence", "closing_rule", "fool_yourself", "sources")},
        "prompt": _prompt_view(card),
        "win": win,
        "runs": run_views,
        "latest": latest,
        "current_runs": current_runs,
        "older_runs": [v for v in run_views if not v["current"]],
        "materials": materials,
        "seal_href": seal_href,
        "fixture_count": len(card.fixtures),
        "grid": len(card.fixtures) * len(card.variants) * card.repetitions,
        "history": _history_view(card),
        "params": _params_view(card),
        "curl": _curl(card, config, variant=card.variant_names()[-1], fixture=card.fixture_ids()[0]),
        "curl_variant": card.variant_names()[-1],
        "curl_fixture": card.fixture_ids()[0],
        "json_ld": _dataset(card, runs, root),
        "title": f"{page.get('label') or card.id.upper()} · {card.title}" if card.title else card.id.upper(),
    }
    return context, n_plots


# -------------------------------------------------------------------------------- evidence, ledger, index


def _run_context(run: Run, card: Card | None) -> dict[str, Any]:
    unblinded = run.verdict is not None
    assignment = {str(a.get("cell")): a for a in run.assignment}
    scores = {str(s.get("cell")): s for s in run.scores}
    cells: list[dict[str, Any]] = []
    if run.published is not None:
        cells.append({"cell": run.run_id, "fixture": run.card, "variant": None, "repetition": None,
                      "status": str(run.published.get("status") or ""), "score": fmt_num(run.score),
                      "text": str(run.published.get("output") or ""), "rules": [], "metrics": [],
                      "details": _figures({k: v for k, v in run.published.items()
                                           if k in ("cost", "latency_ms", "finish_reason")})})
    for out in run.outputs:
        cell = str(out.get("cell") or "")
        a = assignment.get(cell, {}) if unblinded else {}
        s = scores.get(cell, {})
        rules: Mapping[str, Any] = s["rules"] if isinstance(s.get("rules"), Mapping) else {}
        metrics: Mapping[str, Any] = s["metrics"] if isinstance(s.get("metrics"), Mapping) else {}
        usage: Mapping[str, Any] = out["usage"] if isinstance(out.get("usage"), Mapping) else {}
        details: list[tuple[str, str]] = [("finish reason", str(out.get("finish_reason") or "—")),
                   ("tokens in / out / reasoning", " / ".join(fmt_value(usage.get(k))
                                                             for k in ("input", "output", "reasoning"))),
                   ("cost", fmt_money(out.get("cost"))), ("latency", fmt_ms(out.get("latency_ms"))),
                   ("attempts", fmt_value(out.get("attempts")))]
        if out.get("error"):
            details.append(("error", str(out["error"])))
        cells.append({
            "cell": cell, "fixture": str(out.get("fixture") or ""),
            "variant": a.get("variant"), "repetition": a.get("repetition"),
            "status": str(out.get("status") or ""),
            "score": fmt_num(s.get("score")) if s else "—",
            "text": out.get("text") if isinstance(out.get("text"), str) else "",
            "rules": [(k, bool(v)) for k, v in rules.items()],
            "metrics": [(k, fmt_value(v)) for k, v in metrics.items() if k != "score" and not k.startswith("rule.")],
            "details": details,
            "order": a.get("order", 0),
        })
    if unblinded:
        base = _baseline_of(run, card)
        cells.sort(key=lambda c: (c["fixture"], c["variant"] != base, str(c["variant"]),
                                  _number(c["repetition"]) or 0))
    m = run.manifest
    meta = [
        ("card", f"{run.card} v{run.version}"),
        ("rig", run.rig_line or "—"),
    ]
    for key, label in (("provider_type", "provider type"), ("base_url", "base URL"), ("started_at", "started"),
                       ("finished_at", "finished"), ("cells", "cells"), ("repetitions", "repetitions"),
                       ("concurrency", "concurrency"), ("seed", "seed"), ("seal_root", "seal root"),
                       ("outputs_digest", "outputs digest"), ("benchcard_version", "benchcard")):
        if m.get(key) is not None:
            meta.append((label, fmt_value(m[key])))
    if isinstance(m.get("counts"), Mapping):
        meta.append(("counts", fmt_value(m["counts"])))
    if isinstance(m.get("params"), Mapping):
        meta.append(("params", json.dumps(m["params"], ensure_ascii=False)))
    if run.published is not None:
        meta.append(("recorded", "in the card's history; the run predates its run folder"))
    if run.finding:
        meta.append(("verdict", f"{run.outcome} · {run.finding}" if run.outcome else run.finding))
    verdict = run.verdict or {}
    rule_rates = []
    if isinstance(verdict.get("rules"), Mapping):
        for rule_id, r in verdict["rules"].items():
            if isinstance(r, Mapping):
                passes = f"{fmt_value(r.get('passes'))} of {fmt_value(r.get('n'))}"
                rule_rates.append({"id": str(rule_id), "passes": passes, "rate": fmt_num(r.get("rate")),
                                   "wilson": fmt_value(r.get("wilson"))})
    return {
        "verdict_why": str(verdict.get("why") or ""),
        "verdict_head": " · ".join(x for x in (run.outcome, run.finding) if x),
        "rule_rates": rule_rates,
        "score_ci": fmt_value(verdict.get("score_ci")) if verdict.get("score_ci") else "",
        "run": run,
        "card_title": card.title if card else run.card,
        "card_href": f"cards/{run.card}/index.html" if card else None,
        "meta": meta,
        "files": _run_files(run),
        "cells": cells,
        "unblinded": unblinded,
        "is_ab": bool(card and card.is_ab),
        "title": f"Run {run.run_id} · {run.card} v{run.version}",
    }


def _ledger_context(ledger: Sequence[Mapping[str, Any]], runs: Sequence[Run], cards: Mapping[str, Card],
                    chain_problem: str | None) -> dict[str, Any]:
    hrefs = {(r.card, r.run_id): r.href for r in runs}
    rows = []
    for row in ledger:
        card = str(row.get("card") or "")
        run_id = str(row.get("run") or "")
        figures = []
        if row.get("score") is not None:
            figures.append(f"score {fmt_num(row.get('score'))}")
        if row.get("model"):
            figures.append(str(row["model"]))
        rows.append({
            "seq": fmt_value(row.get("seq")),
            "date": str(row.get("date") or str(row.get("at") or "")[:10] or "—"),
            "at": str(row.get("at") or ""),
            "card": card,
            "card_href": f"cards/{card}/index.html" if card in cards else None,
            "version": fmt_value(row.get("version")),
            "kind": str(row.get("kind") or ""),
            "rig": str(row.get("rig") or ""),
            "run": run_id,
            "cells": fmt_value(row.get("cells")),
            "outcome": str(row.get("outcome") or ""),
            "finding": str(row.get("finding") or ""),
            "figures": " · ".join(figures),
            "cost": fmt_money(row.get("cost") if not isinstance(row.get("cost"), Mapping)
                              else row["cost"].get("total")),
            "evidence": str(row.get("evidence") or ""),
            "evidence_href": hrefs.get((card, run_id)),
            "hash": str(row.get("hash") or "").removeprefix("sha256:")[:12],
            "full_hash": str(row.get("hash") or ""),
            "prev": str(row.get("prev") or ""),
        })
    return {"rows": rows, "title": "Ledger", "root": "", "chain_problem": chain_problem, "wide": True}


def _summary(card: Card, runs: Sequence[Run], ledger: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One line of the index: the card and its latest outcome."""
    rows = [r for r in ledger if r.get("card") == card.id]
    latest_row = rows[-1] if rows else None
    dated = sorted(runs, key=lambda r: (r.started, r.run_id))
    latest_run = dated[-1] if dated else None
    if latest_row is not None:
        outcome = str(latest_row.get("outcome") or "")
        finding = str(latest_row.get("finding") or "")
        if not card.is_ab and latest_row.get("score") is not None:
            text = f"score {fmt_num(latest_row.get('score'))}"
        else:
            text = " · ".join(x for x in (outcome, finding) if x) or "recorded"
        when = str(latest_row.get("date") or "")
        detail = str(latest_row.get("rig") or latest_row.get("model") or "")
        version = latest_row.get("version")
    elif latest_run is not None:
        if card.is_ab:
            text = " · ".join(x for x in (latest_run.outcome, latest_run.finding) if x) or "run, no verdict yet"
        else:
            text = f"score {fmt_num(latest_run.score)}"
        when = latest_run.date
        detail = latest_run.model
        version = latest_run.version
    else:
        text, when, detail, version = "Not yet run", "", "", None
    stale = version is not None and version != card.version
    return {"card": card, "href": f"cards/{card.id}/index.html", "outcome": text, "date": when,
            "detail": detail, "version_note": f"at v{version}, superseded" if stale else "",
            "kind": "run card" if card.is_ab else "probe",
            "class": _outcome_class(text)}


def _outcome_class(text: str) -> str:
    t = text.lower()
    if "non-result" in t or "inconclusive" in t or "no-effect" in t or "incomplete" in t:
        return "nonresult"
    if t.startswith("result") or "win" in t or "loss" in t:
        return "result"
    return "none"
