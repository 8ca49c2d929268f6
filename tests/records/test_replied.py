"""What a run says of the models its replies named (records/replied.py): summed over passes, a warning only for
another model than the one asked, a note for rows whose replies were never counted, the judge apart."""

from __future__ import annotations

import msgspec
import pytest

from benchcard.records.replied import judge_replies_fact, judge_replies_line, replies_fact, replies_line
from benchcard.records.rows import CountedPass, Manifest, RigRecord, SealedJudging


def _replied(model: str, passes: list[dict[str, int]] | None, rows: list[CountedPass] | None = None) -> Manifest:
    rig = RigRecord("openrouter", model)
    return Manifest(run="r", card="c", version=1, kind="ab", seal_root="s", rig=rig, replied_models=passes,
                    replied_rows=rows)


def test_replies_naming_another_model_are_summed_over_passes_and_worded_by_how_far_they_are() -> None:
    assert replies_line(_replied("openai/gpt-4o", None)) == ""  # an old manifest, or every reply named the model
    assert "replied_models" not in _replied("gpt-4o", None).fields()
    snapshot = _replied("openai/gpt-4o", [{"openai/gpt-4o-2024-08-06": 3}, {"openai/gpt-4o-2024-08-06": 2}])
    assert replies_line(snapshot) == ""  # a snapshot of the model asked is no warning, only a fact on the page
    assert replies_fact(snapshot) == "openai/gpt-4o-2024-08-06 (5)"
    mixed = _replied("gpt-4o", [{"gpt-4o": 6, "gpt-4o-mini": 1}, {"anthropic/claude-3-haiku": 1, "gpt-4o-0613": 1}])
    assert replies_line(mixed) == ("warning: 2 of 9 replies named another model than gpt-4o, the one asked: "
                                   "gpt-4o (6), anthropic/claude-3-haiku (1), gpt-4o-0613 (1), gpt-4o-mini (1)")



#: (asked, replied, a snapshot of the name asked?): the shapes OpenAI's, Anthropic's and Vertex's replies name,
#: and suffixes that name another model (a size, a minor version, a malformed date).
SNAPSHOT_PAIRS = [
    ("gpt-4o", "gpt-4o-2024-08-06", True),
    ("openai/gpt-4o", "gpt-4o-2024-08-06", True),
    ("gpt-4o", "openai/gpt-4o-2024-11-20", True),
    ("gpt-4", "gpt-4-0613", True),
    ("gpt-3.5-turbo", "gpt-3.5-turbo-1106", True),
    ("o1", "o1-2024-12-17", True),
    ("claude-3-5-sonnet", "claude-3-5-sonnet-20241022", True),
    ("claude-3-5-sonnet-latest", "claude-3-5-sonnet-20241022", True),
    ("claude-sonnet-4-0", "claude-sonnet-4-20250514", True),
    ("claude-sonnet-4", "claude-sonnet-4@20250514", True),
    ("llama-3", "llama-3-70", False),
    ("qwen2.5-7", "qwen2.5-72", False),
    ("qwen2.5", "qwen2.5-72", False),
    ("gpt-4o", "gpt-4o-mini", False),
    ("gpt-4o", "gpt-4o-mini-2024-07-18", False),
    ("claude-opus-4", "claude-opus-4-8", False),
    ("claude-sonnet-4", "claude-sonnet-4-6", False),
    ("llama-3.1-8b", "llama-3.1-8b-1", False),
    ("gpt-4o", "gpt-4o-2024-13-06", False),
    ("gpt-4o", "gpt-4o-9999", False),
    ("gpt-4o", "gpt-4o-2024-08-06-extra", False),
    ("gpt-4o-2024-08-06", "gpt-4o", False),
    ("claude-3-5-sonnet-latest", "claude-3-5-sonnet-v2", False),
    ("claude-3-5-sonnet-latest", "claude-3-5-haiku-20241022", False),
    ("gpt-4o-2024-08-06", "gpt-4o-2024-05-13", False),  # a pinned snapshot answered by another one
    # Gemini: a stable version is three digits (gemini-1.5-pro-002), which `gemini-1.5-pro` and `-latest` point to
    # and the reply's modelVersion names (the native API's `models/` namespace is the router's); `-exp-0827` is an
    # experimental model, not a version of the stable one
    ("gemini-1.5-pro", "gemini-1.5-pro-002", True),
    ("gemini-1.5-pro-latest", "gemini-1.5-pro-002", True),
    ("gemini-1.5-pro", "models/gemini-1.5-pro-002", True),
    ("gemini-2.0-flash", "gemini-2.0-flash-001", True),
    ("gemini-1.5-pro-exp-0827", "gemini-1.5-pro-exp-0827", True),
    ("gemini-1.5-pro", "gemini-1.5-pro-exp-0827", False),
    ("gemini-1.5-pro-latest", "gemini-1.5-pro-exp-0827", False),
    ("gemini-1.5-pro-latest", "gemini-1.5-flash-002", False),
    ("gemini-1.5-pro-002", "gemini-1.5-pro-001", False),
    ("text-bison", "text-bison@002", True),  # Vertex writes a version with @
    # Mistral: `-latest` names a dated model, year and month (mistral-large-2411 is 24.11)
    ("mistral-large-latest", "mistral-large-2411", True),
    ("mistralai/mistral-large", "mistralai/mistral-large-2407", True),
    ("mistral-large-latest", "mistral-large-latest", True),
    ("mistral-large-latest", "mistral-small-2409", False),
    ("mistral-large-2411", "mistral-large-2407", False),
    ("mistral-large-latest", "mistral-large-2413", False),  # no thirteenth month
    # a router's namespace on one side only is the router's; on both sides, the nearer ones must agree
    ("vendorA/llama-3", "vendorA/llama-3", True),
    ("vendorA/llama-3", "llama-3", True),
    ("llama-3", "vendorB/llama-3", True),
    ("vendorA/llama-3", "vendorB/llama-3", False),
    ("openrouter/openai/gpt-4o", "openai/gpt-4o-2024-08-06", True),
    ("openai/gpt-4o", "azure/gpt-4o-2024-08-06", False),
    ("openrouter/openai/gpt-4o", "anthropic/gpt-4o", False),
]


@pytest.mark.parametrize(("asked", "replied", "snapshot"), SNAPSHOT_PAIRS)
def test_only_a_real_snapshot_shape_of_the_name_asked_counts_as_that_model(asked: str, replied: str,
                                                                         snapshot: bool) -> None:
    line = replies_line(_replied(asked, [{replied: 3}]))
    assert line.startswith("warning: 3 of 3 replies named another model") is not snapshot, line


def test_rows_no_pass_counted_are_said_unknown_alone_or_after_the_warning() -> None:
    asked = _replied("gpt-4o", [{"gpt-4o": 4}], [CountedPass(rows=4, uncounted=6)])
    assert replies_line(asked) == ("note: 6 output(s) were recorded by a pass whose replies' models were not counted "
                                   "(begun by an older benchcard, or killed outright): which model answered them is "
                                   "unknown")
    assert replies_fact(asked) == ""  # every counted reply named the model asked: nothing to list
    other = _replied("gpt-4o", [{"gpt-4o": 4}, {"gpt-4o-mini": 2}],
                     [CountedPass(rows=4, uncounted=6), CountedPass(rows=2)])
    assert replies_line(other).startswith("warning: 2 of 6 replies named another model than gpt-4o, the one asked: "
                                          "gpt-4o (4), gpt-4o-mini (2); 6 output(s) were recorded by a pass whose")


def test_a_run_begun_before_rows_were_counted_is_read_without_counting_its_named_replies_twice() -> None:
    """Runs begun between 796acb3 and 3980c72 recorded a pass's names only when one was another model, and no
    rows: those are the leading `replied_models` entries `replied_rows` lacks. The pass that resumed such a run
    took every row before it as uncounted, the ones those entries named too; they are known, so not unknown."""
    old = _replied("gpt-4o", [{"gpt-4o-mini": 3}])  # the old pass alone: its names, no rows
    assert replies_line(old) == ("warning: 3 of 3 replies named another model than gpt-4o, the one asked: "
                                 "gpt-4o-mini (3)")
    resumed = _replied("gpt-4o", [{"gpt-4o-mini": 3}, {"gpt-4o": 2}], [CountedPass(rows=2, uncounted=3)])
    assert replies_line(resumed) == ("warning: 3 of 5 replies named another model than gpt-4o, the one asked: "
                                     "gpt-4o-mini (3), gpt-4o (2)")  # before: '; 3 output(s) ... unknown' too
    # rows the old passes did not name (a failed cell, a pass whose replies all named the model asked) stay unknown
    partly = _replied("gpt-4o", [{"gpt-4o-mini": 3}, {"gpt-4o": 2}, {"gpt-4o": 1}],
                      [CountedPass(rows=2, uncounted=5), CountedPass(rows=1)])
    assert replies_line(partly).endswith("gpt-4o (3), gpt-4o-mini (3); 2 output(s) were recorded by a pass whose "
                                         "replies' models were not counted (begun by an older benchcard, or killed "
                                         "outright): which model answered them is unknown")
    # a run of today: as many entries as rows, nothing taken off
    today = _replied("gpt-4o", [{"gpt-4o": 2}, {"gpt-4o-mini": 1}], [CountedPass(rows=2, uncounted=3),
                                                                     CountedPass(rows=1)])
    assert replies_line(today).endswith("; 3 output(s) were recorded by a pass whose replies' models were not "
                                        "counted (begun by an older benchcard, or killed outright): which model "
                                        "answered them is unknown")


def test_the_judges_replies_are_weighed_against_the_judge_sealed() -> None:
    judge = SealedJudging(rig=RigRecord("judge", "test/judge"), per_output=3, judgements=12)
    base = Manifest(run="r", card="c", version=1, kind="ab", seal_root="s", rig=RigRecord("fake", "test/model"),
                    judge=judge, replied_models=[{"test/model": 4}], replied_rows=[CountedPass(rows=4)])
    assert judge_replies_line(base) == "" and replies_line(base) == ""
    other = msgspec.structs.replace(base, judge_replied_models=[{"test/judge": 10, "other-judge": 2}],
                                    judge_replied_rows=[CountedPass(rows=12)])
    assert judge_replies_line(other) == ("warning: 2 of 12 judge replies named another model than test/judge, the "
                                         "judge sealed: test/judge (10), other-judge (2)")
    assert replies_line(other) == ""  # the model under test's replies are weighed apart
    dated = msgspec.structs.replace(base, judge_replied_models=[{"test/judge-20250514": 12}])
    assert judge_replies_line(dated) == "" and judge_replies_fact(dated) == "test/judge-20250514 (12)"
