"""Parts of a card page shared by probes and run cards: scoring, history, parameters, the request to run
it yourself, and the schema.org Dataset JSON-LD."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from benchcard.card.model import Card
from benchcard.errors import BenchcardError
from benchcard.project import ProjectConfig
from benchcard.publish._render import json_ld
from benchcard.publish._runs import Run
from benchcard.records.rows import rig_line
from benchcard.scoring.fields import FieldsSpec
from benchcard.scoring.judge import JudgeSpec
from benchcard.scoring.scorers import ExactSpec, RulesSpec

SCHEMA_ORG = "https://schema.org"


def scoring_view(card: Card) -> dict[str, Any]:
    """How the card scores an output, for the page."""
    spec = card.scoring
    if isinstance(spec, ExactSpec):
        how = ["surrounding whitespace ignored" if spec.trim else "whitespace significant"]
        if not spec.case_sensitive:
            how.append("case-insensitive")
        return {"method": "exact", "expected": spec.expected, "how": ", ".join(how),
                "from_key": spec.expected_from_key}
    if isinstance(spec, RulesSpec):
        rules = [{"id": r.id, "kind": "must match" if r.kind == "must_match" else "must NOT match",
                  "pattern": r.pattern, "why": r.why} for r in spec.rules]
        return {"method": "rules", "rules": rules}
    if isinstance(spec, JudgeSpec):
        return {"method": "judge", "judge": judge_view(card)}
    assert isinstance(spec, FieldsSpec)
    return {"method": "fields", "fields": list(spec.fields), "abstain_field": spec.abstain_field}


def judge_view(card: Card) -> dict[str, Any] | None:
    """A judge card's sealed judge, for the page: who judges, how often, what it is shown and how it answers."""
    spec = card.scoring
    if not isinstance(spec, JudgeSpec):
        return None
    return {"rig": rig_line(spec.model, spec.effort, None, spec.provider),
            "params": [(k, json.dumps(v)) for k, v in spec.params.items()], "k": spec.judgements,
            "scale": spec.scale.describe(), "answer": spec.answer, "floor": spec.agreement_floor,
            "rubric": spec.rubric if isinstance(spec.rubric, str) else None,
            "criteria": [{"id": c.id, "ask": c.ask} for c in spec.criteria],
            "system": spec.system, "user": spec.user}


def history_view(card: Card) -> list[dict[str, Any]]:
    """The card's versions, newest first, with what each changed."""
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


def params_view(card: Card) -> list[tuple[str, str]]:
    """The request parameters as (name, text) pairs, with effort and repetitions."""
    out = [(k, json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v) for k, v in card.params.items()]
    if card.rig.effort:
        out.append(("effort", card.rig.effort))
    if card.repetitions != 1:
        out.append(("repetitions", str(card.repetitions)))
    return out


def curl_view(card: Card, config: ProjectConfig, variant: str | None = None, fixture: str | None = None) -> str:
    """The "Run it yourself" command, or a comment saying why it cannot be built."""
    from benchcard.run.curl import curl_command

    try:
        return curl_command(card, config, variant=variant, fixture=fixture, public=True)
    except BenchcardError as exc:
        return f"# cannot build the request: {exc}"


def dataset_json_ld(card: Card, runs: Sequence[Run], page_root: str) -> Markup | None:
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
                                 "fields": "field extraction scored against an answer key",
                                 "judge": "a sealed model judge, blind to the variant"}[
            scoring_view(card)["method"]],
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
