"""`benchcard plan`: what a run of a card will take, and — from a pilot run — what it can hope to detect.

Before a run: the number of calls, input tokens (estimated as characters / 4 of every request's messages),
the output-token ceiling (max_tokens × calls) and the cost those imply under the `prices:` table of
`benchcard.yaml` (USD per million tokens), or "no price configured". The counting is `plan.estimate`'s, the
grid module the runner uses, so the plan and the run agree on what a cell is.

With a pilot run (`--from RUN`): for every gap clause, the smallest true gap at which the verdict's own rule
(crossed.py + decision.py: the calibrated interval, the sign-flip, min_effect) holds in 80% of simulated runs
of this card's fixtures and repetitions, drawn from the pilot's variance components (simulate.py), with the
range the pilot's own uncertainty allows; for a guard, the true gap below which it holds 80% of the time. A
design that can never win (one repetition, too few fixtures for the sign-flip) is said so, and a pilot with
cells cut off by max_tokens is named.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchcard import ledger
from benchcard.card.model import Card
from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.verdict import simulate, stats

POWER = 0.80
SEED = 20261201  # the simulations are seeded: the same plan always prints the same figures
METHOD = (f"{simulate.DRAWS:,} simulated runs of this card's size judged by the verdict's own rule, from the "
          "pilot's variance components (fixture, run, cell)")


def plan(project: Project, card: Card, pilot: str | Path | None = None) -> dict[str, Any]:
    """The plan of one run of `card` as JSON-ready data (see the module docstring)."""
    from benchcard.run import grid as grid
    from benchcard.run.judging import judge_estimate
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
    out["judge"] = judge_estimate(project, card, prices)
    if pilot is not None:
        out["pilot"] = _pilot(project, card, pilot)
    result: dict[str, Any] = ledger.strict(out)
    return result


def _pilot(project: Project, card: Card, pilot: str | Path) -> dict[str, Any]:
    from benchcard.verdict.give import find_run
    from benchcard.verdict.runfolder import read_manifest, read_run

    run_dir = find_run(project, pilot)
    manifest = read_manifest(run_dir)
    if manifest.card != card.id:
        raise RunError(f"{run_dir.name}: a run of {manifest.card}, not of {card.id}; a pilot must be a run "
                       "of the card being planned")
    data = read_run(run_dir, manifest=manifest, baseline=card.baseline, allow_incomplete=True)
    notes = []
    if manifest.version != card.version:
        notes.append(f"the pilot ran v{manifest.version}; this plan is for v{card.version}")
    info: dict[str, Any] = {"run": run_dir.name, "version": manifest.version, "power": POWER,
                            "method": METHOD, "clauses": [], "notes": notes}
    # Cost per call actually observed, to set beside the ceiling.
    import numpy as np

    answered = data.status != 3
    truncated = int((data.status == 1).sum())
    if truncated:
        notes.append(f"{truncated} of {len(data.cells)} pilot cell(s) were cut off at max_tokens "
                     f"{manifest.params.get('max_tokens', '?')}: they count against allow_failed and are "
                     "bounded at the worst case by the verdict — raise max_tokens before sealing")
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
            entry.update(fixtures=n_fixtures, repetitions=card.repetitions, simulated_runs=simulate.DRAWS)
            try:
                comp = simulate.components(base, var)
            except ValueError as exc:
                entry["note"] = str(exc)
                info["clauses"].append(entry)
                continue
            entry.update(pilot_components={"fixture": comp.fixture, "run": comp.run, "cell": comp.cell},
                         pilot_df=comp.df)
            never = _never(n_fixtures, card.repetitions, alpha)
            if clause.test in ("rises", "falls"):
                if never:
                    entry.update(needed_gap=math.inf, needed_gap_range=[math.inf, math.inf], never=never)
                else:
                    draws = simulate.draws(n_fixtures, card.repetitions, SEED)
                    min_effect = card.win.min_effect if clause is card.win.clauses[0] else 0.0
                    gap = simulate.needed_gap(comp, draws, alpha, POWER, min_effect)
                    lo, hi = simulate.pilot_range(comp.df)
                    entry.update(needed_gap=gap, needed_gap_range=[gap * lo, gap * hi])
            else:
                margin = float(clause.margin or 0.0)
                if card.repetitions < 2:
                    entry.update(passes_if_true_gap_below=-math.inf, never=never)
                else:
                    draws = simulate.draws(n_fixtures, card.repetitions, SEED)
                    limit = simulate.guard_limit(comp, draws, margin, alpha, POWER)
                    entry.update(passes_if_true_gap_below=limit if clause.test == "not_rises" else None,
                                 passes_if_true_gap_above=-limit if clause.test == "not_falls" else None)
            info["clauses"].append(entry)
    return info


def _never(fixtures: int, repetitions: int, alpha: float) -> str | None:
    """Why a design can never show an effect, or None."""
    if repetitions < 2:
        return "one repetition can never win: the run-to-run spread cannot be measured"
    if 2.0 / 2.0 ** fixtures > alpha:
        return f"{fixtures} fixture(s) can never win: the exact sign-flip p is at least {2 / 2 ** fixtures:.4g} > α"
    return None


def _f(x: Any, digits: int = 3) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return f"{x:.{digits}f}"


def plan_lines(p: dict[str, Any]) -> list[str]:
    """The plan as the terminal shows it."""
    from benchcard.run.judging import judge_plan_lines

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
    lines += judge_plan_lines(p.get("judge"))
    pilot = p.get("pilot")
    if pilot:
        lines.append(f"pilot {pilot['run']}:")
        if "expected_cost" in pilot:
            lines.append(f"  observed ${pilot['observed_cost_per_call']:.5f} per call → about "
                         f"${pilot['expected_cost']:,.4f} for this run")
        for note in pilot["notes"]:
            lines.append(f"  note: {note}")
        if pilot["clauses"]:
            lines.append(f"  power of the rule itself, {int(pilot['power'] * 100)}% ({pilot['method']}):")
        for c in pilot["clauses"]:
            name = f"{c['metric']} {c['test']}" + (f" on {c['fixture']}" if c.get("fixture") else "")
            head = f"    {name} ({c['variant']})"
            if "note" in c:
                lines.append(f"{head}: {c['note']}")
            elif c["test"] == "holds":
                lines.append(f"{head}: pilot {c['k']} of {c['n']} → all {p['repetitions']} repetitions hold with "
                             f"probability ≈ {_f(c['chance_all_hold'], 2)} at the pilot's rate, "
                             f"{_f(c['chance_all_hold_low'], 2)} at its Wilson lower bound")
            elif c.get("never"):
                lines.append(f"{head}: {c['never']}")
            elif "needed_gap" in c:
                lo, hi = c["needed_gap_range"]
                lines.append(f"{head}: {c['fixtures']} fixtures × {c['repetitions']} repetitions → a true gap of "
                             f"{_f(c['needed_gap'])} holds in 80% of simulated runs (pilot uncertainty: "
                             f"{_f(lo)} to {_f(hi)})")
            else:
                side, key = (("below", "passes_if_true_gap_below") if c["test"] == "not_rises"
                             else ("above", "passes_if_true_gap_above"))
                lines.append(f"{head}: the guard (margin {c['margin']:g}) holds in 80% of simulated runs only if "
                             f"the true gap is {side} {_f(c[key])}")
    return lines
