"""verdict.json typed once (`benchcard.verdictfile`): every shape benchcard has written reads back to the same
bytes, and a file of the wrong shape is one line naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.errors import VerdictError
from benchcard.verdict.integrity import verdict_digest
from benchcard.verdictfile import AbVerdict, ProbeVerdict, build_verdict, decode_verdict, encode_verdict

REPO = Path(__file__).resolve().parents[1]
#: One verdict.json of each shape written before the file was typed (2026-12-01): ab, ab with a judge, with
#: human grades, with both; probe, probe with a judge; compare, compare entered in the ledger.
OLD = sorted((REPO / "tests" / "data" / "verdicts").glob("*.json"))
REPOSITORY = sorted((REPO / "results").glob("*/v*/*/verdict.json"))


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
])
def test_a_verdict_of_the_wrong_shape_is_one_line(edit: object, message: str) -> None:
    data = json.loads((REPO / "tests" / "data" / "verdicts" / "ab.json").read_bytes())
    edit(data)  # type: ignore[operator]
    with pytest.raises(VerdictError) as caught:
        decode_verdict(json.dumps(data).encode(), "results/x/v1/r/verdict.json", VerdictError)
    assert str(caught.value) == f"results/x/v1/r/verdict.json: {message}"


def test_a_writer_cannot_drop_a_field_it_did_not_declare() -> None:
    data = json.loads((REPO / "tests" / "data" / "verdicts" / "probe.json").read_bytes())
    with pytest.raises(TypeError, match=r"verdict\.json has no field surprise"):
        build_verdict({**data, "surprise": 1})
