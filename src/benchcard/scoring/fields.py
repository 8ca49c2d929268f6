"""The field-extraction scorer behind BENCH-01: per-field recall, unsupported values, and abstention.

It is blind by construction: `score_fields` sees the output text, the fixture's key, the excerpt and the
scoring options — never the variant, model, run index or request. It only reads the output (``json.loads``
at most); nothing in it is executed or evaluated. The same input always gives the same numbers. Reading the
output into per-field lines and pieces is `fieldparse` (it sees neither key nor excerpt); this module judges
them: party names, support in the excerpt, abstention, the metrics.

Metrics (all floats): ``field_recall`` (key values found / all key values, across fields),
``field_recall.<field>`` (only for fields whose key has values, so none for excerpt 07's termination rights),
``unsupported_values`` (count of distinct returned values not in the excerpt), ``abstains`` (0/1, only when
the spec names an ``abstain_field``) and ``values_returned`` (count of distinct returned values).

Decisions a user of the numbers should know:

* **Sections.** A value counts for a field only if it sits in that field's section, found by label synonyms
  (``fieldparse.FIELD_LABELS``) in JSON keys, markdown headings, bold labels, ``Label: value`` lines, list items
  and table rows or columns. Text outside every section (all of it, for a prose answer) is read sentence by
  sentence, but only for the fields that have no section: each sentence piece goes to the fields whose cue
  words it contains (``party``/``between``, ``effective``/``dated``/a written date, ``terminat``,
  ``shall``/``must``/``obligation`` ...); pieces with no cue, and lead-ins ending in ':', are ignored. So a
  closing "The excerpt has no termination clause." counts when there is no termination section, and chatter
  such as "Let me know if you need more" never counts. A plain paragraph after a list or after a
  ``Label: value`` line is commentary and closes the section.
* **Restatement.** An output containing at least 75% of the excerpt's five-word runs is a restatement, not
  an extraction: it is scored as having no fields (recall 0, no values, abstains 0), whatever its structure,
  even when a correct extraction precedes the copy. (A long answer quoting every relevant clause in full
  stays under half.) Copying therefore cannot earn recall.
* **Recall.** A key value is found when its ``value`` or any ``accept`` form occurs, as whole words, in one
  line of the field's section after normalisation (``fieldtext.norm``: case, whitespace and all punctuation
  ignored; dates in any of the forms "3 February 2025", "the 3rd day of February 2025", "February 3, 2025",
  "2025-02-03" compare equal). Ambiguous numeric dates such as 03/02/2025 are not parsed.
* **Values.** A section is split into values on lines, list items, table cells, sentences, semicolons and
  "but"/"however"; a short sub-label ("Supplier: ...") is dropped first, and simple lead-ins ("The parties
  are", "The agreement is effective from") are removed. For ``parties`` a value is also split on "and";
  on ", " only when every piece is a name on its own — one of the key's party forms or ending in a legal
  form (Ltd, plc, Inc ...) — and the whole is not verbatim in the excerpt, so "Acme Ltd, Beta plc" is two
  values but "Acme, Inc.", "Smith, Jones & Co" and "X Ltd, a company registered in ..." stay one; and on
  "&" only where a part is not in the excerpt ("Tallow & Reed ..." and "Jones & Co" survive). Other fields
  are never split at commas: dates ("February 3, 2025"), amounts ("1,000,000") and clauses keep theirs.
  Values are de-duplicated across fields before counting; ``values_returned`` is that count.
* **Unsupported.** A value is supported when it occurs in the excerpt under the same normalisation (so a
  date written another way is supported; a paraphrase is not), or when every part of it split at
  parentheses, ellipses and dashes does ("Oakmere Foods plc (the Customer)"); a bare reference such as
  "(Clause 6.1)" needs only its number in the excerpt. A paraphrased clause therefore counts as unsupported:
  the card's rubric asks for verbatim values and this metric measures exactly that, not "hallucination".
* **Abstention.** "not stated", "none", "N/A", "the excerpt does not contain ...", "not a termination right"
  and similar are abstentions, never returned values. ``abstains`` is 1 only when the abstain field's section
  holds at least one abstention and no concrete value: "Not stated, but the Supplier may suspend deliveries"
  scores 0. A JSON ``null``, ``[]`` or ``""`` for the field counts as an explicit "not stated". A missing
  section is not an abstention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from benchcard.errors import CardError
from benchcard.records.answerkey import AnswerKey, read_key_file
from benchcard.scoring._fieldparse import parse, pieces
from benchcard.scoring._fieldtext import norm, restates, within, without_asides
from benchcard.scoring.textform import JS_SPACE, compared


@dataclass(frozen=True)
class FieldsSpec:
    """The card's ``scoring`` block for ``method: fields``, as the card states it (read by `scorers.py` with the
    other methods'): the field names, the one an abstention is written in, the first screen's length."""

    fields: tuple[str, ...]
    abstain_field: str | None
    first_screen_chars: int | None = None
    # whether key, excerpt and reply are compared in NFC (`textform.py`): kept out of the protocol, set by the
    # version's seal (`card/load.py`: False for a seal made before 2026-12-08, which compared them as stored)
    nfc: bool = True
    # whether the reply's ends lose JavaScript's white space before it is read (`textform.JS_SPACE`: a leading
    # U+FEFF hid a first label): set by the seal as `nfc` is (False for a seal without `whitespace: js`)
    js_trim: bool = True
    # whether a JSON reply's key written twice in one object gives both values (`{"parties": "Acme Ltd", "parties":
    # "Beta plc"}`) or only the last, as `json.loads` reads it: set by the seal (`textform.ALL_KEYS_RULE`, seal
    # field `json_keys`; False for a seal without it, whose runs were scored so)
    all_keys: bool = True


# ---------------------------------------------------------------- values, support, abstention
_SHORT_ABSTAIN = re.compile(
    r"\bnot\s+(?:explicitly\s+|expressly\s+|clearly\s+|specifically\s+)?(?:stated|specified|mentioned|"
    r"provided|included|addressed|found|present|given|identified|set\s+out|defined|contained|applicable|"
    r"available)\b|^(?:none|n/?a|nil|null|unknown|no|not\s+applicable|-+|—|–)"
    r"(?:\s+(?:stated|specified|found|mentioned))?$"
    r"|^none\b|\bno\s+(?:express\s+|explicit\s+|specific\s+|such\s+)?(?:termination|right\s+to\s+terminate|"
    r"rights?\s+of\s+termination|clause|provision)|\bthere\s+(?:is|are)\s+no\b|\b(?:is|are)\s+silent\b",
    re.IGNORECASE,
)
_ANY_ABSTAIN = re.compile(
    r"\b(?:excerpt|agreement|contract|text|document|clause|it)\s+(?:does|do|did)\s+not\s+(?:appear\s+to\s+)?"
    r"(?:contain|include|mention|specify|state|provide|address|set\s+out|grant|give|confer|cover)\b"
    r"|\bnot\s+(?:a|an)\s+(?:termination|right\s+to\s+terminate)\b"
    r"|\bnot\s+(?:amount\s+to|constitute)\s+(?:a\s+)?termination"
    r"|\bnot\s+(?:stated|specified|mentioned|included|found)\s+in\s+(?:the|this)\s+"
    r"(?:excerpt|agreement|contract|text)",
    re.IGNORECASE,
)
_REF = re.compile(r"(?:see\s+)?(?:clauses?|cl|sections?|s|sec|conditions?|paragraphs?|para|articles?|art|"
                  r"schedule|annex|exhibit|§)\.?\s*(\d+(?:\.\d+)*(?:\([a-z0-9]+\))?)\.?$", re.IGNORECASE)
_PART_SPLIT = re.compile(r"[()\[\]]|\.\.\.|…|\s[-–—]\s|--")


def _is_abstention(piece: str) -> bool:
    """Phrases like "not stated" count only in short pieces: "... not included in the Fees" is a value."""
    if _ANY_ABSTAIN.search(piece):
        return True
    return len(piece.split()) <= 12 and bool(_SHORT_ABSTAIN.search(piece))


def _in_excerpt(part: str, padded_excerpt: str) -> bool:
    """Whole words of the excerpt; a bare reference ("Clause 6.1", "s. 4") needs only its number there."""
    if within(norm(part), padded_excerpt):
        return True
    ref = _REF.match(part.strip())
    return ref is not None and within(norm(ref.group(1)), padded_excerpt)


def _supported(value: str, padded_excerpt: str) -> bool:
    """In the excerpt as a whole, or every parenthesis/ellipsis/dash-separated part of it is."""
    if _in_excerpt(value, padded_excerpt):
        return True
    parts = [p for p in _PART_SPLIT.split(value) if norm(p)]
    return len(parts) > 1 and all(_in_excerpt(p, padded_excerpt) for p in parts)


# A legal form that ends a company name, in ``norm`` form: "Acme, Inc." and "Smith, Jones & Co" are one name.
_FORMS = (r"ltd|limited|plc|inc|incorporated|llc|llp|lp|co|corp|corporation|company|gmbh|ag|kg|pty|pte|ulc|"
          r"s ?a|n ?v|b ?v|s ?l|s ?r ?l|s ?a ?r ?l|s ?p ?a")
_BARE_FORM = re.compile(rf"(?:{_FORMS})")
_ENDS_IN_FORM = re.compile(rf"\s(?:{_FORMS})$")


def _bare(text: str) -> str:
    """A name as compared with names: normalised, parentheticals such as a role ("(the Buyer)") dropped."""
    return norm(without_asides(text))


def _fragment(bit: str) -> bool:
    """A piece that cannot be a name by itself: a bare legal form ("Inc.", "Co") or no letters ("2025")."""
    return not re.search(r"[^\W\d_]", bit) or bool(_BARE_FORM.fullmatch(_bare(bit)))


def _split_names(text: str, sep: str, joiner: str) -> list[str]:
    """``text`` split at the pattern ``sep``, each fragment (see ``_fragment``) joined back to the piece before."""
    out: list[str] = []
    for bit in re.split(sep, text):
        if out and _fragment(bit):
            out[-1] += joiner + bit
        else:
            out.append(bit)
    return out


def _comma_names(part: str, padded_excerpt: str, names: frozenset[str]) -> list[str]:
    """A party list split at ", " only when every piece is a name on its own: a key party form or ending in a
    legal form. A comma is ambiguous ("Acme Ltd, Beta plc" is two names, "Acme, Inc." one), so text verbatim
    in the excerpt stays whole, fragments ("Inc.", "2025") stay with the piece before, pieces verbatim together
    in the excerpt stay together, and an unknown "Smith, Jones & Co" stays one value. "1,000,000" has no space.
    """
    if _in_excerpt(part, padded_excerpt) or _bare(part) in names:
        return [part]
    units = _split_names(part, r",\s+", ", ")
    out: list[str] = []
    i = 0
    while i < len(units):
        j = next(j for j in range(len(units), i, -1)
                 if j == i + 1 or _in_excerpt(", ".join(units[i:j]), padded_excerpt))
        out.append(", ".join(units[i:j]))
        i = j
    alone = all(_bare(n) in names or _ENDS_IN_FORM.search(_bare(n)) for n in out)
    return out if len(out) > 1 and alone else [part]


def _values(field: str, piece: str, padded_excerpt: str, names: frozenset[str] = frozenset()) -> list[str]:
    """A concrete piece as values. Only ``parties`` is a list of names, so only it splits: on "and", on
    commas (``_comma_names``) and on "&" where a part is not verbatim ("& Co" stays); the other fields are
    prose or a date, whose commas ("3 February, 2025", "pay 1,000, monthly") never separate values."""
    if field != "parties":
        return [piece]
    out: list[str] = []
    for part in (n for p in re.split(r",?\s+and\s+", piece) for n in _comma_names(p, padded_excerpt, names)):
        if _supported(part, padded_excerpt) or "&" not in part:
            out.append(part)
            continue
        out.extend(_split_names(part, r"\s*&\s*", " & "))
    return [p for p in out if norm(p)]


# ---------------------------------------------------------------- public API
def load_key(path: Path, spec: FieldsSpec, shown: str | None = None) -> AnswerKey:
    """Read and validate ``keys/<card>/<fixture>.json``; every error is one line naming file, line and field. The
    key returned holds each field's entries as {value, accept}, `not_stated` always."""
    read = read_key_file(path, shown)
    data = read.body
    if not isinstance(data.get("fixture"), str) or data["fixture"] != path.stem:
        raise read.not_its_fixture(path.stem)
    unknown = sorted(set(data) - {"fixture", "not_stated", *spec.fields})
    if unknown:
        raise read.fail(unknown[0], f"not a field of this card ({', '.join(spec.fields)})")
    not_stated = data.get("not_stated", [])
    if not isinstance(not_stated, list) or not all(n in spec.fields for n in not_stated):
        raise read.fail("not_stated", f"expected a list of field names from {', '.join(spec.fields)}")
    key: dict[str, Any] = {"fixture": data["fixture"], "not_stated": list(not_stated)}
    for field in spec.fields:
        clean = _key_entries(data.get(field), f"{read.where(field)}: expected a list of {{value, accept}}")
        if bool(clean) == (field in not_stated):
            expected = "no values, since it is in not_stated" if clean else "values, or listing in not_stated"
            raise read.fail(field, f"expected {expected}")
        key[field] = clean
    if not any(key[f] for f in spec.fields):
        raise read.fail(None, f"expected at least one value in {', '.join(spec.fields)}")
    return msgspec.structs.replace(read, body=key)


def _key_entries(entries: Any, shape: str) -> list[dict[str, Any]]:
    """One field's entries in a key, each {value, accept} checked; `shape` is the error naming file and field."""
    if not isinstance(entries, list):
        raise CardError(shape)
    clean: list[dict[str, Any]] = []
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) - {"value", "accept"}:
            raise CardError(shape)
        value, accept = entry.get("value"), entry.get("accept", [])
        if not isinstance(value, str) or not norm(value):
            raise CardError(f"{shape}; 'value' must be a non-empty string")
        if not isinstance(accept, list) or not all(isinstance(a, str) and norm(a) for a in accept):
            raise CardError(f"{shape}; 'accept' must be a list of non-empty strings")
        clean.append({"value": value, "accept": list(accept)})
    return clean


def score_fields(output: str, key: AnswerKey, excerpt: str, spec: FieldsSpec) -> dict[str, float]:
    """Metrics for one output: field_recall(.<field>), unsupported_values, abstains, values_returned. Under the
    NFC rule (`spec.nfc`) the reply, the excerpt and the key's forms are read in NFC, and under the trim rule
    (`spec.js_trim`) the reply's ends lose JavaScript's white space (`textform.py`)."""
    output = compared(output.strip(JS_SPACE) if spec.js_trim else output, spec.nfc)
    excerpt = compared(excerpt, spec.nfc)

    def forms(entry: dict[str, Any]) -> list[str]:
        return [compared(f, spec.nfc) for f in (entry["value"], *entry.get("accept", []))]

    recall_lines, value_lines = ({}, []) if restates(output, excerpt) else parse(output, spec.fields, spec.all_keys)
    metrics: dict[str, float] = {"field_recall": 0.0}
    found = total = 0
    for field in spec.fields:
        entries = key.get(field) or []
        if not entries:
            continue
        # one line per section line, joined by '|' so that a form cannot match across two lines
        hay = f" {' | '.join(norm(line) for line in recall_lines.get(field, []))} "
        hits = sum(any(within(norm(f), hay) for f in forms(e)) for e in entries)
        metrics[f"field_recall.{field}"] = hits / len(entries)
        found, total = found + hits, total + len(entries)
    metrics["field_recall"] = found / total if total else 1.0
    padded_excerpt = f" {norm(excerpt)} "
    names = frozenset(_bare(f) for e in key.get("parties") or [] for f in forms(e))
    supported: dict[str, bool] = {}
    abstained = concrete = False
    for field, line in value_lines:
        for piece in pieces(line):
            if _is_abstention(piece):
                abstained = abstained or field == spec.abstain_field
                continue
            concrete = concrete or field == spec.abstain_field
            for value in _values(field, piece, padded_excerpt, names):
                supported.setdefault(norm(value), _supported(value, padded_excerpt))
    metrics["unsupported_values"] = float(sum(not ok for ok in supported.values()))
    if spec.abstain_field is not None:
        metrics["abstains"] = 1.0 if abstained and not concrete else 0.0
    metrics["values_returned"] = float(len(supported))
    return metrics
