"""Two logs' samples paired into the arrays a run's verdict is computed from (`RunData`).

The first log is the baseline, the second the variant; a fixture is a sample id and a repetition an epoch, so
the verdict's statistics (per-fixture means over epochs, paired over samples) apply unchanged. A sample in one
log and not the other is a missing cell, counted like a cell that failed in transport.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchcard._util.names import hidden_chars, skeleton
from benchcard._util.text import ascii_int
from benchcard.compare._logs import Key, Samples
from benchcard.errors import CompareError
from benchcard.records.rows import Manifest, Metric
from benchcard.verdict.columns import FAILED, MISSING, OK, TRUNCATED
from benchcard.verdict.runfolder import RunData

STATUS = {"ok": OK, "truncated": TRUNCATED, "failed": FAILED}


def _order(sample_id: str) -> tuple[int, int, str]:
    """Numeric ids (ASCII digits, of any length) in numeric order, then the others as text ('²', '①', '٣', '+1')."""
    number = ascii_int(sample_id, digits=None)
    return (0, number, "") if number is not None else (1, 0, sample_id)


def _article(kind: str) -> str:
    return "an integer" if kind == "integer" else "a text"


def shared_metrics(a: Samples, b: Samples) -> list[str]:
    """The metrics both logs have, in the first log's order: the only ones a rule can compare."""
    other = set(b.metrics)
    return [m for m in a.metrics if m in other]


def same_samples(a: Samples, b: Samples) -> None:
    """Refuse two logs whose samples of one id are not one sample: their identities (lm-eval's `doc_hash`,
    inspect_ai's target) differ, or the logs say they are of two tasks and do not show, sample by sample, that
    their samples are the same. Paired by id alone, doc 3 of arc_easy was compared with doc 3 of gsm8k."""
    shared = sorted({k[0] for k in a.samples} & {k[0] for k in b.samples}, key=_order)
    for sample_id in shared:
        mine, theirs = a.identity.get(sample_id), b.identity.get(sample_id)
        if mine is not None and theirs is not None and mine != theirs:
            what = "doc_id" if a.tool == "lm-eval" else "sample"
            raise CompareError(f"{b.path}: {what} {sample_id} has {b.identity_of} {_cut(theirs)} but "
                               f"{_cut(mine)} in {a.path}: not the same sample, so the two logs cannot be paired "
                               "(logs of different tasks or datasets)")
    proven = bool(shared) and all(s in a.identity and s in b.identity for s in shared)
    if a.task != b.task and a.task_said and b.task_said and not proven:  # a file's name is no evidence
        raise CompareError(f"{a.path} is a log of task {a.task} but {b.path} of {b.task}, and their samples do not "
                           f"carry a {a.identity_of or 'digest'} to show they are the same; compare two logs of one "
                           "task")


def _cut(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"


def unscored(log: Samples, needed: Sequence[str]) -> dict[str, int]:
    """By metric of `needed` (the rule's), how many of the log's `ok` samples hold no number for it (text, NaN,
    an infinity, or no value at all): those cells are `failed` in `pair`, never scored."""
    out: dict[str, int] = {}
    for sample in log.samples.values():
        if sample.status == "ok":
            for m in needed:
                if m not in sample.metrics:
                    out[m] = out.get(m, 0) + 1
    return out


def pair(a: Samples, b: Samples, labels: Sequence[str], headline: str, run_dir: Path,
         manifest: Manifest, needed: Sequence[str] = ()) -> RunData:
    """The cells of both logs, index i = (sample, epoch, log); `headline` is the metric shown as the score. An
    `ok` sample without a number for a metric in `needed` (the rule's) is a `failed` cell: left out of the
    figures, it is counted like a sample that ended in an error (a log that wrote "n/a" for its wrong answers
    would otherwise be compared on its right ones alone)."""
    for sample_id in {k[0] for k in a.samples} & {k[0] for k in b.samples}:
        kind_a, kind_b = a.id_kinds.get(sample_id), b.id_kinds.get(sample_id)
        if kind_a and kind_b and kind_a != kind_b:
            raise CompareError(f"{b.path}: sample id {sample_id} is {_article(kind_b)} here but {_article(kind_a)} in "
                               f"{a.path}; ids are paired by what they are, so these two are not one sample")
    common = set(a.samples) & set(b.samples)
    if not common:
        raise CompareError(f"{a.path} and {b.path} share no sample (id and epoch): they are not runs of the same "
                           "samples")
    keys: list[Key] = sorted(set(a.samples) | set(b.samples), key=lambda k: (_order(k[0]), k[1]))
    fixtures = sorted({k[0] for k in keys}, key=_order)
    epochs = sorted({k[1] for k in keys})
    f_index = {f: i for i, f in enumerate(fixtures)}
    e_index = {e: i for i, e in enumerate(epochs)}
    names = shared_metrics(a, b)
    n = 2 * len(keys)
    status = np.full(n, MISSING, np.int64)
    values = {m: np.full(n, np.nan) for m in names}
    metric_rows: list[dict[str, Metric] | None] = [None] * n
    cells: list[str] = []
    fixture = np.empty(n, np.int64)
    repetition = np.empty(n, np.int64)
    variant = np.tile(np.array([0, 1], np.int64), len(keys))
    i = 0
    for key in keys:
        for log in (a, b):
            cells.append(f"{'ab'[i % 2]}:{key[0]}:{key[1]}")
            fixture[i] = f_index[key[0]]
            repetition[i] = e_index[key[1]]
            sample = log.samples.get(key)
            if sample is not None:
                scored = sample.status == "ok" and all(m in sample.metrics for m in needed)
                status[i] = STATUS[sample.status] if scored or sample.status != "ok" else FAILED
                if scored:
                    row: dict[str, Metric] = {}
                    for m in names:
                        v = sample.metrics.get(m)
                        if v is not None:
                            values[m][i] = v
                            row[m] = v
                    metric_rows[i] = row or None
            i += 1
    score = values[headline] if headline in values else np.full(n, np.nan)
    return RunData(
        run_dir=run_dir, manifest=manifest, cells=cells, variants=list(labels), fixtures=fixtures,
        repetitions=epochs, variant=variant, fixture=fixture, repetition=repetition, status=status, score=score,
        metrics=values, rules={}, cost=np.full(n, np.nan), latency_ms=np.full(n, np.nan), tokens=None,
        metric_rows=metric_rows,
    )


def labels_of(a: Samples, b: Samples, given: Sequence[str] = ()) -> tuple[str, str]:
    """Names for the two arms: `--name A=…`/`B=…` where given, else what the logs say tells them apart
    (`told_apart`); two names that read the same are refused."""
    names = _given(given)
    auto = told_apart(a, b)
    labels = (names.get("A", auto[0]), names.get("B", auto[1]))
    for side, log, label in (("A", a, labels[0]), ("B", b, labels[1])):
        hidden = hidden_chars(label)
        if side not in names and hidden:  # a log's own words: its model, its arguments
            raise CompareError(f"{log.path}: the name it gives its side, {label!a}, holds U+{ord(hidden[0]):04X}, "
                               "an invisible, control or direction character (a right-to-left override would "
                               f"make the line read otherwise); name the side yourself: --name {side}=NAME")
    if skeleton(labels[0].casefold()) == skeleton(labels[1].casefold()):  # read alike, whatever their case
        raise CompareError(f"--name: both sides would be called {labels[0]!r}; give each its own "
                           "(--name A=… --name B=…)")
    return labels


def told_apart(a: Samples, b: Samples) -> tuple[str, str]:
    """Each log's model followed by the facets in which the two logs differ (task arguments, model arguments,
    generation settings: `Samples.facets`), e.g. `openai/gpt-4o-mini level=2`; when nothing but the time
    differs, the time each eval was created; then the file names; then A and B."""
    fa = dict(a.facets) or {"model": a.model}
    fb = dict(b.facets) or {"model": b.model}
    differ = [k for k in dict.fromkeys([*fa, *fb]) if k not in ("model", "created") and fa.get(k) != fb.get(k)]

    def named(facets: dict[str, str], model: str, *more: str) -> str:
        return " ".join(p for p in (facets.get("model", model), *(facets[k] for k in differ if k in facets), *more)
                        if p)

    first, second = named(fa, a.model), named(fb, b.model)
    if first and second and first != second:
        return first, second
    if fa.get("created") and fb.get("created") and fa["created"] != fb["created"]:
        return named(fa, a.model, fa["created"]), named(fb, b.model, fb["created"])
    for first, second in ((a.path.stem, b.path.stem), (str(a.path), str(b.path))):
        if first and second and first != second:
            return first, second
    return "A", "B"


MAX_NAME = 80


def _given(given: Sequence[str]) -> dict[str, str]:
    """`--name A=…`/`--name B=…`: each side at most once, a name a reader can see and tell apart."""
    names: dict[str, str] = {}
    for text in given:
        side, eq, name = text.partition("=")
        side, name = side.strip().upper(), name.strip()
        if not eq or side not in ("A", "B"):
            raise CompareError(f"--name {text!r}: expected A=NAME or B=NAME (A is the baseline, B the variant)")
        if side in names:
            raise CompareError(f"--name {text!r}: {side} is named twice")
        hidden = hidden_chars(name)
        if not name or len(name) > MAX_NAME or hidden:
            why = f"U+{ord(hidden[0]):04X} is invisible or a control character" if hidden else \
                f"a name has 1 to {MAX_NAME} characters"
            raise CompareError(f"--name {text!r}: {why}")
        names[side] = name
    return names


def per_sample(data: RunData) -> RunData:
    """The cells of `pair` folded into one per sample and log: what the statistics are computed from.

    Epochs are not runs. inspect_ai runs a log's epochs side by side in one block of time, and epoch k of one
    sample shares nothing with epoch k of another, so the spread between epoch columns measures no run-to-run
    shock (a shock to one eval moves every epoch of its log alike, and one log per arm cannot separate it from
    the change compared). Each sample's epochs are therefore replicates inside it: its value in a log is the
    mean over its epochs scored in both logs (`_shared_means`), and the gap is the paired mean over samples,
    whose sample-to-sample spread already holds the epochs' noise. A sample with a truncated epoch is truncated
    as a whole (bounded at the worst case for each clause, docs/verdict.md); one with no scored epoch keeps the
    worst status it had.
    """
    folded: dict[tuple[int, int], list[int]] = {}
    for i in range(len(data.cells)):
        folded.setdefault((int(data.variant[i]), int(data.fixture[i])), []).append(i)
    keys = sorted(folded, key=lambda k: (k[1], k[0]))
    n = len(keys)
    status = np.empty(n, np.int64)
    values = {m: np.full(n, np.nan) for m in data.metrics}
    for j, key in enumerate(keys):
        codes = data.status[np.array(folded[key], np.int64)]
        status[j] = TRUNCATED if (codes == TRUNCATED).any() else OK if (codes == OK).any() else \
            FAILED if (codes == FAILED).any() else MISSING
        if status[j] == OK:
            for m, column in data.metrics.items():
                values[m][j] = _shared_means(data, column, folded[key], folded.get((1 - key[0], key[1]), []))
    headline = next((m for m, column in data.metrics.items() if column is data.score), None)
    return RunData(
        run_dir=data.run_dir, manifest=data.manifest,
        cells=[f"{'ab'[v]}:{data.fixtures[f]}" for v, f in keys], variants=data.variants, fixtures=data.fixtures,
        repetitions=[0], variant=np.array([k[0] for k in keys], np.int64),
        fixture=np.array([k[1] for k in keys], np.int64), repetition=np.zeros(n, np.int64), status=status,
        score=values[headline] if headline is not None else np.full(n, np.nan), metrics=values, rules={},
        cost=np.full(n, np.nan), latency_ms=np.full(n, np.nan), tokens=None, metric_rows=[None] * n,
    )


def _shared_means(data: RunData, column: np.ndarray, own: list[int], other: list[int]) -> float:
    """One sample's mean in one log over the epochs scored in both logs (NaN when none is). Over its own epochs
    alone, a log with 5 epochs against one with 1 would pair a mean of five with a single draw: their difference
    is not symmetric under no change, and the sign-flip over samples then errs more often than α (A/A, 40
    samples, 5 epochs against 1, baseline 0.95: 0.075). When the other log scored none of this sample, it is
    not paired at all, and its own epochs give its mean."""
    def scored(rows: list[int]) -> dict[int, float]:
        return {int(data.repetition[i]): float(column[i]) for i in rows
                if data.status[i] == OK and not np.isnan(column[i])}

    mine, theirs = scored(own), scored(other)
    shared = [mine[e] for e in mine if e in theirs] if theirs else list(mine.values())
    return float(np.mean(shared)) if shared else math.nan


#: Why a sample is in no figure, as the comparison's note says it (`left_out`).
NO_COMMON_EPOCH = "scored in both logs, but in no epoch both scored: an epoch pairs only with the same epoch"
ONE_LOG_ONLY = "in one log only"
UNSCORED = "no epoch scored in one log or either"
_LISTED = 10  # ids named per reason; the rest counted


def left_out(data: RunData) -> dict[str, list[str]]:
    """The samples the figures do not rest on, by why (in the order of `data.fixtures`): no epoch scored (`ok`) in
    both logs and none truncated (a truncated sample is in the figures, bounded at the worst case). A sample
    scored in both logs in different epochs was left out with no word, its missing cells alone counted, and the
    summary counted it among the samples compared (8 where the figures rest on 6)."""
    scored: list[list[set[int]]] = [[set(), set()] for _ in data.fixtures]
    present: list[list[bool]] = [[False, False] for _ in data.fixtures]
    cut = [False] * len(data.fixtures)
    for v, f, r, s in zip(data.variant.tolist(), data.fixture.tolist(), data.repetition.tolist(),
                          data.status.tolist(), strict=True):
        present[f][v] = present[f][v] or s != MISSING
        cut[f] = cut[f] or s == TRUNCATED
        if s == OK:
            scored[f][v].add(r)
    out: dict[str, list[str]] = {}
    for f, name in enumerate(data.fixtures):
        a, b = scored[f]
        if cut[f] or a & b:
            continue
        why = NO_COMMON_EPOCH if a and b else ONE_LOG_ONLY if not all(present[f]) else UNSCORED
        out.setdefault(why, []).append(name)
    return out


def left_out_note(left: dict[str, list[str]], total: int) -> str:
    """One line naming the samples left out of the figures and why (at most ten ids per reason, the rest counted)."""
    parts = [", ".join(ids[:_LISTED]) + (f" and {len(ids) - _LISTED:,} more" if len(ids) > _LISTED else "")
             + f" ({why})" for why, ids in left.items()]
    n = sum(len(ids) for ids in left.values())
    return f"left out of the figures, {n:,} of {total:,} sample(s): " + "; ".join(parts)
