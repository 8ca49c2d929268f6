"""A `fields` answer read into per-field lines and value pieces: the reading half of the `fields` scorer.

It sees only the output and the field names, never the key or the excerpt, so where an answer puts a value
(JSON, markdown sections, tables, prose) is decided apart from whether the value is right, which `fields` judges.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from benchcard.scoring._fieldtext import DATE, norm, without_asides

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
_ABSTAIN_MARK = "not stated"  # what an empty JSON value (null, [], "") reads as: an abstention


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


def _field_for(label: str, fields: Sequence[str], exact: bool = False) -> str | None:
    """Map a label to a field: exact synonym, else the synonym nearest the head noun of a short label."""
    text = norm(without_asides(label))
    if not text or len(text.split()) > 6:
        return None
    for field in fields:
        if text in _labels(field):
            return field
    if exact:
        return None
    head = _HEAD_SPLIT.split(text)[0]
    best, best_end = None, -1
    for field in fields:
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


def _markdown_sections(text: str, fields: Sequence[str]) -> tuple[dict[str, list[str]], list[str]]:
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
            following = lines[i + 1].strip() if i + 1 < len(lines) else None
            table_cols = _table_line(sec, s, following, fields, table_cols)
            continue
        heading = _HEADING.match(raw)
        if heading:
            _heading_line(sec, heading, fields)
            continue
        _text_line(sec, raw, s, after_blank, fields)
    return sec.lines, sec.loose


def _table_line(sec: _Sections, s: str, following: str | None, fields: Sequence[str],
                table_cols: list[str | None] | None) -> list[str | None] | None:
    """One ``|`` row of a markdown table (`following`: the next line, stripped); returns the columns' fields of
    a horizontal table, from its header row on."""
    if _TABLE_SEP.match(s):
        return table_cols
    cells = [c.strip() for c in s.strip("|").split("|")]
    if following is not None and _TABLE_SEP.match(following):  # a header row
        cols = [_field_for(c, fields) for c in cells]
        return cols if sum(c is not None for c in cols) >= 2 else None
    if table_cols is not None:  # a horizontal table: one column per field
        for col, cell in zip(table_cols, cells, strict=False):
            if col is not None:
                sec.start(col, 7, cell, table=True)
        sec.field = None
        return table_cols
    field = _field_for(cells[0], fields)
    if field is not None:
        sec.start(field, 7, "", table=True)
    elif sec.table and cells[0]:
        sec.field = None
    for cell in cells[1:] if field is not None or not cells[0] else cells:
        sec.add(cell)
    return table_cols


def _heading_line(sec: _Sections, heading: re.Match[str], fields: Sequence[str]) -> None:
    """A ``#`` heading: starts a field's section, closes one, or is a sub-label inside it."""
    rank, body = len(heading.group(1)), heading.group(2)
    parts = _split_label(body)
    label, rest = (parts[0], parts[1]) if parts else (body, "")
    field = _field_for(label, fields, exact=sec.field is not None and rank > sec.rank)
    if field is not None:
        sec.start(field, rank, rest)
    elif sec.field is not None and (sec.rank >= 7 or rank <= sec.rank):
        sec.field = None
    else:
        sec.add(f"{body}:")  # a sub-heading is a sub-label: read for recall, never a value


def _text_line(sec: _Sections, raw: str, s: str, after_blank: bool, fields: Sequence[str]) -> None:
    """A line that is neither table nor heading: a label starting a field, or a value of the current one."""
    bullet = _BULLET.match(raw)
    body = bullet.group("body").strip() if bullet else s
    rank = 8 + len(bullet.group("ind").expandtabs(4)) if bullet else 7
    nested = sec.field is not None and rank > sec.rank  # inside a field only an exact label starts one
    parts = _split_label(body)
    if parts is not None:
        label, rest, bold_only = parts
        field = _field_for(label, fields, exact=nested or (bold_only and bool(rest)))
        if field is not None:
            sec.start(field, rank, rest)
            return
        if sec.ends_at(rank, standalone_bold=bold_only and not rest):
            sec.field = None
    else:
        field = _field_for(re.sub(r"[*_:]+", " ", body), fields, exact=True)
        if field is not None:
            sec.start(field, rank, "")
            return
        commentary = sec.rank >= 8 or sec.listy or sec.inline
        if commentary and not bullet and after_blank and not raw[:1].isspace():
            sec.field = None  # a paragraph after a list or a "Label: value" line is not a value
    sec.listy = sec.listy or bool(bullet)
    sec.add(body)


def _leaf_lines(obj: Any) -> Iterator[str]:
    """Every scalar in a JSON value as one line; a dict key is kept as a sub-label ("role: Supplier").

    Walked with a stack of its own, not by recursion: `json.loads` reads an answer nested nearly as deep as
    Python's stack allows, and a recursive walk one frame deeper per level ran out of it (a traceback)."""
    stack: list[Iterator[tuple[Any, Any]]] = [iter([(None, obj)])]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        key, value = entry
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            yield str(value) if key is None else f"{key}: {value}"
        elif isinstance(value, Mapping):
            stack.append(iter(value.items()))
        elif isinstance(value, list):
            stack.append((None, item) for item in value)


class _Repeated(list[Any]):
    """The values of a key written more than once in one JSON object, in order (`_every_value`)."""


def _every_value(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object keeping every value of a key written twice (`{"parties": "Acme Ltd", "parties": "Beta plc"}`:
    both, as `_Repeated`), where `json.loads` keeps only the last: the rule `all_keys` (`textform.ALL_KEYS_RULE`)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            before = out[key]
            out[key] = _Repeated([*before, value]) if isinstance(before, _Repeated) else _Repeated([before, value])
        else:
            out[key] = value
    return out


def _json_fields(node: Mapping[Any, Any], fields: Sequence[str]) -> dict[str, list[str]]:
    """The lines of each field keyed in one JSON object; an empty value is an abstention. A key written more than
    once (`_Repeated`) gives each of its values."""
    found: dict[str, list[str]] = {}
    for key, given in node.items():
        field = _field_for(str(key), fields)
        if field is not None:
            for value in given if isinstance(given, _Repeated) else [given]:
                empty = value is None or value == [] or value == "" or value == {}
                found.setdefault(field, []).extend([_ABSTAIN_MARK] if empty else _leaf_lines(value))
    return found


def _json_sections(text: str, fields: Sequence[str], all_keys: bool = True
                   ) -> tuple[dict[str, list[str]], list[str]] | None:
    """Sections from the first JSON object (fenced or bare) with a field key, and the lines around it; `all_keys`:
    a key written twice in an object gives both values (`_every_value`), else only its last, as `json.loads`."""
    candidates = [(m.group(1), m.group(0)) for m in re.finditer(r"```[\w-]*[ \t]*\n(.*?)```", text, re.S)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append((text[start:end + 1], text[start:end + 1]))
    for cand, whole in candidates:
        try:
            data = json.loads(cand, object_pairs_hook=_every_value if all_keys else None)
        except (ValueError, RecursionError):  # a model's output nested past the stack is not an answer either
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
            found = _json_fields(node, fields)
            if found:
                return found, text.replace(whole, "\n").splitlines()
            queue.extend(node.values())
    return None


_ABBREV = re.compile(r"\b(?:no|nos|mr|ms|mrs|dr|st|cl|art|sec|e\.g|i\.e|cf|approx)\.$", re.I)
# Both abbreviations end the text and are at most 7 characters ("approx."), with one before for \b: searching the
# last 16 characters is searching the whole, and each search of a sentence merged over 10,000 "Mr." (a reply stuck
# repeating itself) took the time of the whole sentence: 44 s for 40 kB, quadratic.
_ABBREV_TAIL = 16
_MONTH_ABBREV = re.compile(r"\b(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.$", re.I)


def _sentences(text: str) -> list[str]:
    """Split where a sentence ends and a capitalised one starts, but not after "No.", "Ms." and the like,
    nor inside a date such as "Feb. 3, 2025" (a month abbreviation followed by a day)."""
    # Each sentence is kept as its pieces and joined once at the end, and only its last characters are searched
    # (`tail`): a reply stuck repeating "Mr. " merges millions of pieces into one sentence, and copying it whole at
    # each piece took time quadratic in its length.
    out: list[list[str]] = []
    tail = ""
    for piece in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"“'])", text):
        if out and (_ABBREV.search(tail) or (_MONTH_ABBREV.search(tail) and piece[:1].isdigit())):
            out[-1].append(piece)
            tail = (tail + " " + piece[-_ABBREV_TAIL:])[-_ABBREV_TAIL:]
        else:
            out.append([piece])
            tail = piece[-_ABBREV_TAIL:]
    return [s for s in (" ".join(p) for p in out) if s.strip()]


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


def parse(output: str, fields: Sequence[str], all_keys: bool = True
          ) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """``(lines per field for recall, (field, line) pairs for values)``: JSON or markdown sections first, then
    prose attribution of the text outside them, for the fields that have no section. `all_keys`: a JSON key
    written twice gives both its values (the rule of a seal made since 2026-12-08), else only its last."""
    sections, loose = _json_sections(output, fields, all_keys) or _markdown_sections(output, fields)
    recall, values = _prose(loose, [f for f in fields if f not in sections])
    values = [(f, line) for f, lines in sections.items() for line in lines] + values
    return recall | sections, values


# ---------------------------------------------------------------- value pieces
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


def pieces(line: str) -> list[str]:
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
