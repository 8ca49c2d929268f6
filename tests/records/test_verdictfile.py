"""verdict.json typed once (`benchcard.records.verdictfile`): every shape benchcard has written reads back to the same
bytes, and a file of the wrong shape is one line naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from msgspec import UNSET

from benchcard.errors import VerdictError
from benchcard.records.verdictfigures import HumanGrades, JudgeBlock, MetricFigures
from benchcard.records.verdictfile import AbVerdict, ProbeVerdict, decode_verdict, encode_verdict
from benchcard.verdict.integrity import verdict_digest

from ..helpers_project import PUBLISHED

REPO = Path(__file__).resolve().parents[2]
#: One verdict.json of each shape written before the file was typed (2026-12-01): ab, ab with a judge, with
#: human grades, with both; probe, probe with a judge; compare, compare entered in the ledger.
OLD = sorted((REPO / "tests" / "data" / "verdicts").glob("*.json"))
REPOSITORY = sorted(PUBLISHED.glob("*/v*/*/verdict.json"))


@pytest.mark.parametrize("path", OLD + REPOSITORY, ids=[p.stem for p in OLD] + ["repository"] * len(REPOSITORY))
def test_every_old_verdict_reads_back_to_the_same_bytes(path: Path) -> None:
    raw = path.read_bytes()
    verdict = decode_verdict(raw, path.name)
    assert isinstance(verdict, ProbeVerdict if verdict.kind == "probe" else AbVerdict)
    assert encode_verdict(verdict) == raw
    assert verdict_digest(verdict.fields()) == verdict_digest(json.loads(raw))  # what its ledger row anchors


def test_the_shapes_cover_every_kind_and_block() -> None:
    kinds = {json.loads(p.read_bytes())["kind"] for p in OLD}
    blocks = set().union(*(json.loads(p.read_bytes()) for p in OLD))
    assert kinds == {"ab", "probe", "compare"} and {"human", "judge", "ledger", "sources", "sealed"} <= blocks


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["counts"].update(scored="all"), "Expected `int`, got `str` - at `$.counts.scored`"),
    (lambda d: d.pop("alpha"), "Object missing required field `alpha`"),
    (lambda d: d.update(ledger={"seq": "1"}), "Expected `int | null`, got `str` - at `$.ledger.seq`"),
    (lambda d: d["metrics"]["score"].update(gap="big"), "Expected `int | float | null`, got `str` - at "
                                                        "`$.metrics[...].gap`"),
    (lambda d: d["clauses"][0].update(holds=1), "Expected `bool`, got `int` - at `$.clauses[0].holds`"),
    (lambda d: d["comparisons"][0].pop("equivalence"),
     "Object missing required field `equivalence` - at `$.comparisons[0]`"),
    (lambda d: d["bootstrap"].pop("seed"), "Object missing required field `seed` - at `$.bootstrap`"),
])
def test_a_verdict_of_the_wrong_shape_is_one_line(edit: object, message: str) -> None:
    data = json.loads((REPO / "tests" / "data" / "verdicts" / "ab.json").read_bytes())
    edit(data)  # type: ignore[operator]
    with pytest.raises(VerdictError) as caught:
        decode_verdict(json.dumps(data).encode(), "results/x/v1/r/verdict.json", VerdictError)
    assert str(caught.value) == f"results/x/v1/r/verdict.json: {message}"


def test_a_writer_cannot_set_a_field_it_did_not_declare() -> None:
    """The writers build these structs (tests/verdict/test_verdict_bytes.py has the bytes they write): a field or a
    figure no struct declares is refused when it is set, never silently left out of the file."""
    data = json.loads((REPO / "tests" / "data" / "verdicts" / "ab-human-judge.json").read_bytes())
    verdict = decode_verdict(json.dumps(data).encode(), "verdict.json")
    assert isinstance(verdict, AbVerdict)
    with pytest.raises(TypeError, match="surprise"):
        AbVerdict(**{**{f: getattr(verdict, f) for f in AbVerdict.__struct_fields__}, "surprise": 1})
    with pytest.raises(TypeError, match="surprise"):
        MetricFigures(**{**data["metrics"]["score"], "surprise": 1})


def test_the_figures_read_as_typed_attributes() -> None:
    raw = (REPO / "tests" / "data" / "verdicts" / "ab-two-variants.json").read_bytes()
    verdict = decode_verdict(raw, "verdict.json")
    assert isinstance(verdict, AbVerdict)
    recall = verdict.metrics["field_recall"]
    assert recall.means == {"baseline": 0.475, "A": 0.8, "B": 0.225} and recall.gap is UNSET
    by_variant = recall.per_variant("A")
    assert set(by_variant) == {"A", "B"} and by_variant["A"].gap == 0.325 and by_variant["B"].ci is None
    assert by_variant["A"].se is UNSET  # given before verdict.json kept the per-variant detail
    assert [c.holds for c in verdict.comparisons[0].clauses] == [True, True, True]
    assert verdict.comparisons[1].equivalence.level == 0.9 and verdict.bootstrap.resamples == 10_000
    judged = decode_verdict((REPO / "tests" / "data" / "verdicts" / "ab-human-judge.json").read_bytes(), "v.json")
    assert isinstance(judged.judge, JudgeBlock) and judged.judge.self_agreement.level == "nominal"
    assert isinstance(judged.human, HumanGrades) and judged.human.disagreements[0].cell == "c7bb74448e9"
