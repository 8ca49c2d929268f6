"""The field-extraction scorer behind BENCH-01: per-field recall, unsupported values, and abstention.

It is blind by construction: `score_fields` sees the output text, the fixture's key, the excerpt and the
scoring options — never the variant, model, run index or request. It only reads the output (``json.loads``
at most); nothing in it is executed or evaluated. The same input always gives the same numbers.

Metrics (all floats): ``field_recall`` (key values found / all key values, across fields),
``field_recall.<field>`` (only for fields whose key has values, so none for excerpt 07's termination rights),
``unsupported_values`` (count of distinct returned values not in the excerpt), ``abstains`` (0/1, only when
the spec names an ``abstain_field``) and ``values_returned`` (count of distinct returned values).

Decisions a user of the numbers should know:

* **Sections.** A value counts for a field only if it sits in that field's section, found by label synonyms
  (``FIELD_LABELS``) in JSON keys, markdown headings, bold labels, ``Label: value`` lines, list items and
  table rows or columns. Text outside every section (all of it, for a prose answer) is read sentence by
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

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchcard.errors import CardError

from .fieldtext import DATE, norm, restates, within

FIELD_LABELS: dict[str, tuple[str, ...]] = {
    "parties": ("contracting parties", "parties", "party", "counterparties", "counterparty"),
    "effective_date": ("effective date", "commencement date", "start date", "effective", "commencement",
                       "date"),
    "termination_rights": ("termination rights", "right to terminate", "rights to terminate", "termination",
                           "terminate"),
    "obligations": ("obligations", "obligation", "duties", "duty", "covenants", "responsibilities"),
}
# Prose cues, in priority order: a sentence's values are counted under the first field whose cue it matches.
_CUES: dict[str, str] = {
    "termination_rights": r"\bterminat|\bcancel",
    "effective_date": r"\beffective\b|\bcommenc|\bdated?\b|\btakes? effect\b|\bmade on\b|\bas of\b",
    "parties": r"\bpart(?:y|ies)\b|\bbetween\b",
    "obligations": r"\boblig|\bshall\b|\bmust\b|\brequired to\b|\bresponsible for\b|\bdut(?:y|ies)\b"
                   r"|\bagrees? to\b",
}
_ABSTAIN_MARK = "not stated"


@dataclass(frozen=True)
class FieldsSpec:
    """The card's ``scoring`` block for ``method: fields`` (``first_screen_chars`` is checked elsewhere)."""

    fields: tuple[str, ...]
    abstain_field: str | None

    @classmethod
    def from_mapping(cls, block: Mapping[str, Any], source: str = "card") -> FieldsSpec:
        """Parse ``{method: fields, fields: [...], abstain_field: ...}``; errors name file and field."""
        fields = block.get("fields")
        if not isinstance(fields, list) or not fields or not all(isinstance(f, str) and f for f in fields):
            raise CardError(f"{source}: field 'scoring.fields': expected a non-empty list of field names")
        abstain = block.get("abstain_field")
        if abstain is not None and abstain not in fields:
            raise CardError(f"{source}: field 'scoring.abstain_field': expected one of {', '.join(fields)}")
        return cls(tuple(fields), abstain)


# ---------------------------------------------------------------- labels and sections
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(?P<ind>[ \t]*)(?:[-*+•▪◦]|\d{1,3}[.)]|[a-zA-Z][.)]|\((?:\d{1,3}|[a-zA-Z]|[ivx]+)\))"
                     r"\s+(?P<body>.*)$")
_BOLD_LABEL = re.compile(r"^(\*\*|__)(?P<label>(?:(?!\1).){1,80}?)\s*(?P<c1>:?)\s*\1\s*(?P<c2>[:\-–—]?)\s*"
                         r"(?P<rest>.*)$")
_PLAIN_LABEL = re.compile(r"^[*_]?(?P<label>[A-Za-z][^:|*]{0,60}?)(?<!\d)[*_]?\s*:\s*(?P<rest>.*)$")
_TABLE_SEP = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
_HEAD_SPLIT = re.compile(r"\b(?:of|for|upon|on|under|in|by|from|with)\b")


def _labels(field: str) -> tuple[str, ...]:
    return FIELD_LABELS.get(field, (field.replace("_", " ").lower(),))


def _field_for(label: str, spec: FieldsSpec, exact: bool = False) -> str | None:
    """Map a label to a field: exact synonym, else the synonym nearest the head noun of a short label."""
    text = norm(re.sub(r"\([^)]*\)", " ", label))
    if not text or len(text.split()) > 6:
        return None
    for field in spec.fields:
        if text in _labels(field):
            return field
    if exact:
        return None
    head = _HEAD_SPLIT.split(text)[0]
    best, best_end = None, -1
    for field in spec.fields:
        for syn in _labels(field):
            for m in re.finditer(rf"\b{re.escape(syn)}\b", head):
                if m.end() > best_end:
                    best, best_end = field, m.end()
    return best


def _split_label(body: str) -> tuple[str, str, bool] | None:
    """``(label, rest, bold_only)`` for "**L:** x", "**L** x", "L: x"; None when the line carries no label."""
    m = _BOLD_LABEL.match(body)
    if m:
        return m.group("label").strip(), m.group("rest").strip(), not (m.group("c1") or m.group("c2"))
    m = _PLAIN_LABEL.match(body)
    if m and len(m.group("label").split()) <= 6:
        return m.group("label").strip(), m.group("rest").strip(), False
    return None


class _Sections:
    """Collects content lines per field, and the lines outside any field, walking the output top to bottom."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = {}
        self.loose: list[str] = []
        self.field: str | None = None
        self.rank = 0  # 1-6 heading level, 7 a plain or bold label line, 8+ a list item (8 + indent)
        self.inline = False  # the label line itself carried a value
        self.table = False
        self.listy = False  # the section holds list items, so a later plain paragraph is commentary

    def start(self, field: str, rank: int, rest: str, table: bool = False) -> None:
        self.field, self.rank, self.inline, self.table, self.listy = field, rank, bool(rest), table, False
        self.lines.setdefault(field, [])
        self.add(rest)

    def add(self, text: str) -> None:
        target = self.loose if self.field is None else self.lines[self.field]
        target.extend(p for p in re.split(r"<br\s*/?>", text, flags=re.I) if p.strip())

    def ends_at(self, rank: int, standalone_bold: bool) -> bool:
        """Whether an unknown label at ``rank`` closes the current section rather than sitting inside it."""
        if self.field is None or self.rank <= 6 or rank > self.rank:
            return False
        return self.rank >= 8 or self.inline or standalone_bold


def _markdown_sections(text: str, spec: FieldsSpec) -> tuple[dict[str, list[str]], list[str]]:
    """Sections from headings, bold labels, ``Label:`` lines, list items and markdown tables."""
    sec = _Sections()
    lines = text.splitlines()
    table_cols: list[str | None] | None = None
    for i, raw in enumerate(lines):
        s = raw.strip()
        after_blank = i > 0 and not lines[i - 1].strip()
        if not s.startswith("|"):
            table_cols = None
        if re.fullmatch(r"[-*_]{3,}", s):  # a horizontal rule closes the section
            sec.field = None
        if not s or s.startswith("```") or re.fullmatch(r"[-*_]{3,}", s):
            continue
        if s.startswith("|"):
            if _TABLE_SEP.match(s):
                continue
            cells = [c.strip() for c in s.strip("|").split("|")]
            if i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1].strip()):  # a header row
                cols = [_field_for(c, spec) for c in cells]
                table_cols = cols if sum(c is not None for c in cols) >= 2 else None
                continue
            if table_cols is not None:  # a horizontal table: one column per field
                for col, cell in zip(table_cols, cells, strict=False):
                    if col is not None:
                        sec.start(col, 7, cell, table=True)
                sec.field = None
                continue
            field = _field_for(cells[0], spec)
            if field is not None:
                sec.start(field, 7, "", table=True)
            elif sec.table and cells[0]:
                sec.field = None
            for cell in cells[1:] if field is not None or not cells[0] else cells:
                sec.add(cell)
            continue
        heading = _HEADING.match(raw)
        if heading:
            rank, body = len(heading.group(1)), heading.group(2)
            parts = _split_label(body)
            label, rest = (parts[0], parts[1]) if parts else (body, "")
            field = _field_for(label, spec, exact=sec.field is not None and rank > sec.rank)
            if field is not None:
                sec.start(field, rank, rest)
            elif sec.field is not None and (sec.rank >= 7 or rank <= sec.rank):
                sec.field = None
            else:
                sec.add(f"{body}:")  # a sub-heading is a sub-label: read for recall, never a value
            continue
        bullet = _BULLET.match(raw)
        body = bullet.group("body").strip() if bullet else s
        rank = 8 + len(bullet.group("ind").expandtabs(4)) if bullet else 7
        nested = sec.field is not None and rank > sec.rank  # inside a field only an exact label starts one
        parts = _split_label(body)
        if parts is not None:
            label, rest, bold_only = parts
            field = _field_for(label, spec, exact=nested or (bold_only and bool(rest)))
            if field is not None:
                sec.start(field, rank, rest)
                continue
            if sec.ends_at(rank, standalone_bold=bold_only and not rest):
                sec.field = None
        else:
            field = _field_for(re.sub(r"[*_:]+", " ", body), spec, exact=True)
            if field is not None:
                sec.start(field, rank, "")
                continue
            commentary = sec.rank >= 8 or sec.listy or sec.inline
            if commentary and not bullet and after_blank and not raw[:1].isspace():
                sec.field = None  # a paragraph after a list or a "Label: value" line is not a value
        sec.listy = sec.listy or bool(bullet)
        sec.add(body)
    return sec.lines, sec.loose


def _leaf_lines(obj: Any) -> Iterator[str]:
    """Every scalar in a JSON value as one line; a dict key is kept as a sub-label ("role: Supplier")."""
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            if isinstance(v, str | int | float) and not isinstance(v, bool):
                yield f"{k}: {v}"
            else:
                yield from _leaf_lines(v)
    elif isinstance(obj, list):
        for item in obj:
            yield from _leaf_lines(item)
    elif isinstance(obj, str | int | float) and not isinstance(obj, bool):
        yield str(obj)


def _json_sections(text: str, spec: FieldsSpec) -> tuple[dict[str, list[str]], list[str]] | None:
    """Sections from the first JSON object (fenced or bare) with a field key, and the lines around it."""
    candidates = [(m.group(1), m.group(0)) for m in re.finditer(r"```[\w-]*[ \t]*\n(.*?)```", text, re.S)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append((text[start:end + 1], text[start:end + 1]))
    for cand, whole in candidates:
        try:
            data = json.loads(cand)
        except ValueError:
            continue
        queue: list[Any] = [data]
        for _ in range(50):  # breadth-first: a wrapper such as {"extraction": {...}} is looked through
            if not queue:
                break
            node = queue.pop(0)
            if isinstance(node, list):
                queue.extend(node)
            if not isinstance(node, Mapping):
                continue
            found: dict[str, list[str]] = {}
            for key, value in node.items():
                field = _field_for(str(key), spec)
                if field is not None:
                    empty = value is None or value == [] or value == "" or value == {}
                    found.setdefault(field, []).extend([_ABSTAIN_MARK] if empty else _leaf_lines(value))
            if found:
                return found, text.replace(whole, "\n").splitlines()
            queue.extend(node.values())
    return None


_ABBREV = re.compile(r"\b(?:no|nos|mr|ms|mrs|dr|st|cl|art|sec|e\.g|i\.e|cf|approx)\.$", re.I)
_MONTH_ABBREV = re.compile(r"\b(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.$", re.I)


def _sentences(text: str) -> list[str]:
    """Split where a sentence ends and a capitalised one starts, but not after "No.", "Ms." and the like,
    nor inside a date such as "Feb. 3, 2025" (a month abbreviation followed by a day)."""
    out: list[str] = []
    for piece in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"“'])", text):
        if out and (_ABBREV.search(out[-1]) or (_MONTH_ABBREV.search(out[-1]) and piece[:1].isdigit())):
            out[-1] += " " + piece
        else:
            out.append(piece)
    return [p for p in out if p.strip()]


def _cued(field: str, piece: str) -> bool:
    """Whether a prose piece speaks about ``field``; any written date is a cue for the effective date."""
    if field == "effective_date" and DATE.search(piece):
        return True
    return bool(re.search(_CUES.get(field, re.escape(field.replace("_", " "))), piece, re.I))


def _split(text: str) -> list[str]:
    """Sentences, then semicolons and "but"/"however": the unit a value or a prose claim is made of."""
    return [p for s in _sentences(text) for p in re.split(r";|,?\s+but\s+|,?\s*\bhowever\b,?", s, flags=re.I)]


def _prose(lines: list[str], fields: list[str]) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """Give each sentence piece to the ``fields`` whose cues it has; a piece ending in ':' is a lead-in."""
    recall: dict[str, list[str]] = {}
    values: list[tuple[str, str]] = []
    order = [f for f in _CUES if f in fields] + [f for f in fields if f not in _CUES]
    for raw in lines:
        if raw.strip().startswith("```"):
            continue
        bullet = _BULLET.match(raw)
        for piece in _split(bullet.group("body") if bullet else raw.strip()):
            if piece.strip().endswith(":"):
                continue
            hits = [f for f in order if _cued(f, piece)]
            for field in hits:
                recall.setdefault(field, []).append(piece)
            if hits:
                values.append((hits[0], piece))
    return recall, values


def _parse(output: str, spec: FieldsSpec) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """``(lines per field for recall, (field, line) pairs for values)``: JSON or markdown sections first, then
    prose attribution of the text outside them, for the fields that have no section."""
    sections, loose = _json_sections(output, spec) or _markdown_sections(output, spec)
    recall, values = _prose(loose, [f for f in spec.fields if f not in sections])
    values = [(f, line) for f, lines in sections.items() for line in lines] + values
    return recall | sections, values


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
_LEAD_IN = re.compile(
    r"^(?:(?:the\s+)?(?:contracting\s+)?part(?:y|ies)(?:\s+to\s+(?:the|this)\s+(?:agreement|contract))?\s+"
    r"(?:are|is|were)\s+(?:between\s+)?"
    r"|(?:the|this)\s+(?:agreement|contract)\s+(?:is\s+|was\s+|becomes\s+|became\s+)?(?:made\s+|dated\s+|"
    r"effective\s+|entered\s+into\s+|takes\s+effect\s+|took\s+effect\s+|commences\s+|commenced\s+|starts\s+)"
    r"(?:and\s+effective\s+)?(?:on\s+|from\s+|as\s+of\s+|with\s+effect\s+from\s+)?"
    r"|(?:the\s+)?(?:effective|commencement|start)\s+date"
    r"(?:\s+of\s+(?:the|this)\s+(?:agreement|contract))?\s+(?:is|was)\s+)",
    re.IGNORECASE,
)
_REF = re.compile(r"(?:see\s+)?(?:clauses?|cl|sections?|s|sec|conditions?|paragraphs?|para|articles?|art|"
                  r"schedule|annex|exhibit|§)\.?\s*(\d+(?:\.\d+)*(?:\([a-z0-9]+\))?)\.?$", re.IGNORECASE)
_PART_SPLIT = re.compile(r"[()\[\]]|\.\.\.|…|\s[-–—]\s|--")


def _pieces(line: str) -> list[str]:
    """A content line as cleaned value pieces: split (see ``_split``), each piece's sub-label dropped."""
    body = line.strip()
    bullet = _BULLET.match(body)
    out: list[str] = []
    for piece in _split(bullet.group("body") if bullet else body):
        parts = _split_label(piece.strip())
        if parts is not None and (not parts[2] or not parts[1]):
            piece = parts[1]
        piece = re.sub(r"\*\*|__|`", "", piece).strip(" \t*_\"'“”‘’«».,;:!?")
        piece = re.sub(r"^(?:and|or)\s+", "", _LEAD_IN.sub("", piece), flags=re.I).strip(" \t\"'“”‘’.,;:")
        if norm(piece):
            out.append(piece)
    return out


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
    return norm(re.sub(r"\([^)]*\)", " ", text))


def _fragment(bit: str) -> bool:
    """A piece that cannot be a name by itself: a bare legal form ("Inc.", "Co") or no letters ("2025")."""
    return not re.search(r"[^\W\d_]", bit) or bool(_BARE_FORM.fullmatch(_bare(bit)))


def _comma_names(part: str, padded_excerpt: str, names: frozenset[str]) -> list[str]:
    """A party list split at ", " only when every piece is a name on its own: a key party form or ending in a
    legal form. A comma is ambiguous ("Acme Ltd, Beta plc" is two names, "Acme, Inc." one), so text verbatim
    in the excerpt stays whole, fragments ("Inc.", "2025") stay with the piece before, pieces verbatim together
    in the excerpt stay together, and an unknown "Smith, Jones & Co" stays one value. "1,000,000" has no space.
    """
    if _in_excerpt(part, padded_excerpt) or _bare(part) in names:
        return [part]
    units: list[str] = []
    for bit in re.split(r",\s+", part):
        if units and _fragment(bit):
            units[-1] += ", " + bit
        else:
            units.append(bit)
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
        bits: list[str] = []
        for bit in re.split(r"\s*&\s*", part):
            if bits and _fragment(bit):
                bits[-1] += " & " + bit
            else:
                bits.append(bit)
        out.extend(bits)
    return [p for p in out if norm(p)]


# ---------------------------------------------------------------- public API
def load_key(path: Path, spec: FieldsSpec) -> dict[str, Any]:
    """Read and validate ``keys/<card>/<fixture>.json``; every error is one line naming file and field."""
    where = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CardError(f"{where}: cannot read the key ({exc.strerror})") from None
    except ValueError as exc:
        raise CardError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise CardError(f"{where}: expected a JSON object")
    if not isinstance(data.get("fixture"), str) or data["fixture"] != path.stem:
        raise CardError(f"{where}: field 'fixture': expected the fixture id {path.stem!r}")
    unknown = sorted(set(data) - {"fixture", "not_stated", *spec.fields})
    if unknown:
        raise CardError(f"{where}: field {unknown[0]!r}: not a field of this card ({', '.join(spec.fields)})")
    not_stated = data.get("not_stated", [])
    if not isinstance(not_stated, list) or not all(n in spec.fields for n in not_stated):
        names = ", ".join(spec.fields)
        raise CardError(f"{where}: field 'not_stated': expected a list of field names from {names}")
    key: dict[str, Any] = {"fixture": data["fixture"], "not_stated": list(not_stated)}
    for field in spec.fields:
        entries = data.get(field)
        shape = f"{where}: field {field!r}: expected a list of {{value, accept}}"
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
        if bool(clean) == (field in not_stated):
            expected = "no values, since it is in not_stated" if clean else "values, or listing in not_stated"
            raise CardError(f"{where}: field {field!r}: expected {expected}")
        key[field] = clean
    if not any(key[f] for f in spec.fields):
        raise CardError(f"{where}: expected at least one value in {', '.join(spec.fields)}")
    return key


def score_fields(output: str, key: Mapping[str, Any], excerpt: str, spec: FieldsSpec) -> dict[str, float]:
    """Metrics for one output: field_recall(.<field>), unsupported_values, abstains, values_returned."""
    recall_lines, value_lines = ({}, []) if restates(output, excerpt) else _parse(output, spec)
    metrics: dict[str, float] = {"field_recall": 0.0}
    found = total = 0
    for field in spec.fields:
        entries = key.get(field) or []
        if not entries:
            continue
        # one line per section line, joined by '|' so that a form cannot match across two lines
        hay = f" {' | '.join(norm(line) for line in recall_lines.get(field, []))} "
        hits = sum(any(within(norm(f), hay) for f in (e["value"], *e.get("accept", []))) for e in entries)
        metrics[f"field_recall.{field}"] = hits / len(entries)
        found, total = found + hits, total + len(entries)
    metrics["field_recall"] = found / total if total else 1.0
    padded_excerpt = f" {norm(excerpt)} "
    names = frozenset(_bare(f) for e in key.get("parties") or [] for f in (e["value"], *e.get("accept", [])))
    supported: dict[str, bool] = {}
    abstained = concrete = False
    for field, line in value_lines:
        for piece in _pieces(line):
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
