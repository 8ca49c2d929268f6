"""A judge card's verdict figures: how far the judge agrees with itself (and with people), how much of the gap's
uncertainty is the judge's noise, whether it favours long outputs, and the declared agreement floor.

Self-agreement is Krippendorff's alpha over the k judgements of each output (nominal for pass/fail, interval
otherwise), per metric. The judge's noise needs no second test: each cell's score is the mean of its judgements,
so the paired interval over fixtures already carries it; `noise` says how large a share of the gap's variance it
is. A run whose judge agreed with itself below the card's `agreement_floor` is inconclusive, whatever its gap:
grades a judge cannot repeat cannot carry a result. See docs/judge.md.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from benchcard._util.hashing import file_digest
from benchcard._util.numfmt import fixed
from benchcard.card.model import Card
from benchcard.errors import VerdictError
from benchcard.records.ledgerrow import JudgeFigures
from benchcard.records.rows import SealedJudging
from benchcard.records.runreader import JudgeReader, RunReader
from benchcard.records.verdictfigures import HumansSeen, JudgeBlock, JudgeNoise, SelfAgreement, Verbosity
from benchcard.records.verdictfile import AbVerdict, VerdictFile
from benchcard.scoring.judge import JudgeSpec, read_judgements
from benchcard.stats.reliability import krippendorff_alpha
from benchcard.verdict.runfolder import OK, RunData


def with_judge(card: Card, data: RunData, verdict: VerdictFile) -> VerdictFile:
    """The verdict with its `judge` block (judge cards only), the floor applied to the finding."""
    spec = card.judge_spec
    if spec is None:
        return verdict
    figures = judge_figures(spec, data, verdict, card.baseline)
    verdict = msgspec.structs.replace(verdict, judge=figures)
    if figures.floor_met is False and verdict.finding != "incomplete":  # an unjudged grid stays incomplete
        alpha = figures.self_agreement.alpha
        said = "could not be measured" if alpha is None else f"was {alpha:.3f}"
        why = (f"the judge's agreement with itself (Krippendorff's alpha) {said}, below the declared floor "
               f"{spec.agreement_floor:g}: grades the judge cannot repeat cannot carry a result")
        verdict = msgspec.structs.replace(
            verdict, finding="inconclusive", outcome="non-result", why=why,
            summary=f"{card.id} v{card.version}, run {data.run_dir.name}: inconclusive (non-result). {why}")
        if isinstance(verdict, AbVerdict):
            verdict = msgspec.structs.replace(verdict, comparisons=[
                msgspec.structs.replace(comp, finding="inconclusive", outcome="non-result", why=why)
                for comp in verdict.comparisons])
    return verdict


def _check_digests(data: RunData, jstore: JudgeReader) -> None:
    manifest = data.manifest
    run = data.run_dir.name
    planned = manifest.judge.requests_digest if manifest.judge else None
    expected = manifest.judge_outputs_digest
    if not planned or not expected:
        raise VerdictError(f"run {run}: its manifest has no judge digests; cannot show the judging is unchanged")
    later = [(jstore.folder / s.file, s.requests_digest) for s in manifest.judge_stretches or []]
    for path, digest in ((jstore.judge_requests_path, planned), *later, (jstore.outputs_path, expected)):
        if not path.is_file():
            raise VerdictError(f"run {run}: {path.name} is missing")
        actual = file_digest(path)
        if actual != digest:
            raise VerdictError(f"run {run}: {path.name} changed after the judging (manifest {digest}, file now "
                               f"{actual})")


def judge_figures(spec: JudgeSpec, data: RunData, verdict: VerdictFile,
                  baseline: str | None) -> JudgeBlock:
    """The `judge` block of verdict.json; refuses judge files changed since the run finished."""
    jstore = JudgeReader(data.run_dir)
    _check_digests(data, jstore)
    manifest = data.manifest
    judged = read_judgements(spec, jstore)
    level = "nominal" if spec.scale.nominal else "interval"
    metrics = sorted(spec.metric_names())
    per_metric: dict[str, float | None] = {}
    for name in metrics:
        # a criteria score is a mean of grades: interval, whatever the scale of each grade
        kind = level if name != "score" or not spec.criteria else "interval"
        units = [[g[name] if g is not None else math.nan for g in grades] for grades in judged.values()]
        per_metric[name] = krippendorff_alpha(units, kind)  # type: ignore[arg-type]
    scores = [[g["score"] for g in grades if g is not None] for grades in judged.values()]
    pairable = [s for s in scores if len(s) >= 2]
    exact = sum(1 for s in pairable if max(s) - min(s) < 1e-12) / len(pairable) if pairable else None
    alpha = per_metric["score"]
    floor = spec.agreement_floor
    plan = manifest.judge or SealedJudging()
    run_model = manifest.rig.model if manifest.rig else None
    judge_rig = plan.rig
    human = verdict.human
    return JudgeBlock(
        rig=judge_rig.line if judge_rig else None,
        per_output=spec.judgements,
        judgements=manifest.judgements_planned if manifest.judge else None,
        counts=manifest.judge_counts,
        cost=manifest.judge_cost,
        cost_upper_bound=True if manifest.judge_cost is not None and manifest.judge_cost_upper_bound else UNSET,
        tokens=msgspec.to_builtins(manifest.judge_tokens),
        self_agreement=SelfAgreement(alpha=alpha, level=level, outputs=len(pairable), exact=exact,
                                     by_metric={k: v for k, v in per_metric.items() if k != "score"}),
        floor=floor,
        floor_met=None if floor is None else (alpha is not None and alpha >= floor),
        noise=_noise(spec, data, pairable, baseline),
        verbosity=_verbosity(data),
        same_model_as_run=judge_rig is not None and bool(judge_rig.model) and judge_rig.model == run_model,
        redacted=sum(r.redacted for r in jstore.iter_judge_requests()) // spec.judgements,
        humans=UNSET if isinstance(human, UnsetType) else HumansSeen(human.graded, human.kappa, human.agreement),
    )


def _noise(spec: JudgeSpec, data: RunData, pairable: list[list[float]], baseline: str | None) -> JudgeNoise:
    """The judge's own spread: the pooled sd of one output's judgements, and its share of the variance of the
    score's gap (each fixture's gap carries 2·s²/(k·R) of judge variance, R the repetitions)."""
    if not pairable:
        return JudgeNoise(None, None)
    dof = sum(len(s) - 1 for s in pairable)
    pooled = sum(float(np.var(s, ddof=1)) * (len(s) - 1) for s in pairable) / dof
    share: dict[str, float | None] = {}
    if baseline is not None and baseline in data.variants:
        reps = max(1, len(data.repetitions))
        base = _row_means(data.grid(data.score, baseline))
        for variant in data.variants:
            if variant == baseline:
                continue
            d = _row_means(data.grid(data.score, variant)) - base
            d = d[~np.isnan(d)]
            observed = float(np.var(d, ddof=1)) if d.size > 1 else math.nan
            judge_part = 2 * pooled / (spec.judgements * reps)
            share[variant] = min(1.0, judge_part / observed) if observed > 0 else None
    return JudgeNoise(math.sqrt(pooled), share or None)


def _row_means(grid: np.ndarray[Any, np.dtype[np.float64]]) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Each fixture's mean over its scored repetitions; NaN for a fixture with none (without a warning)."""
    counts = (~np.isnan(grid)).sum(axis=1)
    out: np.ndarray[Any, np.dtype[np.float64]] = np.where(counts > 0, np.nansum(grid, axis=1) / np.maximum(counts, 1),
                                                          np.nan)
    return out


def _verbosity(data: RunData) -> Verbosity:
    """Spearman's rho between an output's length and its judged score, and the mean length per variant: a judge
    that rewards length shows here, and a variant that only lengthens outputs would win on it. (scipy.stats is
    imported here, for a judged verdict: importing it costs about 0.5 CPU-s, and `benchcard run` imports this
    module for its report's lines.)"""
    from scipy import stats as sps

    index = {c: i for i, c in enumerate(data.cells)}
    lengths = np.full(len(data.cells), np.nan)
    for row in RunReader(data.run_dir).iter_outputs():
        i = index.get(row.cell)
        if i is not None and row.status == "ok":
            lengths[i] = len(row.text)
    ok = (data.status == OK) & ~np.isnan(data.score) & ~np.isnan(lengths)
    mean_chars = {v: (float(np.mean(lengths[ok & (data.variant == j)])) if (ok & (data.variant == j)).any()
                      else None) for j, v in enumerate(data.variants)}
    rho: float | None = None
    if ok.sum() >= 3 and np.ptp(lengths[ok]) > 0 and np.ptp(data.score[ok]) > 0:
        rho = float(sps.spearmanr(lengths[ok], data.score[ok]).statistic)
    return Verbosity(rho, mean_chars)


def judge_lines(j: JudgeBlock | None) -> list[str]:
    """The judge's figures as the terminal shows them (none without a judge)."""
    if j is None:
        return []

    def num(x: Any) -> str:  # the judge's figures have always printed an ASCII minus
        return fixed(x, minus="-")

    agree = j.self_agreement
    floor = "" if j.floor is None else f" · floor {j.floor:g} {'met' if j.floor_met else 'NOT MET'}"
    counts = j.counts or {}
    lines = [f"judge {j.rig}: {j.per_output} judgement(s) per output · {counts.get('unreadable', 0)} "
             f"unreadable, {counts.get('truncated', 0)} truncated, {counts.get('failed', 0)} failed (never read "
             "as grades)",
             f"  self-agreement: Krippendorff's alpha ({agree.level}) {num(agree.alpha)}{_why_no_alpha(agree)} over "
             f"{agree.outputs} output(s) judged twice or more · identical grades {num(agree.exact)}{floor}"]
    share = j.noise.share_of_gap_variance or {}
    lines.append(f"  judge noise: sd {num(j.noise.sd)} per judgement"
                 + "".join(f" · {num(s)} of the {k} gap's variance" if num(s) != "n/a"
                           else f" · its share of the {k} gap's variance cannot be measured" for k, s in share.items()))
    verb = j.verbosity
    unmeasured = " (needs 3 scored outputs whose lengths and scores vary)" if verb.spearman_length_score is None else ""
    lines.append(f"  length vs score: Spearman {num(verb.spearman_length_score)}{unmeasured} · mean characters "
                 + " · ".join(f"{k} {x:.0f}" if x is not None else f"{k} n/a" for k, x in verb.mean_chars.items()))
    if j.same_model_as_run:
        lines.append("  note: the judge is the model under test (self-preference cannot be ruled out)")
    if not isinstance(j.humans, UnsetType):
        lines.append(f"  with human grades: Cohen's kappa {num(j.humans.kappa)} over {j.humans.graded}")
    return lines


def _why_no_alpha(agree: SelfAgreement) -> str:
    """Why the judge's alpha is n/a, which the bare `n/a` left to docs/judge.md: no output judged twice, or every
    judgement one grade (chance agreement total: nothing to disagree about, and nothing measured)."""
    if agree.alpha is not None:
        return ""
    return " (no output judged twice)" if not agree.outputs else " (every judgement gave one grade: nothing measured)"


def judge_table(j: JudgeBlock | JudgeFigures) -> dict[str, object]:
    """The judge block of a verdict as label → value, for a run's page. A ledger row's (`JudgeFigures`, shown
    when verdict.json is not) has only the headline (rig, judgements, alpha, floor): the rest shows as nothing."""
    full = j if isinstance(j, JudgeBlock) else None
    agree = full.self_agreement if full is not None else None
    counts = (full.counts if full is not None else None) or {}
    alpha = agree.alpha if agree is not None else (j.alpha if isinstance(j, JudgeFigures) else None)
    return {"judge": j.rig, "judgements per output": j.per_output,
            "Krippendorff's alpha (with itself)": alpha,
            "level": agree.level if agree is not None else None,
            "identical grades": agree.exact if agree is not None else None,
            "floor": j.floor, "floor met": j.floor_met,
            "noise sd per judgement": full.noise.sd if full is not None else None,
            "Spearman length vs score": full.verbosity.spearman_length_score if full is not None else None,
            "judge is the model under test": full.same_model_as_run if full is not None else None,
            "unreadable / truncated / failed": f"{counts.get('unreadable', 0)} / {counts.get('truncated', 0)} / "
                                               f"{counts.get('failed', 0)}",
            "variant echoes removed": full.redacted if full is not None else None}
