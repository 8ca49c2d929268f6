"""The one YAML reader for files a person writes (cards, benchcard.yaml): safe, bounded, and strict.

PyYAML's `safe_load` accepts what a careful reader would not: an alias bomb (a few hundred bytes of `&a`/`*a`
that expand to gigabytes), a key written twice (the last silently wins), a lone UTF-16 surrogate
(`"\\ud800"`, which no UTF-8 file can hold and which fails later, in a hash), a key YAML 1.1 reads as
another type than text (`yes`, `1`, `2026-01-01`, `~`: a card's canonical JSON cannot sort it, and `1` and `1.0`
are one key), and nesting deep enough to exhaust the stack. Each is refused here with one line naming the file
and the line; the line of every mapping key is returned too, so validators can point at it. What PyYAML refuses
itself (a merge key given no mapping, two documents, an anchor set twice) is said in a user's words, not its own.

A line says back what it refuses only where that cannot be a secret: the caller names the fields that may hold one
(`secret`: benchcard.yaml's headers, URLs and key variable), and there a line names the field and what YAML read,
never the value, nor the number or date it reads as (which is the key written another way).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

import yaml

from benchcard.errors import BenchcardError

MAX_YAML_BYTES = 1 << 20  # a card is a few kilobytes; a megabyte is a mistake or an attack
MAX_EXPANDED_NODES = 200_000  # nodes once every alias is expanded
MAX_EXPANDED_CHARS = 4 << 20  # characters of scalar text once every alias is expanded
#: The most digits of an integer: past 308 no float holds it (a card's numbers are compared as floats), and past
#: 4,300 Python will not even read it (PyYAML's ValueError, a traceback).
MAX_INT_DIGITS = 308
MAX_DEPTH = 100  # a card nests five levels; `&x [*x]` (a list holding itself) nests without end
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f]")
_HIDDEN_BREAK = re.compile("[\x85\u2028\u2029]")  # line breaks to YAML 1.1, which an editor shows as none
#: Characters an editor shows as nothing (or as no break) that change a value: YAML 1.1's three line breaks, which
#: outside quotes end a line (a parse error `_malformed` explains) and inside quotes are kept (U+2028, U+2029) or
#: folded into a space (U+0085), and the byte-order mark, kept wherever it stands but a file's start. Written
#: into a value as themselves they are refused, in quotes or not; a double-quoted escape (`"\u2028"`) shows them.
_INVISIBLE = {"\x85": "U+0085 NEXT LINE (NEL)", "\u2028": "U+2028 LINE SEPARATOR",
              "\u2029": "U+2029 PARAGRAPH SEPARATOR", "\ufeff": "U+FEFF ZERO WIDTH NO-BREAK SPACE (a byte-order mark)"}
_INVISIBLE_CHAR = re.compile(f"[{''.join(_INVISIBLE)}]")
# how a number is written in plain decimal; .inf and .nan pass here and are refused where a number is read
_PLAIN_NUMBER = {"int": re.compile(r"[-+]?(?:0|[1-9][0-9]*)"),
                 "float": re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
                                     r"|\.(?:nan|NaN|NAN)")}
_BASES = ((":", " (base 60)"), ("0x", " (hexadecimal)"), ("0b", " (binary)"), ("_", ""), ("0", " (octal)"))
_STR_TAG, _MERGE_TAG = "tag:yaml.org,2002:str", "tag:yaml.org,2002:merge"
_MAP_TAG, _SEQ_TAG = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_FLOAT_TAG, _INT_TAG = "tag:yaml.org,2002:float", "tag:yaml.org,2002:int"
#: YAML 1.1's `=` (the default value of a mapping) and `<<` (a merge key): values no card holds, which PyYAML's safe
#: loader cannot even construct ('could not determine a constructor for the tag …value')
_SPECIAL = {"tag:yaml.org,2002:value": "=", "tag:yaml.org,2002:merge": "<<"}
#: YAML's types in a user's words, by the last part of their tag: the one description of what YAML read that every
#: line uses (`read_as` for a value, `_check_key` for a key, `_check_scalar` for a number or a date misread)
_TYPE_WORDS = {"bool": "true/false", "int": "a number", "float": "a number", "timestamp": "a date", "null": "null",
               "value": "its value key (a bare =)", "seq": "a list", "map": "a mapping", "str": "text"}
_NUMBER_KINDS = ("int", "float", "timestamp")  # what YAML 1.1 converts, and may read otherwise than it looks

Lines = dict[tuple[str, ...], int]
Field = tuple[str, ...]
#: Which fields may hold a secret (a key, a password): there a value is never said back in an error line.
Secret = Callable[[Field], bool]


def _no_secret(path: Field) -> bool:
    """A card's fields: none holds a secret, so a line may say back what it refuses."""
    return False

#: Texts whose parse a process keeps (a card is read by several steps of one command, and a test process reads the
#: same few cards hundreds of times; composing a card costs about 10 ms of pure-Python PyYAML, a copy 0.1 ms).
KEPT_TEXTS = 64
KEPT_CHARS = 1 << 16
_KEPT: dict[str, tuple[Any, Lines]] = {}


def load_yaml(text: str, source: str, error: type[BenchcardError], secret: Secret = _no_secret) -> tuple[Any, Lines]:
    """Parse `text` (the content of `source`); return the data and the line of every mapping key. A text parsed
    before in this process is not composed again: a success depends on the text alone, and the caller gets its
    own copy (a refused text is parsed again, for its own source's line). `secret` says which fields' values an
    error line may not say back (see the module docstring)."""
    if len(text) > MAX_YAML_BYTES:
        raise error(f"{source}: {len(text):,} characters; expected at most {MAX_YAML_BYTES:,} (a card is small)")
    kept = _KEPT.get(text)
    if kept is None:
        kept = _parsed(text, source, error, secret)
        if len(text) <= KEPT_CHARS:
            if len(_KEPT) >= KEPT_TEXTS:
                _KEPT.clear()
            _KEPT[text] = kept
    try:
        return copy.deepcopy(kept[0]), dict(kept[1])
    except RecursionError:  # deeper than a copy recurses from here (the parser's stack is its own): parse it again
        _KEPT.pop(text, None)
        return _parsed(text, source, error, secret)


def _parsed(text: str, source: str, error: type[BenchcardError], secret: Secret = _no_secret) -> tuple[Any, Lines]:
    """load_yaml's parse, every check included."""
    try:
        loader = yaml.SafeLoader(text)  # refuses a character YAML does not allow (NUL, most C0 controls) here
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise error(f"{source}:{line}: malformed YAML: character #x{exc.character:04x} is not allowed in YAML "
                    "(a control character); remove it") from None
    try:
        try:
            node = loader.get_single_node()
            lines: Lines = {}
            if node is not None:
                _walk(node, _Checks(source, error, secret), lines)
            data = loader.construct_document(node) if node is not None else None
        except yaml.YAMLError as exc:
            raise error(_malformed(exc, text, source)) from None
        except RecursionError:
            raise error(f"{source}: malformed YAML: nested too deeply") from None
    finally:
        loader.dispose()
    return data, lines


#: PyYAML's problems that quote what follows them (an alias's or a tag handle's name, an escape's letter, the
#: character after an empty anchor: perhaps a password in benchcard.yaml), by their opening words, and what is said
#: instead. Each is a slip `_CAUSES` names.
_UNQUOTED = (
    ("found undefined alias", "found undefined alias"),
    ("found undefined tag handle", "found undefined tag handle"),
    ("found unknown escape character", "found unknown escape character"),
    ("expected escape sequence of", "found an escape with too few hexadecimal digits"),
    ("expected alphabetic or numeric character", "an anchor (&) or an alias (*) with no name"),
)

#: PyYAML's words for the slips a card's author makes most, and what to do about each: its own say where, not why.
#: The first that matches is said; a tab's depends on where it stands (`_tab_cause`).
_CAUSES = (
    ("mapping values are not allowed here", "a value holding ': ' that is not quoted, or a line indented too far"),
    ("but found '<alias>'", "an alias (*name) given an anchor or a tag (an alias takes neither), or a value "
                            "starting with '*' that is not quoted"),
    ("expected <block end>, but found", "text after a closing quote (quote a value holding quotes with the other "
                                        "mark: 'a \"b\" c'), a quote opened above and never closed, or a line "
                                        "indented as no field is"),
    ("found unexpected end of stream", "a quote opened and never closed"),
    ("found undefined alias", "a value starting with '*' (an alias of an &anchor above) that is not quoted"),
    ("found undefined tag handle", "a value starting with '!' (a tag to YAML) that is not quoted"),
    ("escape", "a backslash in double-quoted text, where it starts an escape (\\n, \\\"): write \\\\ for a "
               "backslash, or quote the text with ' instead"),
    ("with no name", "a value starting with '&' or '*' that is not quoted"),
    ("expected '<document start>'", "text after a '...' line, which ends the document; remove the line"),
    ("found incompatible YAML document", "a %YAML line of another version; expected %YAML 1.1, or no such line"),
)


def _malformed(exc: yaml.YAMLError, text: str, source: str) -> str:
    """PyYAML's refusal as one line: the file, the line, its problem in words a user acts on (`_special_problem`),
    or its own words with the slip that likely made them (`_CAUSES`), never a name it quoted (`_UNQUOTED`)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f":{mark.line + 1}" if mark is not None else ""
    special = _special_problem(exc)
    if special is not None:
        return f"{source}{where}: malformed YAML: {special}"
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    problem = next((said for words, said in _UNQUOTED if problem.startswith(words)), problem)
    if "'\\t'" in problem and mark is not None:
        return f"{source}{where}: malformed YAML: {problem}; likely {_tab_cause(text, mark)}"
    hidden = _HIDDEN_BREAK.search(text, 0, mark.index) if mark is not None else None
    if mark is not None and hidden is not None:  # PyYAML counts it as a line, an editor does not: count as one does
        return (f"{source}:{text.count(chr(10), 0, mark.index) + 1}: malformed YAML: {problem}; likely the line break "
                f"U+{ord(hidden.group()):04X} on line {text.count(chr(10), 0, hidden.start()) + 1}, which an editor "
                "shows as none and YAML reads as the end of a line: remove it")
    return f"{source}{where}: malformed YAML: {problem}{_likely_cause(problem)}"


def _special_problem(exc: yaml.YAMLError) -> str | None:
    """The composer's two problems, whose words only make sense with their context (`but found another document`,
    `second occurrence`), said whole; None for any other."""
    problem, context = getattr(exc, "problem", None), getattr(exc, "context", None) or ""
    if problem == "but found another document":
        return ("a second document starts here ('---' after the first); expected one document in the file: remove "
                "the line")
    first = getattr(exc, "context_mark", None)
    if problem == "second occurrence" and context.startswith("found duplicate anchor") and first is not None:
        return (f"an anchor (&name) set a second time (first on line {first.line + 1}); expected each anchor once: "
                "rename one, and the aliases (*name) that mean it")
    return None


def _tab_cause(text: str, mark: yaml.Mark) -> str:
    """Why a tab stopped the parse: one in a line's indentation (before its text, or after a list's `-`), or one
    outside quotes elsewhere (between words, after a colon), which YAML 1.1 takes in quoted text only."""
    start = text.rfind("\n", 0, mark.index) + 1
    if not text[start:mark.index].strip(" \t-"):
        return "a tab indenting a line (YAML indents with spaces only)"
    return ("a tab outside quotes (YAML 1.1 takes one only in quoted text or a | block): write a space, or quote "
            "the text")


def _likely_cause(problem: str) -> str:
    """The likely slip behind one of PyYAML's problems, as `; likely …` to end its line, or nothing."""
    return next((f"; likely {cause}" for words, cause in _CAUSES if words in problem), "")


@dataclass(frozen=True)
class _Checks:
    """What every check of one file needs: its name, the error it raises, and which fields may hold a secret."""

    source: str
    error: type[BenchcardError]
    secret: Secret

    def fail(self, line: int, path: Field, said: str) -> BenchcardError:
        """One line: the file, the line, the field (the top level when `path` is empty), what is wrong."""
        return self.error(f"{self.source}:{line}: field '{'.'.join(path) or '(top level)'}': {said}")


def _walk(root: yaml.Node, checks: _Checks, lines: Lines) -> None:
    """Every node as the data will hold it (aliases expanded), without recursion: bounded in count, text and depth,
    no key twice in a mapping, no surrogate or control character in a key, no surrogate in a value."""
    source, error = checks.source, checks.error
    nodes = 0
    chars = 0
    stack: list[tuple[yaml.Node, Field]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        nodes += 1
        if nodes > MAX_EXPANDED_NODES or chars > MAX_EXPANDED_CHARS:
            raise error(f"{source}: expands to more than {MAX_EXPANDED_NODES:,} values or {MAX_EXPANDED_CHARS:,} "
                        "characters (YAML aliases repeating aliases); write the values out")
        if len(path) > MAX_DEPTH:
            raise error(f"{source}:{node.start_mark.line + 1}: nested more than {MAX_DEPTH} levels deep (an alias "
                        "inside its own anchor?); write the values out")
        lines.setdefault(path, node.start_mark.line + 1)
        _check_tag(node, path, checks)
        if isinstance(node, yaml.ScalarNode):
            chars += len(node.value)
            _check_scalar(node, path, checks)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(_mapping_children(node, path, checks, lines))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, (*path, str(i))) for i, item in enumerate(node.value))


def _check_tag(node: yaml.Node, path: Field, checks: _Checks) -> None:
    """A value of the types a card is made of, each written as itself: an explicit tag that makes a value another
    type than it reads as (`!!int abc`, `!!bool maybe`, `!!timestamp x`: PyYAML's ValueError or KeyError, a
    traceback; `!!null x`: read as left out) or a type no card holds (`!!binary`, `!!set`, `!!omap`) is refused.
    `!!str` is a quote, and kept, as is `!!float` on a whole number (`!!float 1`, read as 1.0 before this check).
    A bare `=` or `<<` (YAML 1.1's value and merge keys, as values) is told to be quoted."""
    tag = node.tag
    line = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode):
        implicit = _implicit_tag(node.value)
        if tag in _SPECIAL and implicit == tag:
            raise checks.fail(line, path, f"a bare {_SPECIAL[tag]} is not text to YAML 1.1 (it reads it as its "
                                          f"{tag.rsplit(':', 1)[-1]} key, which no field holds); quote it "
                                          f"('{_SPECIAL[tag]}')")
        if tag == _STR_TAG or implicit == tag or (tag, implicit) == (_FLOAT_TAG, _INT_TAG):
            return  # (`!!merge x` is no merge key here: a value, and refused below)
        shown = "a value"  # never the value itself: benchcard.yaml's header values and URL passwords are secrets
    elif tag in (_MAP_TAG, _SEQ_TAG):
        return
    else:
        shown = _TYPE_WORDS["map" if isinstance(node, yaml.MappingNode) else "seq"]
    raise _tag_refused(tag, shown, line, path, checks)


def _tag_refused(tag: str, shown: str, line: int, path: Field, checks: _Checks) -> BenchcardError:
    """The line refusing an explicit tag on `shown` (a value, a list, a mapping, a key): a tag of one's own where a
    secret may be (`!Xy9…`: a password that starts with '!') is not named; YAML's own (`!!binary`) always is."""
    if checks.secret(path) and not tag.startswith("tag:yaml.org,2002:"):
        return checks.fail(line, path, f"{shown} starting with '!', which YAML reads as a tag (not shown: the field "
                                       "may hold a secret); drop the tag, or quote the text")
    written = tag.replace("tag:yaml.org,2002:", "!!", 1)
    return checks.fail(line, path, f"the tag {written} on {shown}; values are written as themselves (text, a "
                                   "number, true/false, a list, a mapping): drop the tag, or quote the text")


def _implicit_tag(value: str) -> str:
    """The tag YAML 1.1 gives `value` written plain, with no tag: PyYAML's own resolvers, in its own order."""
    table = yaml.resolver.Resolver.yaml_implicit_resolvers
    for tag, pattern in [*table.get(value[:1], []), *table.get(None, [])]:
        if pattern.match(value):
            return str(tag)
    return "tag:yaml.org,2002:str"


def _check_scalar(node: yaml.ScalarNode, path: Field, checks: _Checks) -> None:
    """A value: no lone surrogate, a date the calendar has (`2026-02-30` was PyYAML's ValueError), an integer a
    float holds, and a number written in plain decimal (YAML 1.1 reads `012` as 10, `0x10` as 16, `1_000` as 1000
    and `1:30` as 90, none of which a reader of the card sees). Where the field may hold a secret, the line says
    what YAML read and to quote it, never the value nor what it reads as."""
    line = node.start_mark.line + 1
    if _SURROGATE.search(node.value):
        raise checks.fail(line, path, "a lone surrogate (\\ud800-\\udfff) is not text; write the character itself")
    _check_invisible(node, path, checks)
    misread = _misread(node)
    if misread is not None and checks.secret(path):
        raise checks.fail(line, path, f"YAML 1.1 reads this value as {misread.words}, not as text (not shown: the "
                                      "field may hold a secret); quote it")
    digits = len(node.value.lstrip("+-"))
    if _kind(node.tag) == "int" and digits > MAX_INT_DIGITS:
        raise checks.fail(line, path, f"an integer of {digits:,} digits; expected a number of at most "
                                      f"{MAX_INT_DIGITS} digits (no count, seed or limit is larger, and a float holds "
                                      "none past 1.8e308), or quote it for text")
    if misread is not None:
        raise checks.fail(line, path, misread.said())


def _check_invisible(node: yaml.ScalarNode, path: Field, checks: _Checks) -> None:
    """No character an editor shows as nothing written as itself in a value (`_INVISIBLE`), quoted or not: in a
    prompt it changes what the model receives where no reader of the card sees it. Its line and column are counted
    as an editor counts them (by newlines alone); the value is never said back (it may be a secret)."""
    start, end = node.start_mark, node.end_mark
    if start.buffer is None:
        return
    found = _INVISIBLE_CHAR.search(start.buffer, start.pointer, end.pointer)
    if found is None:
        return
    at, text = found.start(), start.buffer
    line, column = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
    escape = f"\\u{ord(found.group()):04x}"
    raise checks.fail(line, path, f"the invisible character {_INVISIBLE[found.group()]} at line {line}, column "
                                  f"{column} (an editor shows nothing there; YAML reads it into the value); remove "
                                  f"it, or write it as the escape \"{escape}\" in double quotes where it is meant")


def _kind(tag: str) -> str:
    """A tag's last part, the key of `_TYPE_WORDS`: `int` for `tag:yaml.org,2002:int`."""
    return tag.rsplit(":", 1)[-1]


@dataclass(frozen=True)
class _Misread:
    """A number or a date that YAML 1.1 reads otherwise than a reader of the card does: `value`, what it reads
    (`012` is 10), or None with `why`, PyYAML's ValueError, where it reads nothing (`0x_`, `2026-02-30`)."""

    kind: str  # int, float or timestamp
    written: str
    value: object = None
    why: str | None = None

    @property
    def words(self) -> str:
        """What YAML read, never the value: `a date`, `a number (hexadecimal)`."""
        return _TYPE_WORDS[self.kind] + ("" if self.kind == "timestamp" else _base(self.written))

    def said(self) -> str:
        """The line's words where the value may be said back (a card's field): what YAML read, and what to write."""
        if self.kind == "timestamp":
            return (f"YAML reads {self.written} as a date, and there is no such date ({self.why}); write a date of "
                    "the calendar, or quote it for text")
        if not isinstance(self.value, int | float):  # `0x_`, `0b_`: YAML 1.1's pattern of a number, with no digit
            return (f"YAML 1.1 reads {self.written} as a number, and it has no digits to read; write the number, or "
                    "quote it for text")
        return (f"YAML 1.1 reads {self.written} as the number {self.value}{_base(self.written)}; write "
                f"{yaml_number(self.value)}, or quote it for text")


def _misread(node: yaml.ScalarNode) -> _Misread | None:
    """The one reading of a number or a date as YAML 1.1 reads it: None when it reads as it looks (a number in plain
    decimal, a date the calendar has), else what it reads instead. Only what is not plain is read here (a parse
    each), and a plain whole number too long for Python to read (past 4,300 digits: PyYAML's ValueError)."""
    kind = _kind(node.tag)
    if kind not in _NUMBER_KINDS:
        return None
    plain = kind != "timestamp" and bool(_PLAIN_NUMBER[kind].fullmatch(node.value))
    if plain and len(node.value) <= MAX_INT_DIGITS:  # as it looks, and short enough for Python to read: no parse
        return None
    try:
        value = yaml.safe_load(node.value)
    except ValueError as exc:  # PyYAML's own ValueError, no YAMLError: a traceback
        return _Misread(kind, node.value, why=str(exc))
    return None if plain or kind == "timestamp" else _Misread(kind, node.value, value)


def _base(value: str) -> str:
    """How YAML 1.1 read a number not written in plain decimal, as ` (hexadecimal)`, or nothing (`1_000`)."""
    return next((name for mark, name in _BASES if mark in value.lower()), "")


def read_as(value: object) -> str:
    """What YAML read a value of a field that may hold a secret as, in a user's words, never the value itself:
    `a number` (`0x5f3a…`, `1e3`), `true/false` (`yes`, `on`), `a date`, `null`, `a list`, `a mapping`."""
    kind = ("bool" if isinstance(value, bool) else "int" if isinstance(value, int | float)
            else "timestamp" if isinstance(value, date) else "null" if value is None
            else "seq" if isinstance(value, list) else "map" if isinstance(value, dict) else "str")
    return _TYPE_WORDS[kind]


def yaml_number(value: float) -> str:
    """A number as YAML 1.1 reads it back as that number: `1e-07` is text to it, `1.0e-07` a number."""
    text = repr(value)
    mantissa, e, exponent = text.partition("e")
    return f"{mantissa}.0e{exponent}" if e and "." not in mantissa else text


def _mapping_children(node: yaml.MappingNode, path: Field, checks: _Checks,
                      lines: Lines) -> list[tuple[yaml.Node, Field]]:
    """A mapping's values to walk next, in order; each key checked (a name, or a merge key given mappings to merge)
    and its line kept."""
    children: list[tuple[yaml.Node, Field]] = []
    seen: dict[str, int] = {}
    for key, value in node.value:
        line = key.start_mark.line + 1
        if not isinstance(key, yaml.ScalarNode):  # `? [a]`, `{[a]: 1}`: PyYAML's 'found unhashable key'
            raise checks.fail(line, path, f"a key that is {_node_words(key)}; expected a name (text)")
        name = str(key.value)
        if key.tag == _MERGE_TAG:  # `<<` written plain (or `!!merge`): may be written more than once
            _check_merge(value, (*path, name), line, checks)
        else:
            _check_key(key, line, seen, path, checks)
        sub = (*path, name)
        lines[sub] = line
        children.append((value, sub))
    return children


def _node_words(node: yaml.Node) -> str:
    """What a node is, in a user's words and never its value: `a mapping`, `a list`, `a number`, `text`."""
    if isinstance(node, yaml.MappingNode):
        return _TYPE_WORDS["map"]
    if isinstance(node, yaml.SequenceNode):
        return _TYPE_WORDS["seq"]
    return _TYPE_WORDS.get(_kind(node.tag), "a value")


def _check_merge(value: yaml.Node, field: Field, line: int, checks: _Checks) -> None:
    """A merge key's value: a mapping, or a list of mappings (PyYAML's 'expected a mapping or list of mappings for
    merging', at the line of the anchor it merges)."""
    items = value.value if isinstance(value, yaml.SequenceNode) else [value]
    bad = next((item for item in items if not isinstance(item, yaml.MappingNode)), None)
    if bad is None:
        return
    got = f"a list holding {_node_words(bad)}" if isinstance(value, yaml.SequenceNode) else _node_words(bad)
    raise checks.fail(line, field, "a merge key (<<) takes a mapping or a list of mappings (`<<: *name`, the alias "
                                   f"of a mapping written `&name` above), got {got}; merge a mapping, or quote '<<' "
                                   "for a key named so")


def _check_key(key: yaml.ScalarNode, line: int, seen: dict[str, int], path: Field, checks: _Checks) -> None:
    """A scalar key: text, not written twice in its mapping (recorded in `seen`), no surrogate or control character.
    A key of a mapping that may hold secrets (benchcard.yaml's headers) is named only once it is text that shows."""
    name = str(key.value)
    hidden = checks.secret(path)
    if key.tag not in (_STR_TAG, _implicit_tag(name)):  # `!!map x:`, `!foo x:`: a tag written on the key
        raise _tag_refused(key.tag, "a key", line, path if hidden else (*path, name), checks)
    if key.tag != _STR_TAG:
        read_as = _TYPE_WORDS[_kind(key.tag)]
        if hidden:
            raise checks.fail(line, path, f"YAML reads a key here as {read_as}, not as text (not shown: the "
                                          "mapping may hold a secret); quote it")
        raise checks.fail(line, (*path, name), f"YAML reads this key as {read_as}, not as text; quote it ('{name}')")
    if name in seen:
        raise checks.fail(line, (*path, name), f"written twice (also line {seen[name]}); keep one")
    seen[name] = line
    if _SURROGATE.search(name) or _CONTROL.search(name):
        if hidden:
            raise checks.fail(line, path, "a key holding a control character (not shown: the mapping may hold a "
                                          "secret); expected a name without control characters")
        raise checks.error(f"{checks.source}:{line}: key {name!r}: expected a name without control characters")
