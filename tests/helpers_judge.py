"""A small sealed judge card (ab, 2 variants × fixtures × repetitions) whose model and judge are the fake server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchcard.card.load import load_card
from benchcard.project import Project
from benchcard.scoring.judge import JudgeSpec
from benchcard.testing.fakeserver import FakeServer

from .helpers_run import KEY_ENV, seal_card

CARD_ID = "judged-ab"
VARIANT_TEXT = "Mention the colour of the fruit explicitly, in capitals.\n"
JUDGE_CARD = """\
id: judged-ab
version: 1
kind: ab
title: Does asking for the colour make the description name it?
question: Does the instruction change what the judge sees?
variable: One sentence asking for the colour.
rig: {{provider: fake, model: test/model}}
params: {{max_tokens: 50, temperature: 0.7}}
prompt:
  user: |-
    Describe the fruit.
    {{{{variant}}}}<item>{{{{fixture}}}}</item>
variants: {{yy-plain-variant: "", zz-colour-variant: "{variant_text}"}}
baseline: yy-plain-variant
fixtures: fixtures/judged-ab/*.txt
repetitions: {reps}
scoring:
  method: judge
  rig: {{provider: judge, model: test/judge}}
  params: {{max_tokens: 40, temperature: 1}}
  judgements: {k}
{floor}  scale: pass_fail
  answer: final_line
  rubric: The description names the fruit's colour as the key states it.
  prompt:
    system: You grade descriptions. Be strict.
    user: |-
      Item: {{{{fixture}}}}
      Key: {{{{key}}}}
      Rubric: {{{{rubric}}}}
      Description: <<{{{{output}}}}>>
      {{{{format}}}}
win:
  all:
    - {{metric: score, test: rises}}
  equivalence_margin: 0.05
  accept_cannot_win: true
examples:
  - {{label: Names the colour, output: "A RED tomato.", fixture: item-000, expect: pass, judge_answers: "GRADE: PASS"}}
  - label: Leaves it out
    output: A tomato.
    fixture: item-000
    expect: fail
    judge_answers: ["It does not say.\\nGRADE: FAIL", "GRADE: fail"]
history:
  - {{version: 1, note: Initial version.}}
"""


def write_judge_config(root: Path, model_url: str, judge_url: str | None = None) -> None:
    judge = judge_url or model_url
    (root / "benchcard.yaml").write_text(
        "providers:\n"
        f"  fake: {{type: openai, base_url: '{model_url}', api_key_env: {KEY_ENV}}}\n"
        f"  judge: {{type: openai, base_url: '{judge}', api_key_env: {KEY_ENV}}}\n", encoding="utf-8")


def write_judge_pool_config(root: Path, model_url: str, judge_urls: list[str], concurrency: int = 2) -> None:
    """The judge's provider as a pool of servers (`base_urls`), each taking `concurrency` calls in flight."""
    urls = "".join(f"      - {{url: '{u}', concurrency: {concurrency}}}\n" for u in judge_urls)
    (root / "benchcard.yaml").write_text(
        "providers:\n"
        f"  fake: {{type: openai, base_url: '{model_url}', api_key_env: {KEY_ENV}}}\n"
        f"  judge:\n    type: openai\n    api_key_env: {KEY_ENV}\n    base_urls:\n{urls}", encoding="utf-8")


def judge_project(root: Path, base_url: str | None = None, fixtures: int = 3, repetitions: int = 2, k: int = 3,
                  floor: float | None = None, seal: bool = True, card_text: str | None = None) -> Project:
    (root / "cards").mkdir(parents=True, exist_ok=True)
    floor_line = f"  agreement_floor: {floor}\n" if floor is not None else ""
    text = card_text or JUDGE_CARD.format(reps=repetitions, k=k, floor=floor_line,
                                          variant_text=VARIANT_TEXT.replace("\n", "\\n"))
    (root / "cards" / f"{CARD_ID}.yaml").write_text(text, encoding="utf-8")
    for folder in ("fixtures", "keys"):
        (root / folder / CARD_ID).mkdir(parents=True, exist_ok=True)
    for i in range(fixtures):
        (root / "fixtures" / CARD_ID / f"item-{i:03d}.txt").write_text(f"a ripe tomato, number {i}", encoding="utf-8")
        (root / "keys" / CARD_ID / f"item-{i:03d}.json").write_text('{"colour": "red"}', encoding="utf-8")
    if base_url is not None:
        write_judge_config(root, base_url)
    return seal_card(root, CARD_ID) if seal else Project(root)


ECHO = "A RED tomato. " + VARIANT_TEXT.strip()


def script(judge: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The model echoes its instruction when it has one; the judge answers by what the description says."""
    return {"record_bodies": True, **extra, "replies": [
        {"match": "<<A RED", **judge},
        {"match": "<<A tomato", "reply": "It leaves the colour out.\nGRADE: FAIL"},
        {"match": "Mention the colour", "reply": ECHO},
        {"match": "", "reply": "A tomato."}]}


def judge_bodies(srv: FakeServer) -> list[dict[str, Any]]:
    return [b for b in srv.stats()["bodies"] if b.get("model") == "test/judge"]


def card_text(**changes: str) -> str:
    """The judge card's text with each `old=new` replaced (each `old` must be there, so a stale edit fails)."""
    text = JUDGE_CARD.format(reps=2, k=3, floor="", variant_text=VARIANT_TEXT.replace("\n", "\\n"))
    for old, new in changes.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def spec_of(root: Path, **changes: str) -> JudgeSpec:
    """The `JudgeSpec` the card reader makes of `card_text(**changes)` in an unsealed project at `root`."""
    project = judge_project(root, seal=False, card_text=card_text(**changes))
    spec = load_card(project.card_path(CARD_ID), project).scoring
    assert isinstance(spec, JudgeSpec)
    return spec
