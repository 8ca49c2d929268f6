"""The text rule a seal records: answers and replies compared in NFC since 2026-12-08, as stored before; and the
answers `check` and `seal` warn of, which a reply typed as they read would not match."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import unicodedata
from pathlib import Path

import msgspec
import pytest

from benchcard.card._sealfile import decode_seal, encode_seal
from benchcard.card.load import load_card
from benchcard.card.seal import compute
from benchcard.project import Project
from benchcard.records.answerkey import AnswerKey
from benchcard.scoring.fields import FieldsSpec
from benchcard.scoring.scorers import ExactSpec, score_output
from benchcard.scoring.textform import answer_problems
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import bc, one_line_error
from ..helpers_run import PROBE, REPO, only_run, read_jsonl, write_config

COMPOSED = "négatif"
DECOMPOSED = unicodedata.normalize("NFD", COMPOSED)


def _probe(root: Path, base_url: str, expected: str) -> Project:
    """The published one-word probe answering `expected` (its worked example too), at the fake server, sealed."""
    (root / "cards").mkdir(parents=True)
    text = (REPO / "cards" / f"{PROBE}.yaml").read_text(encoding="utf-8")
    text = text.replace("rig: {provider: openrouter,", "rig: {provider: fake,")
    text = text.replace("expected: negative", f"expected: {expected}").replace(
        "output: negative}", f"output: {expected}}}")
    (root / "cards" / f"{PROBE}.yaml").write_text(text, encoding="utf-8")
    write_config(root, base_url)
    sealed = bc(root, "seal", PROBE)
    assert sealed.exit_code == 0, sealed.output
    return Project(root)


def _score(project: Project) -> float | None:
    scored = read_jsonl(only_run(project, PROBE) / "scores.jsonl")
    assert len(scored) == 1
    return scored[0]["score"]  # type: ignore[no-any-return]


def _as_sealed_before_the_text_rule(project: Project) -> None:
    """The probe's seal as a benchcard before 2026-12-08 wrote it: no `unicode`, its root over the rest."""
    card = load_card(project.card_path(PROBE), project)
    path = project.seal_path(PROBE, card.version)
    written = msgspec.json.decode(path.read_bytes())
    del written["unicode"]
    written["root"] = compute(card, project, decode_seal(msgspec.json.encode(written), path)).root
    path.write_bytes(encode_seal(decode_seal(msgspec.json.encode(written), path)))


def test_an_answer_pasted_decomposed_scores_the_usual_composed_reply_right(tmp_path: Path, server: FakeServer,
                                                                          key: str) -> None:
    """Hostile audit 2026-12-08 (left open, closed here): an answer typed in NFD (copied from a macOS file name)
    scored a reply in NFC, the form models and keyboards write, as wrong: 'négatif' against 'négatif', 0. A seal
    made now names its text rule, and both sides are compared in NFC."""
    project = _probe(tmp_path, server.base_url, DECOMPOSED)
    assert json.loads(project.seal_path(PROBE, 3).read_text(encoding="utf-8"))["unicode"] == "nfc"
    server.configure({"default_reply": COMPOSED})
    ran = bc(tmp_path, "run", PROBE)
    assert ran.exit_code == 0, ran.output
    assert _score(project) == 1.0


def test_a_version_sealed_before_the_text_rule_keeps_its_scores_and_check_says_why(tmp_path: Path,
                                                                                  server: FakeServer, key: str) -> None:
    """A seal without the rule compares as stored, as its runs were scored: the same reply still scores 0 (a resumed
    or retried run of it is scored alike), its seal holds, and `check` warns in one line naming the file, the field
    and what to do; the verdict of a run made so is given as scored."""
    project = _probe(tmp_path, server.base_url, DECOMPOSED)
    _as_sealed_before_the_text_rule(project)
    server.configure({"default_reply": COMPOSED})
    assert bc(tmp_path, "run", PROBE).exit_code == 0
    assert _score(project) == 0.0
    checked = bc(tmp_path, "check", PROBE)
    assert checked.exit_code == 0, checked.output
    warned = [line for line in checked.stdout.splitlines() if line.startswith("  warning:")]
    assert warned == [
        "  warning: cards/one-word-sentiment.yaml: field 'scoring.expected': the answer "
        f"'{DECOMPOSED}' ('ne\\u0301gatif') is not in NFC, the composed form replies use (it is decomposed, NFD, "
        "as text copied from a macOS file name is); v3 was sealed before answers and replies were compared in NFC "
        "(2026-12-08), so a reply of this text composed scores as another text: make it v4, whose seal compares "
        "them in NFC"]
    given = bc(tmp_path, "verdict", only_run(project, PROBE).name)
    assert given.exit_code == 0 and "0 of 1 pass" in given.stdout, given.output


def test_a_seal_naming_a_text_rule_from_a_newer_benchcard_is_refused_in_one_line(tmp_path: Path,
                                                                                server: FakeServer) -> None:
    project = _probe(tmp_path, server.base_url, "negative")
    path = project.seal_path(PROBE, 3)
    path.write_text(path.read_text(encoding="utf-8").replace('"nfc"', '"nfkc"'), encoding="utf-8")
    assert one_line_error(bc(tmp_path, "check", PROBE)) == (
        "error: keys/one-word-sentiment/v3.seal.json: field 'unicode': text rule 'nfkc' is not one this benchcard "
        "knows ('nfc'): the seal was written by a newer benchcard; upgrade benchcard to read it")


def _fields_key(value: str) -> AnswerKey:
    return AnswerKey("excerpt-01", "keys/x/excerpt-01.json", {"fixture": "excerpt-01", "not_stated": [],
                                                              "parties": [{"value": value, "accept": []}]})


@pytest.mark.parametrize("nfc", [True, False])
def test_the_fields_scorer_reads_key_excerpt_and_reply_by_the_rule(nfc: bool) -> None:
    """The fields scorer's words split a decomposed accent off its letter ('socie te ge ne rale'): a key and an
    excerpt pasted in NFD found no composed reply, and called its party unsupported. Under the rule they match."""
    name = "Société Générale SA"
    spec = FieldsSpec(("parties",), None, nfc=nfc)
    excerpt = unicodedata.normalize("NFD", f"This agreement is made between {name} and Oakmere Foods plc.")
    metrics = score_output(spec, f"Parties: {name}", _fields_key(unicodedata.normalize("NFD", name)), excerpt).metrics
    assert (metrics["field_recall"], metrics["unsupported_values"]) == ((1.0, 0.0) if nfc else (0.0, 1.0))


@pytest.mark.parametrize(("answer", "said"), [
    ("neg\u00a0ative", "holds U+00A0 NO-BREAK SPACE, which looks like a space but is compared as itself"),
    ("neg\u200bative", "holds U+200B ZERO WIDTH SPACE, which shows as nothing but is compared as itself"),
    ("nega\ufefftive", "holds U+FEFF ZERO WIDTH NO-BREAK SPACE, which shows as nothing but is compared as itself"),
    ("\uff14\uff12", "holds U+FF14 FULLWIDTH DIGIT FOUR, which looks like '4' but is compared as itself"),
])
def test_check_warns_of_an_answer_holding_a_character_that_looks_like_another(tmp_path: Path, server: FakeServer,
                                                                              answer: str, said: str) -> None:
    """`check` and `seal` say, in one line naming the file and field, an answer a reply typed as it reads would not
    match; a warning (exit 0): the answer may mean it."""
    (tmp_path / "cards").mkdir()
    written = json.dumps(answer)
    text = (REPO / "cards" / f"{PROBE}.yaml").read_text(encoding="utf-8").replace(
        "expected: negative", f"expected: {written}").replace("output: negative}", f"output: {written}}}")
    (tmp_path / "cards" / f"{PROBE}.yaml").write_text(text, encoding="utf-8")
    line = "warning: cards/one-word-sentiment.yaml: field 'scoring.expected': the answer "
    for args in (("check", PROBE), ("seal", PROBE)):
        done = bc(tmp_path, *args)
        assert done.exit_code == 0, done.output
        warned = [w.strip() for w in done.stdout.splitlines() if "warning:" in w]
        assert len(warned) == 1 and warned[0].startswith(line) and f" {said}; " in warned[0], done.output


def test_what_holds_no_look_alike_is_not_warned_of() -> None:
    """A plain answer, one with accents composed, a CJK answer and an emoji are said nothing of; a decomposed one
    only where the scorer compares as stored."""
    for text in ("negative", COMPOSED, "東京", "👍🏽", "a\tb"):
        assert answer_problems(text, normalised=False) == []
    assert answer_problems(DECOMPOSED, normalised=True) == []
    assert answer_problems("12\u00a0000", normalised=True, spaces=False) == []
    assert len(answer_problems(DECOMPOSED, normalised=False)) == 1


def test_exact_compares_in_nfc_only_under_the_rule() -> None:
    for nfc, got in ((True, 1.0), (False, 0.0)):
        spec = ExactSpec(DECOMPOSED, case_sensitive=False, nfc=nfc)
        assert score_output(spec, f" {COMPOSED.upper()}\n").score == got


# ------------------------------------------------------------------ the trim rule: JavaScript's white space


def test_exact_trims_a_byte_order_mark_as_javascript_does_under_a_seal_made_now(tmp_path: Path, server: FakeServer,
                                                                               key: str) -> None:
    """Hostile audit 2026-12-08 (left open, closed here): a reply opening with U+FEFF (invisible) scored 0 under
    `exact`, whose trim was Python's `strip` (it keeps U+FEFF), while the rules follow JavaScript, whose `trim`
    removes it. A seal made now names its trim rule, `whitespace: js`, and the reply scores 1."""
    project = _probe(tmp_path, server.base_url, "negative")
    assert json.loads(project.seal_path(PROBE, 3).read_text(encoding="utf-8"))["whitespace"] == "js"
    server.configure({"default_reply": "\ufeffnegative\u3000\n"})
    ran = bc(tmp_path, "run", PROBE)
    assert ran.exit_code == 0, ran.output
    assert _score(project) == 1.0


def test_a_version_sealed_before_the_trim_rule_keeps_its_scores(tmp_path: Path, server: FakeServer, key: str
                                                                ) -> None:
    """A seal without `whitespace` trims as Python did, so its runs (made, resumed, retried) keep their scores:
    the same reply still scores 0, and its seal still holds."""
    project = _probe(tmp_path, server.base_url, "negative")
    card = load_card(project.card_path(PROBE), project)
    path = project.seal_path(PROBE, card.version)
    written = msgspec.json.decode(path.read_bytes())
    del written["whitespace"], written["json_keys"]
    written["root"] = compute(card, project, decode_seal(msgspec.json.encode(written), path)).root
    path.write_bytes(encode_seal(decode_seal(msgspec.json.encode(written), path)))
    server.configure({"default_reply": "\ufeffnegative"})
    assert bc(tmp_path, "run", PROBE).exit_code == 0
    assert _score(project) == 0.0
    assert bc(tmp_path, "check", PROBE).exit_code == 0


def test_the_trim_rule_removes_exactly_what_javascripts_trim_removes() -> None:
    """`JS_SPACE` is ECMAScript's WhiteSpace and LineTerminator: node's own `trim` agrees on every character of the
    Basic Multilingual Plane (none beyond it is white space), and its Zs part is this Python's Zs category."""
    from benchcard.scoring.textform import JS_SPACE

    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed: the differential test against JavaScript cannot run")
        pytest.skip("needs node to compare with a real JavaScript engine")
    script = ("const out = []; for (let i = 0; i < 0x10000; i++) { const c = String.fromCharCode(i); "
              "if (c.trim() === '') out.push(i); } process.stdout.write(JSON.stringify(out));")
    trimmed_by_node = json.loads(subprocess.run([node, "-e", script], capture_output=True, text=True,
                                                check=True).stdout)
    assert sorted(map(ord, JS_SPACE)) == trimmed_by_node
    zs = {chr(i) for i in range(0x110000) if unicodedata.category(chr(i)) == "Zs"}
    assert zs <= set(JS_SPACE) and set(JS_SPACE) - zs == set("\t\v\f\ufeff\n\r\u2028\u2029")
    assert "\x1c\x85".strip() == "" and "\x1c\x85".strip(JS_SPACE) == "\x1c\x85"  # Python's strip, not JS's


@pytest.mark.parametrize("js_trim", [True, False])
def test_the_fields_scorer_reads_a_reply_opening_with_a_byte_order_mark_by_the_rule(js_trim: bool) -> None:
    """A leading U+FEFF hid the first label of a fields reply: 'Parties:' was not read as a label, so the whole line,
    label and all, was taken for one value the excerpt does not support; under the trim rule the reply's ends lose
    it first."""
    name = "Harbourline Freight Limited"
    spec = FieldsSpec(("parties",), None, js_trim=js_trim)
    excerpt = f"This agreement is made between {name} and Oakmere Foods plc."
    metrics = score_output(spec, f"\ufeffParties: {name}", _fields_key(name), excerpt).metrics
    assert (metrics["field_recall"], metrics["unsupported_values"]) == ((1.0, 0.0) if js_trim else (1.0, 1.0))


# ------------------------------------------------------------------ the JSON rule: a key written twice


@pytest.mark.parametrize("all_keys", [True, False])
def test_a_fields_reply_writing_a_key_twice_is_read_with_both_values_by_the_rule(all_keys: bool) -> None:
    """Hostile audit 2026-12-08 (left open, closed here): `{"parties": "Acme Ltd", "parties": "Beta plc"}` was read
    as `json.loads` reads it, the last value alone: the Acme Ltd the reply named was not found (recall 0). Under the
    rule both values are read, each checked against the key and the excerpt like any other value (a value the
    excerpt does not hold is unsupported); a seal without it reads the last alone, as its runs were scored."""
    spec = FieldsSpec(("parties",), None, all_keys=all_keys)
    excerpt = "This agreement is made between Acme Ltd and Beta plc."
    reply = '{"parties": "Acme Ltd", "parties": "Beta plc"}'
    metrics = score_output(spec, reply, _fields_key("Acme Ltd"), excerpt).metrics
    assert (metrics["field_recall"], metrics["unsupported_values"], metrics["values_returned"]) == (
        (1.0, 0.0, 2.0) if all_keys else (0.0, 0.0, 1.0))
    invented = score_output(spec, '{"parties": "Acme Ltd", "parties": "Gamma GmbH"}', _fields_key("Acme Ltd"),
                            excerpt).metrics
    assert (invented["field_recall"], invented["unsupported_values"]) == ((1.0, 1.0) if all_keys else (0.0, 1.0))


def test_a_seal_made_now_records_the_json_rule_and_an_older_one_reads_the_last_value(tmp_path: Path) -> None:
    """The rule is part of the seal (covered by its root), so it is read by the version it was sealed with."""
    from benchcard.card.seal import seal

    from ..helpers_project import copy_project

    root = copy_project(tmp_path / "proj", cards=("bench-01",))
    project = Project(root)
    card = load_card(project.card_path("bench-01"), project)
    seal(card, project)
    path = project.seal_path("bench-01", card.version)
    written = msgspec.json.decode(path.read_bytes())
    assert written["json_keys"] == "all"
    assert isinstance(card.scoring, FieldsSpec) and card.scoring.all_keys
    del written["json_keys"]
    written["root"] = compute(card, project, decode_seal(msgspec.json.encode(written), path)).root
    path.write_bytes(encode_seal(decode_seal(msgspec.json.encode(written), path)))
    older = load_card(project.card_path("bench-01"), project)
    assert isinstance(older.scoring, FieldsSpec) and not older.scoring.all_keys and older.scoring.js_trim
    assert bc(root, "check", "bench-01").exit_code == 0
