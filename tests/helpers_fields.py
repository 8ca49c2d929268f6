"""BENCH-01's fixtures and keys as the `fields` scorer reads them, and one correct answer for excerpt-01 in every
shape models write it: shared by the tests of the scorer, its reader (fieldparse) and its text (fieldtext)."""

from __future__ import annotations

import json
from pathlib import Path

from benchcard.records.answerkey import AnswerKey
from benchcard.scoring.fields import FieldsSpec, load_key, score_fields

ROOT = Path(__file__).resolve().parents[1]


FIXTURES = ROOT / "fixtures" / "bench-01"


KEYS = ROOT / "keys" / "bench-01"


SPEC = FieldsSpec(("parties", "effective_date", "termination_rights", "obligations"), "termination_rights")


def excerpt(fixture: str) -> str:
    return (FIXTURES / f"{fixture}.txt").read_text(encoding="utf-8")


def key(fixture: str) -> AnswerKey:
    return load_key(KEYS / f"{fixture}.json", SPEC)


def score(fixture: str, output: str) -> dict[str, float]:
    return score_fields(output, key(fixture), excerpt(fixture), SPEC)


# ------------------------------------------------------------------ shapes of output
PARTIES_01 = ["Brackenfield Components Ltd", "Tallow & Reed Manufacturing Limited"]


DATE_01 = "1 March 2024"


TERMINATION_01 = ["not less than ninety (90) days' written notice", "commits a material breach of this Agreement"]


OBLIGATIONS_01 = [
    "provide the Supplier with a rolling twelve-month forecast",
    "maintain a buffer stock of Products of not less than six weeks' forecast demand",
    "notify the Buyer in writing within 48 hours of becoming aware of any quality non-conformance",
]


def bullets(items: list[str], indent: str = "") -> str:
    return "\n".join(f"{indent}- {x}" for x in items)


def shapes() -> dict[str, str]:
    """The same correct answer for excerpt-01 in every shape models produce."""
    p, d, t, o = PARTIES_01, DATE_01, TERMINATION_01, OBLIGATIONS_01
    as_json = json.dumps({"parties": p, "effective_date": d, "termination_rights": t, "obligations": o}, indent=2)
    wrapped = {"contract": {"Parties": [{"name": p[0], "role": "Supplier"}, {"name": p[1], "role": "Buyer"}],
                            "Effective Date": d, "Termination Rights": {"notice": t[0], "breach": t[1]},
                            "Obligations": o}}
    term_rows = "".join(f"| {'Termination rights' if i == 0 else ''} | {x} |\n" for i, x in enumerate(t))
    return {
        "markdown list": f"- **Parties:** {p[0]} and {p[1]}\n- **Effective date:** {d}\n"
                         f"- **Termination rights:**\n{bullets(t, '  ')}\n- **Obligations:**\n{bullets(o, '  ')}",
        "headings": f"# Extraction\n\n## Parties\n{bullets(p)}\n\n## Effective Date\n{d}\n\n"
                    f"## Termination Rights\n{bullets(t)}\n\n## Obligations\n{bullets(o)}\n\n## Notes\nNone.",
        "bold labels": f"**Parties**\n{p[0]}; {p[1]}\n\n**Effective date**\n{d}\n\n**Termination rights**\n"
                       f"{bullets(t, '* ')}\n\n**Obligations**\n" + "\n".join(f"{i}. {x}" for i, x in enumerate(o, 1)),
        "label lines": f"Parties: {p[0]}; {p[1]}\nEffective date: {d}\nTermination: {'; '.join(t)}\n"
                       f"Obligations: {'; '.join(o)}",
        "bare json": as_json,
        "fenced json": f"Here is the extraction:\n\n```json\n{as_json}\n```\n\nAll values are quoted verbatim.",
        "wrapped json": json.dumps(wrapped),
        "vertical table": f"| Field | Value |\n|---|---|\n| Parties | {p[0]}<br>{p[1]} |\n| Effective date | {d} |\n"
                          f"{term_rows}| Obligations | {'; '.join(o)} |\n",
        "horizontal table": "| Parties | Effective date | Termination rights | Obligations |\n|---|---|---|---|\n"
                            f"| {p[0]}; {p[1]} | {d} | {'; '.join(t)} | {'; '.join(o)} |",
        "nested sub-labels": f"1. **Parties**\n   - **Supplier:** {p[0]}\n   - **Buyer:** {p[1]}\n"
                             f"2. **Effective date:** {d}\n3. **Termination rights**\n"
                             f"   - *Convenience:* {t[0]}\n   - *Breach:* {t[1]}\n4. **Obligations**\n"
                             + "\n".join(f"   - **Clause 6.{i}:** {x}" for i, x in enumerate(o, 1)),
    }
