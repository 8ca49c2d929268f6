"""`benchcard compare`: a paired verdict over two logs, with the verdict's own statistics and wording.

The logs' samples are paired (`pairing`), the win rule is applied by the same code as a run's verdict
(`clausestats.ab_stats`, `findings.ab_body`; a stand-in `Card` carries the rule), and the same `verdict.json`
and `table.csv` are written into a folder of their own. What a comparison cannot know is said, not hidden:
nothing was sealed before the logs were made and nothing was blinded, so the verdict is marked `sealed: false`
and its finding reads "unsealed comparison"; it enters the ledger only when asked (`--ledger`), as a row of
kind `compare` with `unsealed: true`. The resampling seed comes from the two logs' digests.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
from msgspec import UNSET

from benchcard._util.files import write_atomic
from benchcard._util.hashing import digest, file_digest, seed_from
from benchcard.card.model import Card, Prompt, Rig, WinRule
from benchcard.compare._logs import Samples, read_samples
from benchcard.compare._pairing import (
    labels_of,
    left_out,
    left_out_note,
    pair,
    per_sample,
    same_samples,
    shared_metrics,
    unscored,
)
from benchcard.compare._rule import Ranges, ranges_from_options, rule_from_file, rule_from_options
from benchcard.errors import CompareError
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.records.ledgerrow import LedgerRow, Source
from benchcard.records.rows import VERDICT, Manifest, RigRecord, new_run_id
from benchcard.records.verdictfigures import CompareRule, RuleClause, known
from benchcard.records.verdictfile import AbVerdict, LedgerEntry, VerdictHead, decode_verdict, encode_verdict
from benchcard.scoring.scorers import ExactSpec, metric_range
from benchcard.stats.crossed import Crossed, FloatArray
from benchcard.verdict.clausestats import BOOTSTRAP_RESAMPLES, Figures, ab_stats
from benchcard.verdict.entry import compare_row
from benchcard.verdict.findings import ab_body
from benchcard.verdict.gate import EXIT_CODES, Gate
from benchcard.verdict.integrity import verdict_digest
from benchcard.verdict.report import verdict_lines
from benchcard.verdict.runfolder import RunData
from benchcard.verdict.table import TABLE_FILE, table_text

UNSEALED = "unsealed comparison"


@dataclass(frozen=True)
class RuleOptions:
    """The win rule as the command line gives it: a YAML file, or `--win` clauses with their settings."""

    file: Path | str | None = None
    clauses: tuple[str, ...] = ()
    alpha: float = 0.05
    equivalence_margin: float = 0.05
    allow_failed: int = 0
    ranges: tuple[str, ...] = ()  # `--range 'METRIC LOWEST HIGHEST'`


@dataclass(frozen=True)
class Comparison:
    """A comparison given: its folder, what verdict.json holds, and its ledger row if it was entered."""

    out_dir: Path
    file: AbVerdict = field(repr=False)  # what verdict.json holds, typed
    ledger_row: LedgerRow | None = field(default=None, repr=False)
    samples: int = 0  # distinct sample ids
    plots: tuple[Path, ...] = ()  # drawn by the publishing stage (publish/compareplots.py)
    plot_note: str = ""  # why there are none, when there are none
    with_gate: bool = False  # `--gate`: the gate's decision is reported beside the verdict, and exits the command

    @property
    def finding(self) -> str:
        return self.file.finding

    def gate(self) -> Gate:
        """`--gate`: the verdict's exit code for this finding (docs/ci.md), said as the verdict's gate says it."""
        code = EXIT_CODES[self.finding]
        return Gate(self.file.run, self.finding, code, f"gate: {self.finding} → exit {code}"
                    + ("" if code == 0 else " (only a win passes)") + f" ({UNSEALED})")

    @property
    def code(self) -> int:
        """The exit code: the gate's under `--gate` (`with_gate`), else 0."""
        return self.gate().code if self.with_gate else 0

    def to_json(self) -> dict[str, Any]:
        """Exactly verdict.json, as JSON data (under `--gate`, the gate's decision beside it as `gate`)."""
        return self.file.fields() | ({"gate": self.gate().to_json()} if self.with_gate else {})

    def lines(self) -> list[str]:
        """What `benchcard compare` prints: the verdict's lines under a header that says what was compared (and
        under `--gate`, the gate's line last)."""
        d = self.file
        a, b = known(d.sources) or []
        out = [f"{UNSEALED} · {a.tool} · {d.baseline} (baseline, {a.log}) vs {d.variants[0]} "
               f"({b.log}) · {d.cells} cells"]
        for line in verdict_lines(d, as_ab=True)[1:-1]:
            line = line.replace("seeded from the seal root", "seeded from the two logs' digests")
            out.append(line + f" ({UNSEALED})" if line.startswith("finding:") else line)
        row = self.ledger_row
        out.append(f"ledger: seq {row.seq} · {row.at[:19]}Z · kind compare, marked unsealed" if row else
                   "ledger: not entered (an unsealed comparison enters the ledger only with --ledger)")
        plots = f", {len(self.plots)} plot(s)" if self.plots else ""
        out.append(f"wrote {TABLE_FILE}, verdict.json{plots} → {d.evidence}")
        if self.plot_note:
            out.append(f"  {self.plot_note}")
        return [*out, self.gate().line] if self.with_gate else out


def compare(a_path: Path, b_path: Path, rule: RuleOptions, *, project: Project | None = None,
            out: Path | None = None, enter_ledger: bool = False, n_resamples: int = BOOTSTRAP_RESAMPLES,
            timings: dict[str, float] | None = None, names: Sequence[str] = ()) -> Comparison:
    """Pair two logs' samples, rule on them, write verdict.json and table.csv (and a ledger row).
    `project` counts only if it has a cards/ folder: a comparison is often made where no project is. `names`:
    `A=…`/`B=…` for the two sides (else named after what the logs say, pairing.labels_of)."""
    if project is not None and not project.cards_dir.is_dir():
        project = None
    started = time.perf_counter()
    a, b = read_samples(Path(a_path)), read_samples(Path(b_path))
    if a.tool != b.tool:
        raise CompareError(f"{a.path} is an {a.tool} log but {b.path} is an {b.tool} log; compare two of a kind")
    same_samples(a, b)
    read_done = time.perf_counter()
    known = set(shared_metrics(a, b))
    if not known:
        raise CompareError(f"{a.path} and {b.path} have no numeric metric in common (first: "
                           f"{', '.join(a.metrics) or 'none'}; second: {', '.join(b.metrics) or 'none'})")
    fixtures = {k[0]: None for k in (*a.samples, *b.samples)}
    win, ranges = _rule(rule, known, fixtures)
    for log in (a, b):
        _check_ranges(log, ranges)
    _check_margins(win, a, b, ranges)
    if enter_ledger and project is None:
        raise CompareError("--ledger needs a project (a folder with cards/); none found here")
    cid = new_run_id()
    out_dir = _out_dir(out, project, cid, enter_ledger)
    labels = labels_of(a, b, names)
    digests = [file_digest(a.path), file_digest(b.path)]
    rig_line = f"{labels[0]} vs {labels[1]}"
    relative = project.recorded(out_dir) if project is not None and out_dir.is_relative_to(project.root) \
        else str(out_dir)
    sources = [Source(log=str(s.path), digest=d, tool=s.tool, model=s.model, task=s.task, label=label)
               for s, d, label in zip((a, b), digests, labels, strict=True)]
    head = VerdictHead(run=cid, card="compare", version=None, kind="compare", rig=rig_line, seal_root=None,
                       evidence=relative, sources=sources, rule=_rule_json(win, ranges))
    data, verdict = rule_on(a, b, win, labels, head, seed_from(digest(digests)), n_resamples, out_dir,
                            spans=ranges)
    out_dir.mkdir(parents=True)
    write_atomic(out_dir / TABLE_FILE, table_text(data, rig_line))
    row = None
    if enter_ledger:
        assert project is not None
        row = ledger.append(project, compare_row(verdict, table_digest=file_digest(out_dir / TABLE_FILE),
                                                 digest=verdict_digest(verdict.fields())))
        verdict = msgspec.structs.replace(verdict, ledger=LedgerEntry(row.seq, row.hash, row.at))
    raw = encode_verdict(verdict)
    write_atomic(out_dir / VERDICT, raw)
    written = decode_verdict(raw, out_dir / VERDICT, CompareError)  # as the file holds it: non-finite figures null
    assert isinstance(written, AbVerdict)
    if timings is not None:
        timings.update(read=read_done - started, compare=time.perf_counter() - read_done)
    return Comparison(out_dir=out_dir, file=written, ledger_row=row, samples=len(data.fixtures))


def rule_on(a: Samples, b: Samples, win: WinRule, labels: tuple[str, str], head: VerdictHead, seed: int,
            n_resamples: int, out_dir: Path, spans: Ranges | None = None) -> tuple[RunData, AbVerdict]:
    """The two logs' cells (every epoch: table.csv and the counts) and the verdict on them, in memory: the
    statistics are the verdict's own over each sample's epochs folded into one (`pairing.per_sample`). `spans`:
    the metrics' declared ranges, where each interval is cut."""
    manifest = Manifest(run=head.run, card=a.task or "compare", version=0, kind="compare", seal_root="",
                        rig=RigRecord(provider="", model="", line=head.rig))
    needed = list(dict.fromkeys(c.metric for c in win.clauses))
    data = pair(a, b, labels, win.clauses[0].metric, out_dir, manifest, needed)
    card = _stand_in(win, labels, len(data.repetitions), a)
    with ThreadPoolExecutor(max_workers=2) as pool:
        # the run term of a whole eval cannot be measured from one log per arm: taken as 0, and said so
        pending = ab_stats(card, per_sample(data), seed, n_resamples, pool, unmeasured_run_var=0.0, spans=spans)
        body = ab_body(card, data, _signflip_required(pending.result()), head)
    said = f"{body.why} {NO_RUN_TERM}"
    left = left_out(data)
    total = len(data.fixtures)
    kept = total - sum(len(ids) for ids in left.values())
    # the count the figures rest on: a sample in no figure is counted apart, and named in the notes
    counted = f"{kept} of {total} sample(s)" if left else f"{total} sample(s)"
    return data, msgspec.structs.replace(
        body, why=f"{UNSEALED}: {said}",
        summary=f"{UNSEALED} of {labels[1]} against {labels[0]} on {counted} of "
        f"{a.task}: {body.finding} ({body.outcome}). {said}", sealed=False,
        notes=[*body.notes, NO_RUN_TERM, _caveat(a, b), *_uncut(win, a, b, spans or {}),
               *_cut_at_one(body, spans or {})]
        + ([left_out_note(left, total)] if left else []) + [
            f"{log.path}: {n} value(s) of {m} are not numbers and were left out" for log in (a, b)
            for m, n in log.skipped.items() if m not in needed] + [  # the rule's: counted failed, said below
            f"{log.path}: {n} sample(s) have no number for {m}: counted as failed cells, not scored" for log in (a, b)
            for m, n in unscored(log, needed).items()],
    )


@dataclass(frozen=True)
class _SignFlipped(Crossed):
    """A gap whose exact sign-flip p must also reach α: with one log per arm and no run term, the paired t over
    samples alone was measured above α in A/A at 40 samples × 2–3 epochs (0.052–0.053, docs/compare.md); the
    sign-flip is exact under A/A, so a result (win or loss) needing both stays within α by construction."""

    flip_p: FloatArray = field(default_factory=lambda: np.ones(1))

    @property
    def flip_floor(self) -> FloatArray:
        out: FloatArray = np.maximum(super().flip_floor, self.flip_p)
        return out


def _signflip_required(figures: Figures) -> Figures:
    """Each gap's moments with its sign-flip p as the floor of its evidence (`_SignFlipped`)."""
    for g in figures.gaps.values():
        done: dict[int, Crossed] = {}
        for name in ("obs", "low", "high"):
            c = getattr(g, name)
            if c is None:
                continue
            if id(c) not in done:
                new = _SignFlipped(**{f.name: getattr(c, f.name) for f in fields(c)}, flip_p=g.p_flip(c))
                g.flips[id(new)], g.flip_draws[id(new)] = g.flips[id(c)], g.flip_draws[id(c)]
                done[id(c)] = new
            setattr(g, name, done[id(c)])
    return figures


def _rule(rule: RuleOptions, known: set[str], fixtures: Mapping[str, Any]) -> tuple[WinRule, Ranges]:
    if rule.file is not None and rule.clauses:
        raise CompareError("give the win rule once: --rule FILE or --win clauses, not both")
    ranges = ranges_from_options(rule.ranges, known)
    if rule.file is not None:
        win, declared = rule_from_file(Path(rule.file), known, fixtures)
        if ranges and declared:
            raise CompareError(f"give the metrics' ranges once: in {rule.file} (ranges:) or by --range, not both")
        return win, ranges or declared
    if not rule.clauses:
        raise CompareError(f"compare needs a win rule: --win 'METRIC rises' or --rule FILE; the metrics both logs "
                           f"have: {', '.join(sorted(known))}")
    win = rule_from_options(rule.clauses, rule.alpha, rule.equivalence_margin, rule.allow_failed, known, fixtures)
    return win, ranges


def _check_ranges(log: Samples, ranges: Ranges) -> None:
    """Every value of a metric with a declared range lies inside it: else the range is wrong, and so would be
    every interval cut at it."""
    for (sample, epoch), row in log.samples.items():
        for metric, (lo, hi) in ranges.items():
            value = row.metrics.get(metric)
            if value is not None and not lo <= value <= hi:
                which = f"sample {sample}" + (f" epoch {epoch}" if log.tool == "inspect_ai" else "")
                raise CompareError(f"{log.path}: {which}: {metric} is {value:g}, outside its "
                                   f"declared range [{lo:g}, {hi:g}] (--range or the rule file's ranges:)")


def _check_margins(win: WinRule, a: Samples, b: Samples, spans: Ranges) -> None:
    """A guard's margin, or the equivalence margin, that no gap of its metric can reach where the metric's range
    is known (declared, or a score in [0, 1]: every value of both logs inside it, where its intervals are cut at
    ±1): a guard that can never be broken, an equivalence no effect can leave. A card refuses both; a comparison
    took them, of any metric. A count without a declared range has no bound to hold them to."""
    def width(metric: str) -> tuple[float, str] | None:
        if metric in spans:
            lo, hi = spans[metric]
            return hi - lo, f"its declared range [{lo:g}, {hi:g}]"
        if metric_range(metric)[1] is None:
            return None
        values = [row.metrics[metric] for log in (a, b) for row in log.samples.values() if metric in row.metrics]
        if values and min(values) >= 0.0 and max(values) <= 1.0:
            return 1.0, "a score in [0, 1] in both logs"
        return None

    for k, clause in enumerate(win.clauses, 1):
        margin = clause.margin
        known = None if margin is None else width(clause.metric)
        if margin is not None and known is not None and margin >= known[0]:
            declare = ("" if clause.metric in spans else
                       f", or declare its range: --range '{clause.metric} LOWEST HIGHEST'")
            raise CompareError(f"win clause {k}, {clause.text}: a gap of {clause.metric} ({known[1]}) is never "
                               f"beyond ±{known[0]:g}, so a guard at margin {margin:g} can never be broken; "
                               f"use a margin below {known[0]:g}{declare}")
    first, eq = win.clauses[0], win.equivalence_margin
    known = width(first.metric) if first.test != "holds" and eq is not None else None
    if eq is not None and known is not None and eq >= known[0]:
        raise CompareError(f"equivalence margin {eq:g}: a gap of {first.metric} ({known[1]}) is "
                           f"never beyond ±{known[0]:g}, so no effect could be shown to be none; use a margin below "
                           f"{known[0]:g}")


def _cut_at_one(body: AbVerdict, spans: Ranges) -> list[str]:
    """A note for each metric without a declared range whose interval was cut at ±1, where it was taken for a
    score in [0, 1] because every value of both logs is one: another tool's metric may be a count that happened
    to stay within [0, 1], and then the cut is an assumption the user should see (and can undo: --range)."""
    out: dict[str, str] = {}
    for c in body.clauses:
        if c.test == "holds" or c.metric in spans or c.metric in out:
            continue
        ends = [*(c.ci if isinstance(c.ci, list) else []), c.lower_one_sided, c.upper_one_sided]
        if any(isinstance(e, int | float) and abs(e) == 1.0 for e in ends):
            out[c.metric] = (f"{c.metric}'s interval reaches ±1, where it is cut taking {c.metric} for a score in "
                             "[0, 1] (every value of both logs is); if it can be larger, declare its range: --range "
                             f"'{c.metric} LOWEST HIGHEST'.")
    return list(out.values())


def _uncut(win: WinRule, a: Samples, b: Samples, spans: Ranges) -> list[str]:
    """A note for each gap metric whose intervals could not be cut: values beyond [0, 1], no declared range."""
    out = []
    for metric in dict.fromkeys(c.metric for c in win.clauses if c.test != "holds"):
        values = [row.metrics[metric] for log in (a, b) for row in log.samples.values() if metric in row.metrics]
        if metric not in spans and values and (min(values) < 0.0 or max(values) > 1.0):
            out.append(f"{metric} has values beyond [0, 1] and no declared range, so its intervals are not cut at "
                       f"the gaps it can show; declare it: --range '{metric} LOWEST HIGHEST'.")
    return out


def _out_dir(out: Path | None, project: Project | None, cid: str, enter_ledger: bool) -> Path:
    """A new folder: `--out`, else `results/_compare/<id>/` in a project, else `compare-<id>/` here."""
    if out is None:
        out = project.results_dir / "_compare" / cid if project is not None else Path(f"compare-{cid}")
    elif project is not None:  # a folder the user names: never in what the project owns but compare's own
        project.refuse_protected(out, f"--out {out}", folder=True, allow=project.results_dir / "_compare")
    out = out.resolve()
    if out.exists() or out.is_symlink():
        raise CompareError(f"{out}: already exists; a comparison is written into a new folder")
    if enter_ledger and project is not None and not out.is_relative_to(project.root.resolve()):
        raise CompareError(f"--out {out}: outside the project; a ledger row's evidence must be inside it")
    return out


NO_RUN_TERM = ("Epochs are not runs: each sample's epochs are averaged, and the run-to-run variance of a whole "
               "eval cannot be measured from one log per arm, so it is taken as zero here (the paired interval "
               "over samples); the figures speak about these two evals, not about reruns of them.")


def _stand_in(win: WinRule, labels: Sequence[str], repetitions: int, a: Samples) -> Card:
    """The `Card` the verdict's code takes: only the rule, the arms and the baseline are read from it."""
    return Card(id="compare", version=1, kind="ab", path=a.path, raw={}, rig=Rig(provider=a.tool, model=a.model),
                params={}, prompt=Prompt(None, ""), repetitions=repetitions, scoring=ExactSpec(expected=None),
                examples=(), history=(), variants={label: "" for label in labels}, baseline=labels[0], win=win)


def _caveat(a: Samples, b: Samples) -> str:
    return (f"{UNSEALED}: the rule was not sealed before {a.tool} wrote these logs, and nothing was blinded (the "
            "logs name their models); the figures are paired and exact, but a rule chosen after seeing them can "
            "be chosen to win.")


def _rule_json(win: WinRule, ranges: Ranges) -> CompareRule:
    return CompareRule(all=[RuleClause(metric=c.metric, test=c.test,
                                       fixture=UNSET if c.fixture is None else c.fixture,
                                       margin=UNSET if c.margin is None else c.margin) for c in win.clauses],
                       alpha=win.alpha, equivalence_margin=win.equivalence_margin, allow_failed=win.allow_failed,
                       ranges={m: [lo, hi] for m, (lo, hi) in ranges.items()} if ranges else UNSET)
