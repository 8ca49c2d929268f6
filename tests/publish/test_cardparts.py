"""Parts of a card page shared by probes and run cards: the schema.org Dataset only once a card has runs, and the
scoring, history, parameters and request views."""

from __future__ import annotations

import json
from pathlib import Path

from benchcard.card.load import load_card
from benchcard.card.model import Card
from benchcard.project import Project, ProjectConfig
from benchcard.publish._cardparts import curl_view, history_view, params_view, scoring_view

from ..helpers_project import REPO
from ..helpers_site import (
    _norm,
    page,
)


def test_no_runs_means_not_yet_run_and_no_dataset(empty_built: tuple[Project, Path]) -> None:
    _, out = empty_built
    for card_id in ("emit-terminator", "six-step-chain", "reordered-input"):
        p = page(out, f"cards/{card_id}/index.html")
        text = _norm(p.text)
        assert "Not yet run" in text
        assert "No model has been run against this probe yet" in text
        assert "This page carries no Dataset structured data until it has real runs" in text
        assert not [s for s in p.scripts if s[0].get("type") == "application/ld+json"]
        assert not any(t == "script" for t, _ in p.tags)
    bench = page(out, "cards/bench-01/index.html")
    assert "Result: not run here" in _norm(bench.text)
    assert not any(t == "script" for t, _ in bench.tags)
    # one-word-sentiment has a real published run (run 19 of v2), so it does carry a Dataset.
    ows = page(out, "cards/one-word-sentiment/index.html")
    assert [s for s in ows.scripts if s[0].get("type") == "application/ld+json"]
    assert "No rows yet" in page(out, "ledger.html").text


def test_dataset_json_ld_only_with_runs(built: tuple[Project, Path]) -> None:
    _, out = built
    for card_id in ("emit-terminator", "six-step-chain", "reordered-input", "one-word-sentiment", "bench-01"):
        p = page(out, f"cards/{card_id}/index.html")
        blocks = [s for s in p.scripts if s[0].get("type") == "application/ld+json"]
        assert len(blocks) == 1, card_id
        data = json.loads(blocks[0][1])
        assert data["@context"] == "https://schema.org" and data["@type"] == "Dataset"
        for dist in data["distribution"]:
            assert not dist["contentUrl"].startswith(("http", "/"))
            assert (out / "cards" / card_id / dist["contentUrl"]).resolve().is_file()
    assert "This page carries no Dataset" not in page(out, "cards/emit-terminator/index.html").text


def _repo_card(card_id: str) -> Card:
    return load_card(REPO / "cards" / f"{card_id}.yaml", Project(REPO))


def test_the_scoring_view_says_how_each_method_scores() -> None:
    assert scoring_view(_repo_card("one-word-sentiment")) == {
        "method": "exact", "expected": "negative", "how": "surrounding whitespace ignored, case-insensitive",
        "from_key": None}
    rules = scoring_view(_repo_card("emit-terminator"))["rules"]
    assert rules[0]["id"] == "emitted_the_terminator" and rules[0]["kind"] == "must match"
    assert any(r["kind"] == "must NOT match" and r["pattern"] == r"/<<END>>[\s\S]*<<END>>/" for r in rules)
    assert scoring_view(_repo_card("bench-01")) == {
        "method": "fields", "fields": ["parties", "effective_date", "termination_rights", "obligations"],
        "abstain_field": "termination_rights"}


def test_parameters_add_effort_and_repetitions_and_history_lists_what_each_version_changed() -> None:
    assert params_view(_repo_card("bench-01")) == [("max_tokens", "8000"), ("temperature", "1"), ("effort", "high"),
                                                   ("repetitions", "5")]
    assert params_view(_repo_card("emit-terminator")) == [("max_tokens", "1400"), ("temperature", "0")]
    history = history_view(_repo_card("one-word-sentiment"))
    assert [(h["version"], h["current"]) for h in history] == [(3, True), (2, False)]
    assert [c["label"] for c in history[1]["changes"]] == ["prompt · system at v2", "prompt · user at v2"]
    assert "Arrived two days late" in history[1]["changes"][1]["text"]


def test_the_run_it_yourself_command_or_why_it_cannot_be_built() -> None:
    card = _repo_card("bench-01")
    command = curl_view(card, ProjectConfig())
    assert command.startswith("curl https://api.anthropic.com/v1/messages \\\n  -H \"x-api-key: $ANTHROPIC_API_KEY\"")
    assert curl_view(card, ProjectConfig(), fixture="nope").startswith(
        "# cannot build the request: bench-01: no fixture 'nope'; expected one of excerpt-01, excerpt-02")
