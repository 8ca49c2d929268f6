"""The ledger row, typed: built with only the fields its kind has (the rest absent, never null), laid out in the
order rows have always been written, and a row of the wrong shape refused with the field's path."""

from __future__ import annotations

import msgspec
import pytest

from benchcard.records.ledgerrow import CHAIN_FIELDS, FIELD_ORDER, LedgerRow, RuleRate

from ..helpers_project import ledger_row


def test_an_ab_rows_fields_are_its_own_in_the_written_order_and_unset_ones_are_absent() -> None:
    fields = ledger_row().fields()
    assert list(fields) == [f for f in FIELD_ORDER if f in fields]
    assert list(fields)[:5] == ["seq", "date", "at", "card", "version"] and list(fields)[-2:] == ["prev", "hash"]
    assert {"model", "score", "passes", "rules", "sources", "judge", "verdict_digest"}.isdisjoint(fields)
    assert fields["counts"] == {"planned": 12, "scored": 12, "truncated": 0, "failed": 0, "missing": 0}
    assert fields["comparisons"] == [{"variant": "A", "finding": "inconclusive", "outcome": "non-result"}]
    assert (fields["seq"], fields["prev"], fields["hash"]) == (0, None, "")  # left for ledger.append to set
    assert CHAIN_FIELDS == ("seq", "date", "at", "prev", "hash")


def test_a_probe_row_carries_its_score_and_rules_and_a_none_stays_null() -> None:
    row = ledger_row(kind="probe", comparisons=msgspec.UNSET, metrics=msgspec.UNSET, clauses=msgspec.UNSET,
                     model="m", score=None, passes=0, score_ci=[0.0, 1.0],
                     rules={"ends": RuleRate(passes=0, n=1, rate=0.0, wilson=[0.0, 0.79])})
    fields = row.fields()
    assert fields["score"] is None and "score" in fields  # null: no scored repetition, not an absent figure
    assert fields["rules"] == {"ends": {"passes": 0, "n": 1, "rate": 0.0, "wilson": [0.0, 0.79]}}
    assert "comparisons" not in fields


def test_a_row_of_the_wrong_shape_is_refused_naming_the_field() -> None:
    good = msgspec.json.encode(ledger_row())
    assert msgspec.json.decode(good, type=LedgerRow).fields() == ledger_row().fields()
    with pytest.raises(msgspec.ValidationError, match=r"Expected `int`, got `str` - at `\$.cells`"):
        msgspec.json.decode(good.replace(b'"cells":12', b'"cells":"12"'), type=LedgerRow)
    with pytest.raises(msgspec.ValidationError, match=r"Object missing required field `missing` - at `\$.counts`"):
        msgspec.json.decode(good.replace(b',"missing":0', b""), type=LedgerRow)
    with pytest.raises(TypeError, match="Missing required argument 'evidence'"):
        LedgerRow(card="c", version=1, kind="ab", rig="r", run="x", cells=1, outcome="result", finding="win",
                  seal_root=None)  # type: ignore[call-arg]
