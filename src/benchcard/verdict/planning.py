"""`benchcard plan`: what a run of a card will take, and — from a pilot run — what it can hope to detect.

Before a run: the number of calls, input tokens (estimated as characters / 4 of every request's messages),
the output-token ceiling (max_tokens × calls) and the cost those imply under the `prices:` table of
`benchcard.yaml` (USD per million tokens), or "no price configured". The counting is `plan.estimate`'s, the
grid module the runner uses, so the plan and the run agree on what a cell is.

With a pilot run (`--from RUN`): for every clause metric, the smallest true gap this card's fixtures and
repetitions detect with 80% power at the card's α — the paired minimum detectable effect

    MDE = (z_{1−α/2} + z_{0.80}) · sd_d / √F

with sd_d the pilot's sd of per-fixture differences, rescaled to the card's repetitions by the pilot's
variance components. This is the paired power analysis of Miller 2024, "Adding Error Bars to Evals"
(arXiv 2411.00640), Eq. 9, solved for the effect instead of the sample size (see docs/statistics.md on what
was and was not checked of the paper). Normal quantiles make it a lower bound for a dozen fixtures.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchcard import ledger
from benchcard.card.model import Card
from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.verdict import power, stats

POWER = 0.80
CITATION = 'Miller 2024, "Adding Error Bars to Evals" (arXiv 2411.00640), Eq. 9 — paired power analysis'


def plan(project: Project, card: Card, pilot: str | Path | None = None) -> dict[str, Any]:
    """The plan of one run of `card` as JSON-ready data (see the module docstring)."""
    from benchcard.run import grid as grid
    from benchcard.run.providers import load_config, price_table

    prices = price_table(load_config(project.root))
    est = grid.estimate(card, card.rig.model, prices)
    price = prices.get(card.rig.model)
    out: dict[str, Any] = {
        "card": card.id,
        "version": card.version,
        "kind": card.kind,
        "rig": card.rig.line(),
        "model": card.rig.model,
        "variants": len(card.variant_names()),
        "fixtures": len(card.fixture_ids()),
        "repetitions": card.repetitions,
        "calls": est.calls,
        "input_tokens": est.input_tokens,
        "input_tokens_method": "characters / 4 of every request's messages",
        "max_output_tokens": est.max_output_tokens,
        "max_tokens": int(card.params["max_tokens"]),
        "price": None if price is None else {"input": price.input, "output": price.output, "unit": "USD per 1M tokens"},
        "max_cost": est.max_cost,
        "input_cost": None if price is None else est.input_tokens * price.input / 1_000_000,
        "pilot": None,
    }
    if card.rig.provider == "local":  # the embedded model runs on this machine: it costs nothing per call
        out.update(price={"input": 0.0, "output": 0.0, "unit": "USD per 1M tokens"}, max_cost=0.0, input_cost=0.0)
    if pilot is not None:
        out["pilot"] = _pilot(project, card, pilot)
    result: dict[str, Any] = ledger.strict(out)
    return result


def _pilot(project: Project, card: Card, pilot: str | Path) -> dict[str, Any]:
    from benchcard.verdict.give import find_run
    from benchcard.verdict.runfolder import read_manifest, read_run

    run_dir = find_run(project, pilot)
    manifest = read_manifest(run_dir)
    if manifest.get("card") != card.id:
        raise RunError(f"{run_dir.name}: a run of {manifest.get('card')}, not of {card.id}; a pilot must be a run "
                       "of the card being planned")
    data = read_run(run_dir, manifest=manifest, baseline=card.baseline, allow_incomplete=True, tokens=True)
    notes = []
    if manifest.get("version") != card.version:
        notes.append(f"the pilot ran v{manifest.get('version')}; this plan is for v{card.version}")
    info: dict[str, Any] = {"run": run_dir.name, "version": manifest.get("version"), "power": POWER,
                            "method": CITATION, "clauses": [], "notes": notes}
    # Cost per call actually observed, to set beside the ceiling.
    import numpy as np

    answered = data.status != 3
    if answered.any() and not np.isnan(data.cost[answered]).all():
        per_call = float(np.nanmean(data.cost[answered]))
        info["observed_cost_per_call"] = per_call
        info["expected_cost"] = per_call * len(card.variant_names()) * len(card.fixture_ids()) * card.repetitions
    out_tokens = data.tokens["output"][answered] if data.tokens else np.empty(0)
    if out_tokens.size and not np.isnan(out_tokens).all():
        info["observed_output_tokens_per_call"] = float(np.nanmean(out_tokens))
    if not card.is_ab or card.win is None or card.baseline is None:
        notes.append("a probe compares nothing; there is no gap to detect")
        return info
    alpha = card.win.alpha
    z = stats.norm_ppf(1 - alpha / 2) + stats.norm_ppf(POWER)
    z_one = stats.norm_ppf(1 - alpha) + stats.norm_ppf(POWER)
    others = [v for v in card.variant_names() if v != card.baseline and v in data.variants]
    for clause in card.win.clauses:
        for variant in others:
            entry: dict[str, Any] = {"metric": clause.metric, "test": clause.test, "fixture": clause.fixture,
                                     "margin": clause.margin, "variant": variant}
            values = data.metrics.get(clause.metric)
            if values is None:
                entry["note"] = f"the pilot has no {clause.metric!r} scores"
                info["clauses"].append(entry)
                continue
            if clause.test == "holds":
                assert clause.fixture is not None
                row = data.grid(values, variant, [clause.fixture])[0] if clause.fixture in data.fixtures else None
                scored = row[~np.isnan(row)] if row is not None else np.array([])
                k = int((np.abs(scored - clause.equals) <= 1e-9).sum())
                rate = k / scored.size if scored.size else None
                low = stats.wilson(k, int(scored.size), alpha)[0] if scored.size else None
                entry.update(k=k, n=int(scored.size), rate=rate,
                             chance_all_hold=None if rate is None else rate ** card.repetitions,
                             chance_all_hold_low=None if low is None else low ** card.repetitions)
                info["clauses"].append(entry)
                continue
            fixtures = [clause.fixture] if clause.fixture else None
            base = data.grid(values, card.baseline, fixtures)
            var = data.grid(values, variant, fixtures)
            n_fixtures = 1 if clause.fixture else len(card.fixture_ids())
            try:
                vc = power.variance_components(base, var)
            except ValueError as exc:
                entry["note"] = str(exc)
                info["clauses"].append(entry)
                continue
            same_reps = vc.repetitions_baseline == vc.repetitions_variant == card.repetitions
            # The pilot's own sd(d) when it ran this card's repetitions; else rescaled by its variance
            # components (conservative when the between-fixture part is floored at 0).
            sd_at = vc.sd_diff if same_reps or not math.isfinite(vc.sd_diff) else vc.sd_diff_at(card.repetitions)
            mde = power.detectable_gap(sd_at, n_fixtures, alpha, POWER) if math.isfinite(sd_at) else math.inf
            entry.update(sd_diff_pilot=vc.sd_diff, pilot_fixtures=vc.n_fixtures,
                         pilot_repetitions=vc.repetitions_baseline, sd_diff=sd_at, fixtures=n_fixtures,
                         repetitions=card.repetitions, rescaled=not same_reps, detectable_gap=mde,
                         between_var=vc.between_var, within_var=(vc.within_var_baseline + vc.within_var_variant) / 2)
            if clause.test in ("rises", "falls"):
                nf = stats.noise_floor(base, alpha)
                r = card.repetitions
                nf_at = (stats.t_ppf(1 - alpha / 2, r - 1) * nf.sd * math.sqrt(2 / r)
                         if r >= 2 and math.isfinite(nf.sd) else math.inf)
                entry.update(noise_floor_pilot=nf.value, noise_floor=nf_at, needed_gap=max(mde, nf_at))
            else:
                margin = float(clause.margin or 0.0)
                # the guard passes (upper bound < margin) with 80% power only if the true gap is this far inside
                slack = z_one * sd_at / math.sqrt(n_fixtures) if math.isfinite(sd_at) else math.inf
                entry.update(passes_if_true_gap_below=margin - slack)
            info["clauses"].append(entry)
    info["z"] = z
    return info


def _f(x: Any, digits: int = 3) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return f"{x:.{digits}f}"


def plan_lines(p: dict[str, Any]) -> list[str]:
    """The plan as the terminal shows it."""
    lines = [f"{p['card']} v{p['version']} ({p['kind']}) · {p['rig']}"]
    shape = (f"{p['variants']} variants × {p['fixtures']} fixtures × {p['repetitions']} repetitions"
             if p["kind"] == "ab" else f"{p['repetitions']} repetitions")
    lines.append(f"calls           {p['calls']:,}  ({shape})")
    lines.append(f"input tokens    ~{p['input_tokens']:,}  (estimate: {p['input_tokens_method']})")
    lines.append(f"output tokens   ≤ {p['max_output_tokens']:,}  (max_tokens {p['max_tokens']:,} × "
                 f"{p['calls']:,} calls)")
    if p["price"] is None:
        lines.append(f"cost            no price configured for {p['model']} (add prices: {{{p['model']}: "
                     "{input: USD, output: USD}} per million tokens to benchcard.yaml)")
    else:
        pr = p["price"]
        lines.append(f"cost            ≤ ${p['max_cost']:,.4f}  (input ~${p['input_cost']:,.4f}; at ${pr['input']:g} / "
                     f"${pr['output']:g} per million input / output tokens, every call using all its max_tokens)")
    pilot = p.get("pilot")
    if pilot:
        lines.append(f"pilot {pilot['run']}:")
        if "expected_cost" in pilot:
            lines.append(f"  observed ${pilot['observed_cost_per_call']:.5f} per call → about "
                         f"${pilot['expected_cost']:,.4f} for this run")
        for note in pilot["notes"]:
            lines.append(f"  note: {note}")
        if pilot["clauses"]:
            lines.append(f"  smallest gap detectable at {int(pilot['power'] * 100)}% power ({pilot['method']}):")
        for c in pilot["clauses"]:
            name = f"{c['metric']} {c['test']}" + (f" on {c['fixture']}" if c.get("fixture") else "")
            head = f"    {name} ({c['variant']})"
            if "note" in c:
                lines.append(f"{head}: {c['note']}")
            elif c["test"] == "holds":
                lines.append(f"{head}: pilot {c['k']} of {c['n']} → all {p['repetitions']} repetitions hold with "
                             f"probability ≈ {_f(c['chance_all_hold'], 2)} at the pilot's rate, "
                             f"{_f(c['chance_all_hold_low'], 2)} at its Wilson lower bound")
            else:
                text = (f"{head}: sd(d) {_f(c['sd_diff_pilot'])} in the pilot → {_f(c['sd_diff'])} at "
                        f"{c['repetitions']} repetitions; {c['fixtures']} fixtures → MDE {_f(c['detectable_gap'])}")
                if "needed_gap" in c:
                    text += (f"; noise floor ≈ {_f(c['noise_floor'])}, so a gap must exceed ≈ "
                             f"{_f(c['needed_gap'])} to rise")
                else:
                    text += (f"; the guard (margin {c['margin']:g}) passes 80% of the time only if the true gap is "
                             f"below {_f(c['passes_if_true_gap_below'])}")
                lines.append(text)
    return lines
