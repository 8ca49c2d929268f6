"""The BENCH-01 `fields` scorer, its fixtures, its keys and its worked examples."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchcard.errors import CardError
from benchcard.records.answerkey import AnswerKey
from benchcard.scoring._fieldtext import norm as _norm
from benchcard.scoring.fields import load_key, score_fields

from ..helpers_fields import FIXTURES, KEYS, ROOT, SPEC, excerpt, key, score

EXAMPLES = ROOT / "cards" / "bench-01.yaml"
FIRST_SCREEN = 1500
IDS = [f"excerpt-{n:02d}" for n in range(1, 13)]


def span(text: str, phrase: str) -> re.Match[str] | None:
    """Where ``phrase`` occurs in ``text``, any run of whitespace matching any other."""
    return re.search(r"\s+".join(map(re.escape, phrase.split())), text)


# ------------------------------------------------------------------ fixtures and keys
def test_twelve_fixtures_and_twelve_keys() -> None:
    assert sorted(p.stem for p in FIXTURES.glob("*.txt")) == IDS
    assert sorted(p.stem for p in KEYS.glob("excerpt-*.json")) == IDS


@pytest.mark.parametrize("fixture", IDS)
def test_fixture_is_plain_utf8_lf_300_to_600_words(fixture: str) -> None:
    raw = (FIXTURES / f"{fixture}.txt").read_bytes()
    text = raw.decode("utf-8")
    assert b"\r" not in raw and text.endswith("\n") and not text.endswith("\n\n")
    assert 300 <= len(text.split()) <= 600


@pytest.mark.parametrize("fixture", IDS)
def test_key_has_exactly_the_design_shape(fixture: str) -> None:
    data = json.loads((KEYS / f"{fixture}.json").read_text(encoding="utf-8"))
    assert list(data) == ["fixture", "parties", "effective_date", "termination_rights", "obligations", "not_stated"]
    assert data["fixture"] == fixture
    for field in SPEC.fields:
        for entry in data[field]:
            assert set(entry) == {"value", "accept"} and isinstance(entry["accept"], list)
    assert len(data["parties"]) >= 2 and len(data["effective_date"]) == 1 and len(data["obligations"]) >= 2
    if fixture == "excerpt-07":
        assert data["termination_rights"] == [] and data["not_stated"] == ["termination_rights"]
    else:
        assert len(data["termination_rights"]) >= 2 and data["not_stated"] == []


@pytest.mark.parametrize("fixture", IDS)
def test_every_key_value_is_verbatim_in_its_fixture(fixture: str) -> None:
    text = " ".join(excerpt(fixture).split())
    k = key(fixture).body
    for field in SPEC.fields:
        for entry in k[field]:
            assert " ".join(entry["value"].split()) in text, (fixture, field, entry["value"])


@pytest.mark.parametrize("fixture", IDS)
def test_obligations_sit_below_the_first_screen(fixture: str) -> None:
    text = excerpt(fixture)
    first_screen = f" {_norm(text[:FIRST_SCREEN])} "
    for entry in key(fixture).body["obligations"]:
        where = span(text, entry["value"])
        assert where is not None and where.start() >= FIRST_SCREEN, (fixture, entry["value"])
        for form in entry["accept"]:  # a model that reads only the first screen cannot match them by luck
            assert f" {_norm(form)} " not in first_screen, (fixture, form)


def test_excerpt_07_has_no_termination_clause() -> None:
    text = excerpt("excerpt-07").lower()
    assert not re.search(r"terminat|cancel|rescind|expir", text)
    assert "suspend" in text  # the decoy that looks like one


def test_excerpt_07_key_is_the_design_example() -> None:
    k = key("excerpt-07").body
    assert [e["value"] for e in k["parties"]] == ["Harbourline Freight Limited", "Oakmere Foods plc"]
    assert k["effective_date"][0]["value"] == "the 3rd day of February 2025"
    assert k["obligations"][0] == {"value": "deliver the Monthly Volume Report no later than the fifth Business Day",
                                   "accept": ["monthly volume report"]}


def answer_from(k: dict[str, Any], form: str) -> str:
    """A markdown answer built from the key itself: every ``value``, or the last ``accept`` form of each."""
    lines = []
    for field in SPEC.fields:
        items = [e["value"] if form == "value" or not e["accept"] else e["accept"][-1] for e in k[field]]
        lines.append(f"**{field.replace('_', ' ').capitalize()}:**")
        lines += [f"- {x}" for x in items] or ["- Not stated in excerpt"]
    return "\n".join(lines)


@pytest.mark.parametrize("fixture", IDS)
def test_the_key_values_themselves_score_full_recall_and_are_all_supported(fixture: str) -> None:
    m = score(fixture, answer_from(key(fixture).body, "value"))
    assert m["field_recall"] == 1.0 and m["unsupported_values"] == 0
    assert m["abstains"] == (1.0 if fixture == "excerpt-07" else 0.0)


@pytest.mark.parametrize("fixture", IDS)
def test_accept_forms_alone_score_full_recall(fixture: str) -> None:
    assert score(fixture, answer_from(key(fixture).body, "accept"))["field_recall"] == 1.0


# ------------------------------------------------------------------ load_key
def write_key(tmp_path: Path, data: Any, name: str = "excerpt-99") -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def good_key() -> dict[str, Any]:
    return {"fixture": "excerpt-99", "parties": [{"value": "A Ltd", "accept": ["A"]}],
            "effective_date": [{"value": "1 May 2024", "accept": []}], "termination_rights": [],
            "obligations": [{"value": "pay", "accept": []}], "not_stated": ["termination_rights"]}


def test_load_key_returns_the_key_with_accept_defaulted(tmp_path: Path) -> None:
    data = good_key()
    del data["obligations"][0]["accept"]
    k = load_key(write_key(tmp_path, data), SPEC)
    assert k.get("obligations") == [{"value": "pay", "accept": []}] and k.get("not_stated") == ["termination_rights"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(parties="A Ltd"), "field 'parties': expected a list of {value, accept}"),
        (lambda d: d.update(parties=[{"value": "A", "accept": "A"}]), "field 'parties': expected a list of {value"),
        (lambda d: d.update(parties=[{"value": ""}]), "field 'parties': expected a list of {value, accept}"),
        (lambda d: d.update(parties=[{"value": "A", "why": "x"}]), "field 'parties': expected a list"),
        (lambda d: d.pop("obligations"), "field 'obligations': expected a list of {value, accept}"),
        (lambda d: d.update(fixture="excerpt-01"), "field 'fixture': expected the fixture id 'excerpt-99'"),
        (lambda d: d.update(obligation=[]), "field 'obligation': not a field of this card"),
        (lambda d: d.update(not_stated=[]), "field 'termination_rights': expected values, or listing in not_stated"),
        (lambda d: d.update(not_stated=["parties", "termination_rights"]),
         "field 'parties': expected no values, since it is in not_stated"),
        (lambda d: d.update(not_stated=["term"]), "field 'not_stated': expected a list of field names"),
    ],
)
def test_load_key_errors_name_file_field_and_expectation(tmp_path: Path, change: Any, message: str) -> None:
    data = good_key()
    change(data)
    path = write_key(tmp_path, data)
    with pytest.raises(CardError) as err:
        load_key(path, SPEC)
    text = str(err.value)
    present = message.split("'")[1] in data  # a field that is there is named by its line too (one line here)
    assert text.startswith(f"{path}:1: " if present else f"{path}: ") and message in text and "\n" not in text


def test_load_key_rejects_bad_json_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(CardError, match=r"excerpt-99\.json: not valid JSON"):
        load_key(write_key(tmp_path, "{nope"), SPEC)
    with pytest.raises(CardError, match=r"missing\.json: cannot read"):
        load_key(tmp_path / "missing.json", SPEC)
    with pytest.raises(CardError, match="expected a JSON object"):
        load_key(write_key(tmp_path, "[]"), SPEC)


def test_load_key_message_uses_the_path_as_given() -> None:
    path = Path("keys/bench-01/x.json")
    with pytest.raises(CardError, match=r"^keys/bench-01/x\.json: cannot read"):
        load_key(path, SPEC)


# ------------------------------------------------------------------ the scorer is blind and numeric
def test_scorer_sees_only_output_key_excerpt_and_options() -> None:
    assert list(inspect.signature(score_fields).parameters) == ["output", "key", "excerpt", "spec"]


def test_metric_names_are_fixed_and_values_are_floats() -> None:
    m = score("excerpt-07", "Parties: Harbourline Freight Limited")
    assert list(m) == ["field_recall", "field_recall.parties", "field_recall.effective_date",
                       "field_recall.obligations", "unsupported_values", "abstains", "values_returned"]
    assert all(type(v) is float for v in m.values())
    assert "field_recall.termination_rights" not in m  # 07's key has no termination values
    assert "field_recall.termination_rights" in score("excerpt-01", "")


def test_scoring_is_deterministic() -> None:
    out = "## Parties\nBrackenfield Components Ltd and Tallow & Reed Manufacturing Limited\n"
    assert score("excerpt-01", out) == score("excerpt-01", out)


def test_output_is_never_executed() -> None:
    out = '{"parties": "__import__(\'os\').system(\'exit 3\')", "obligations": "{{7*7}}"}'
    m = score("excerpt-01", out)
    assert m["values_returned"] == 2 and m["unsupported_values"] == 2 and m["field_recall"] == 0


def test_empty_output_scores_zero() -> None:
    assert score("excerpt-01", "") == {
        "field_recall": 0.0, "field_recall.parties": 0.0, "field_recall.effective_date": 0.0,
        "field_recall.termination_rights": 0.0, "field_recall.obligations": 0.0,
        "unsupported_values": 0.0, "abstains": 0.0, "values_returned": 0.0}


def test_recall_per_field_and_overall() -> None:
    out = ("- Parties: Brackenfield Components Ltd\n- Effective date: 1 March 2024\n"
           "- Termination rights: material breach\n- Obligations: buffer stock")
    m = score("excerpt-01", out)
    assert m["field_recall.parties"] == 0.5
    assert m["field_recall.effective_date"] == 1.0
    assert m["field_recall.termination_rights"] == 0.5
    assert m["field_recall.obligations"] == pytest.approx(1 / 3)
    assert m["field_recall"] == pytest.approx(4 / 8)


def test_a_value_counts_only_in_its_own_field() -> None:
    m = score("excerpt-01", "Parties: 1 March 2024\nEffective date: Brackenfield Components Ltd")
    assert m["field_recall"] == 0.0 and m["unsupported_values"] == 0


def test_accept_forms_and_short_names_count() -> None:
    m = score("excerpt-01", "Parties: Brackenfield and Tallow and Reed\nTermination: 90 days notice; material breach")
    assert m["field_recall.parties"] == 1.0 and m["field_recall.termination_rights"] == 1.0


# ------------------------------------------------------------------ unsupported values
def test_unsupported_counts_values_not_in_the_excerpt() -> None:
    out = ("- Parties: Brackenfield Components Ltd; Acme Widgets plc\n- Effective date: 2 March 2024\n"
           "- Obligations: The Supplier shall maintain a buffer stock; The Buyer shall pay within 14 days")
    m = score("excerpt-01", out)
    assert m["values_returned"] == 5 and m["unsupported_values"] == 3


def test_normalisation_ignores_case_quotes_emphasis_bullets_and_punctuation() -> None:
    out = ("Obligations:\n- **\u201cThe supplier SHALL maintain a buffer stock of products\u201d.**\n"
           "- _notify the buyer in writing within 48 hours_;\n* `provide the Supplier with a rolling twelve month "
           "forecast`")
    m = score("excerpt-01", out)
    assert m["unsupported_values"] == 0 and m["field_recall.obligations"] == 1.0


def test_roles_clause_citations_and_ellipses_are_supported_when_their_parts_are() -> None:
    ok = ('Parties: Brackenfield Components Ltd (the "Supplier"); Tallow & Reed Manufacturing Limited (Buyer)\n'
          "Termination: Either party may terminate this Agreement ... by giving the other not less than ninety (90) "
          "days' written notice (Clause 9.1)")
    assert score("excerpt-01", ok)["unsupported_values"] == 0
    bad = "Parties: Brackenfield Components Ltd (the Vendor)\nTermination: material breach (Clause 14.2)"
    assert score("excerpt-01", bad)["unsupported_values"] == 2


def test_a_date_written_another_way_is_supported_but_a_wrong_date_is_not() -> None:
    assert score("excerpt-07", "Effective date: 2025-02-03")["unsupported_values"] == 0
    assert score("excerpt-07", "Effective date: 2025-03-02")["unsupported_values"] == 1


def test_values_are_counted_once() -> None:
    out = ("Parties: Harbourline Freight Limited\n"
           "Obligations:\n- Harbourline Freight Limited\n- harbourline freight limited.")
    assert score("excerpt-07", out)["values_returned"] == 1


def test_party_lists_split_on_and_but_names_with_ampersands_survive() -> None:
    m = score("excerpt-01", "Parties: Brackenfield Components Ltd and Tallow & Reed Manufacturing Limited")
    assert m["values_returned"] == 2 and m["unsupported_values"] == 0
    m = score("excerpt-01", "Parties: Brackenfield Components Ltd & Acme plc")
    assert m["values_returned"] == 2 and m["unsupported_values"] == 1


# A synthetic excerpt whose party names, date and amount carry commas of their own.
COMMA_EXCERPT = ("This Agreement is made on 3 February, 2025 between Acme Ltd, of 1 High Street, and Beta plc, of "
                 "2 Low Road. It is joined by Acme, Inc., a Delaware corporation (the Buyer), Beta Holdings, Ltd. "
                 "(the Seller) and Smith, Jones & Co (the Agent). The Buyer shall pay the Seller 1,000,000 US "
                 "dollars, in two equal instalments, within 30 days of delivery.")


def comma_key(*parties: str) -> dict[str, Any]:
    return {"fixture": "commas", "parties": [{"value": p, "accept": []} for p in parties],
            "effective_date": [{"value": "3 February, 2025", "accept": []}], "termination_rights": [],
            "obligations": [{"value": "pay the Seller 1,000,000 US dollars", "accept": []}],
            "not_stated": ["termination_rights"]}


def score_commas(output: str, *parties: str) -> dict[str, float]:
    return score_fields(output, AnswerKey("commas", "keys/c/commas.json", comma_key(*parties)), COMMA_EXCERPT, SPEC)


@pytest.mark.parametrize("template", ["Parties: {}", "- **Parties:** {}", '{{"parties": "{}"}}', "| Parties | {} |"])
def test_comma_separated_parties_score_like_semicolons(template: str) -> None:
    commas = score_commas(template.format("Acme Ltd, Beta plc"), "Acme Ltd", "Beta plc")
    assert commas == score_commas(template.format("Acme Ltd; Beta plc"), "Acme Ltd", "Beta plc")
    assert commas["values_returned"] == 2 and commas["unsupported_values"] == 0
    assert commas["field_recall.parties"] == 1.0


def test_a_prose_party_list_with_commas_is_split_like_one_with_and() -> None:
    m = score_commas("The parties are Acme Ltd, Beta plc.", "Acme Ltd", "Beta plc")
    assert m == score_commas("The parties are Acme Ltd and Beta plc.", "Acme Ltd", "Beta plc")
    assert m["values_returned"] == 2 and m["unsupported_values"] == 0 and m["field_recall.parties"] == 1.0


@pytest.mark.parametrize(("fixture", "first", "second"), [
    ("excerpt-01", "Brackenfield Components Ltd", "Tallow & Reed Manufacturing Limited"),
    ("excerpt-01", 'Brackenfield Components Ltd (the "Supplier")', 'Tallow & Reed Manufacturing Limited (the "Buyer")'),
    ("excerpt-02", "Northgate Ledger Systems, Inc.", "Pellworth County Credit Union"),  # no legal form: a key name
    ("excerpt-07", "Harbourline Freight Limited", "Oakmere Foods plc"),
    ("excerpt-09", "Aldermoor Cloud Services B.V.", "Quillstone Legal Publishing Ltd"),
    ("excerpt-10", "Meridian Water Cooperative", "Rowan Tide Consulting Pty Ltd"),
])
def test_comma_separated_fixture_parties_are_two_supported_values(fixture: str, first: str, second: str) -> None:
    m = score(fixture, f"Parties: {first}, {second}")
    assert m == score(fixture, f"Parties: {first}; {second}")
    assert m["values_returned"] == 2 and m["unsupported_values"] == 0 and m["field_recall.parties"] == 1.0


def test_a_comma_list_with_an_invented_party_counts_it_once() -> None:
    m = score("excerpt-01", "Parties: Brackenfield Components Ltd, Acme Widgets plc")
    assert m == score("excerpt-01", "Parties: Brackenfield Components Ltd; Acme Widgets plc")
    assert m["values_returned"] == 2 and m["unsupported_values"] == 1 and m["field_recall.parties"] == 0.5
    m = score("excerpt-01", "Parties: Foo Ltd, Bar plc")
    assert m["values_returned"] == 2 and m["unsupported_values"] == 2


@pytest.mark.parametrize("output", [
    "Parties: Acme, Inc.; Beta Holdings, Ltd.; Smith, Jones & Co",
    "Parties: Acme, Inc., Beta Holdings, Ltd., Smith, Jones & Co",
    "Parties: Acme, Inc. (the Buyer), Beta Holdings, Ltd. (the Seller), Smith, Jones & Co (the Agent)",
    '{"parties": ["Acme, Inc.", "Beta Holdings, Ltd.", "Smith, Jones & Co"]}',
    "- Parties:\n  - Acme, Inc.\n  - Beta Holdings, Ltd.\n  - Smith, Jones & Co",
])
def test_company_names_with_commas_are_one_value_each(output: str) -> None:
    m = score_commas(output, "Acme, Inc.", "Beta Holdings, Ltd.", "Smith, Jones & Co")
    assert m["values_returned"] == 3 and m["unsupported_values"] == 0 and m["field_recall.parties"] == 1.0


@pytest.mark.parametrize("output", ["Parties: Zenith, Inc.", "Parties: Zenith Holdings, Ltd.",
                                    "Parties: Smith, Jones & Co"])
def test_an_invented_name_with_a_comma_is_one_unsupported_value(output: str) -> None:
    m = score("excerpt-01", output)
    assert m["values_returned"] == 1 and m["unsupported_values"] == 1


def test_a_party_with_its_description_is_not_split_into_two_values() -> None:
    verbatim = "Parties: Brackenfield Components Ltd, a company registered in England"
    assert score("excerpt-01", verbatim)["values_returned"] == 1
    wrong = 'Parties: Brackenfield Components Ltd, a company registered in Scotland with company number SC402118'
    m = score("excerpt-01", wrong)  # stitched from two places, so still one unsupported value
    assert m["values_returned"] == 1 and m["unsupported_values"] == 1


@pytest.mark.parametrize("written", ["3 February, 2025", "February 3, 2025", "Feb. 3, 2025"])
def test_a_date_with_a_comma_is_one_supported_value(written: str) -> None:
    m = score_commas(f"Effective date: {written}")
    assert m["values_returned"] == 1 and m["unsupported_values"] == 0 and m["field_recall.effective_date"] == 1.0
    for fixture in ("excerpt-02", "excerpt-05"):  # keys written "July 1, 2025" and "January 6, 2025"
        value = key(fixture).body["effective_date"][0]["value"]
        m = score(fixture, f"Effective date: {value}")
        assert m["values_returned"] == 1 and m["unsupported_values"] == 0


def test_amounts_and_clauses_with_commas_are_one_value() -> None:
    m = score_commas("Obligations: The Buyer shall pay the Seller 1,000,000 US dollars, in two equal instalments, "
                     "within 30 days of delivery")
    assert m["values_returned"] == 1 and m["unsupported_values"] == 0 and m["field_recall.obligations"] == 1.0
    m = score("excerpt-06", "Obligations: The Venue shall provide potable water, electricity and general waste "
                            "collection; The Caterer shall maintain public and product liability insurance with a "
                            "limit of indemnity of not less than £5,000,000 for any one occurrence")
    assert m["values_returned"] == 2 and m["unsupported_values"] == 0
    m = score("excerpt-07", "Parties: Harbourline Freight Limited (not less than £250,000 per vehicle)")
    assert m["values_returned"] == 1 and m["unsupported_values"] == 0


# ------------------------------------------------------------------ abstention
@pytest.mark.parametrize(
    "said",
    ["Not stated in excerpt", "not stated", "None", "N/A", "Not specified.", "Not mentioned",
     "No termination clause", "None stated", "The excerpt does not contain a termination clause.",
     "There is no right to terminate in this excerpt", "_Not stated in excerpt_",
     "Not stated. (The suspension in clause 3.2 is not a termination right.)"],
)
def test_abstention_phrases(said: str) -> None:
    m = score("excerpt-07", f"Parties: Harbourline Freight Limited\nTermination rights: {said}")
    assert m["abstains"] == 1.0, said
    assert m["values_returned"] == 1 and m["unsupported_values"] == 0  # an abstention is not a value


def test_abstention_with_a_concrete_value_is_not_an_abstention() -> None:
    m = score("excerpt-07", "Termination rights: Not stated; however, either party may terminate on 30 days' notice")
    assert m["abstains"] == 0 and m["unsupported_values"] == 1


def test_a_missing_section_is_not_an_abstention() -> None:
    assert score("excerpt-07", "Parties: Harbourline Freight Limited\nObligations: palletise")["abstains"] == 0


@pytest.mark.parametrize("empty", ["null", "[]", '""', '"Not stated in excerpt"', '["none"]'])
def test_json_empty_or_not_stated_termination_abstains(empty: str) -> None:
    out = f'```json\n{{"parties": ["Oakmere Foods plc"], "termination_rights": {empty}}}\n```'
    assert score("excerpt-07", out)["abstains"] == 1


def test_prose_abstention_after_structured_fields() -> None:
    out = ("**Parties:** Harbourline Freight Limited and Oakmere Foods plc\n**Effective date:** 3 February 2025\n\n"
           "The excerpt does not contain any termination clause.")
    m = score("excerpt-07", out)
    assert m["abstains"] == 1 and m["field_recall.parties"] == 1.0


def test_prose_abstention_ignores_a_following_remark_without_a_termination_cue() -> None:
    out = "The excerpt does not contain a termination clause; Harbourline may only suspend collections."
    assert score("excerpt-07", out)["abstains"] == 1


def test_invented_termination_right_for_07() -> None:
    out = ("- **Parties:** Harbourline Freight Limited; Oakmere Foods plc\n"
           "- **Termination rights:** Either party may terminate for material breach on 30 days' written notice")
    m = score("excerpt-07", out)
    assert m["abstains"] == 0 and m["unsupported_values"] == 1 and m["values_returned"] == 3


def test_abstaining_wrongly_on_a_fixture_that_has_termination_rights() -> None:
    m = score("excerpt-01", "Termination rights: not stated in excerpt")
    assert m["abstains"] == 1 and m["field_recall.termination_rights"] == 0


def test_a_wrong_date_misses_recall() -> None:
    m = score("excerpt-12", "Effective date: 30 September 2024")  # the signing date, not the effective date
    assert m["field_recall.effective_date"] == 0 and m["unsupported_values"] == 0


# ------------------------------------------------------------------ the card's worked examples
def examples() -> list[dict[str, Any]]:
    data = yaml.safe_load(EXAMPLES.read_text(encoding="utf-8"))
    return list(data["examples"])


def test_examples_cover_the_required_kinds() -> None:
    labels = " | ".join(e["label"].lower() for e in examples())
    assert len(examples()) >= 8
    for word in ("markdown", "json", "table", "prose", "abstention", "invents", "copies", "inferred"):
        assert word in labels, word
    ex07 = [e for e in examples() if e["fixture"] == "excerpt-07"]
    assert {e["expect"]["abstains"] for e in ex07} == {0, 1}


@pytest.mark.parametrize("example", examples(), ids=lambda e: e["label"])
def test_worked_example(example: dict[str, Any]) -> None:
    metrics = score(example["fixture"], example["output"])
    assert set(example["expect"]) == {"field_recall", "unsupported_values", "abstains"}
    for name, expected in example["expect"].items():
        assert metrics[name] == expected, (name, metrics)
