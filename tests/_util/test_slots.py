"""A prompt's slots and their escape (`\\{{x}}` sends `{{x}}`), one reader for an ab prompt and a judge's: as the
card reader counts them, as a run sends them. (A judge's: tests/scoring/judge/test_spec.py, run/test_judging.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard._util.slots import fill_slots, slot_name, slots_in, text_after
from benchcard.card.load import load_card
from benchcard.card.seal import read, verify
from benchcard.errors import CardError
from benchcard.project import Project
from benchcard.testing.fakeserver import FakeServer

from ..helpers_project import AB_CARD, make_ab_project
from ..helpers_run import ab_project, bc, only_run, seal_card, seal_card_at

SLOTS = {"{{variant}}": "Please.\n", "{{fixture}}": "a tomato"}


@pytest.mark.parametrize(("text", "sent"), [
    (r"Write \{{name}}: {{variant}}{{fixture}}", "Write {{name}}: Please.\na tomato"),
    (r"\{{variant}} then {{variant}}", "{{variant}} then Please.\n"),  # a slot's own braces, as text
    (r"\{{ name }} \{{fixture.id}} \\{{x}}", r"{{ name }} {{fixture.id}} \{{x}}"),
    (r"a \{ b \{{ c \}} {{x} \n", r"a \{ b \{{ c \}} {{x} \n"),  # nothing slot-like: as written
])
def test_an_escaped_slot_is_sent_as_its_braces_and_the_others_are_filled(text: str, sent: str) -> None:
    assert fill_slots(text, SLOTS) == sent


def test_a_filled_value_holding_an_escape_or_a_slot_is_never_read_again() -> None:
    assert fill_slots("{{variant}}{{fixture}}", {"{{variant}}": r"\{{x}}", "{{fixture}}": "{{variant}}"}) == (
        r"\{{x}}{{variant}}")


def test_the_slots_counted_are_those_not_escaped() -> None:
    assert slots_in(r"{{variant}} \{{variant}} {{ x }} \{{y}} {{{fixture}}}") == [
        "{{variant}}", "{{ x }}", "{{fixture}}"]


def test_a_slot_is_named_without_its_spaces_and_found_past_an_escaped_one() -> None:
    assert [slot_name(s) for s in slots_in(r"{{ output }} {{key.a}} \{{rubric}}")] == ["output", "key.a"]
    text = "Say \\{{variant}} <a>{{fixture}}</a>\n{{variant}}<b>{{fixture}}"
    assert text_after(text, "{{variant}}") == "<b>{{fixture}}"
    assert text_after(r"only \{{variant}}", "{{variant}}") is None


def _card(user: str) -> str:
    text = AB_CARD.replace("Name the colour.", user)
    assert text != AB_CARD
    return text


def test_an_escaped_slot_passes_the_check_an_unescaped_one_fails(tmp_path: Path) -> None:
    """A prompt for a template-writing task must show `{{name}}` to the model: `\\{{name}}` is taken, `{{name}}`
    is refused with the escape named, and an escaped `{{variant}}` is not the prompt's `{{variant}}`."""
    make_ab_project(tmp_path, _card(r"Fill \{{name}} and \{{variant}} in."))
    assert bc(Project(tmp_path), "check", "tiny-ab").exit_code == 0
    make_ab_project(tmp_path / "b", _card("Fill {{name}} in."))
    refused = bc(Project(tmp_path / "b"), "check", "tiny-ab")
    assert refused.exit_code == 1
    assert ("error: cards/tiny-ab.yaml:12: field 'prompt.user': holds {{name}}, which no slot of this card fills: it "
            "would reach the model as written; expected only {{fixture}}, {{variant}} (write \\{{name}} to send "
            "{{name}} as text)\n") in refused.stdout
    text = AB_CARD.replace("{{variant}}", r"\{{variant}}")
    project = Project(Path(make_ab_project(tmp_path / "c", text)))
    only_escaped = bc(project, "check", "tiny-ab")
    assert only_escaped.exit_code == 1 and "must contain {{variant}} exactly once" in only_escaped.stdout


def test_a_card_with_an_escaped_slot_seals_as_written_and_the_model_receives_the_braces(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    user = r"Name the colour. Answer in the form \{{colour}}."
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1, user=user)
    loaded = load_card(tmp_path / "cards" / "colour-ab.yaml", project)
    assert loaded.protocol()["prompt"]["user"].startswith(user)  # the seal hashes the prompt as written
    assert read("colour-ab", 1, project) is not None
    server.configure({"default_reply": "red", "record_bodies": True})
    result = bc(project, "run", "colour-ab")
    assert result.exit_code == 0, result.output
    users = {b["messages"][1]["content"] for b in server.stats()["bodies"]}
    assert users == {f"Name the colour. Answer in the form {{{{colour}}}}.\n{v}<item>a ripe tomato, number {i}</item>"
                     for v in ("", "Please.\n") for i in range(2)}
    requests = (only_run(project, "colour-ab") / "sealed" / "requests.jsonl").read_text(encoding="utf-8")
    assert {json.loads(line)["body"]["messages"][1]["content"] for line in requests.splitlines()} == users


@pytest.mark.parametrize(("text", "sent"), [
    (r"Open C:\\{{fixture}}", "Open C:\\a tomato"),  # an even run: half of it as text, the slot filled
    (r"\\\{{x}} \\\\{{variant}}", r"\{{x}} \\Please." + "\n"),  # odd: half of it, then the braces as text
    (r"C:\{{fixture}} a\b \{ \\", r"C:{{fixture}} a\b \{ \\"),  # a backslash not before a slot: text
])
def test_a_run_of_backslashes_before_a_slot_is_halved_and_an_even_one_leaves_it_filled(text: str, sent: str) -> None:
    assert fill_slots(text, SLOTS) == sent
    assert slots_in(r"C:\\{{fixture}} \\\{{variant}}") == ["{{fixture}}"]
    assert text_after(r"\\{{variant}}<b>", "{{variant}}") == "<b>"


def test_the_rule_before_the_escape_reads_every_backslash_as_text() -> None:
    assert fill_slots(r"C:\{{fixture}} \\{{variant}}", SLOTS, escapes=False) == "C:\\a tomato \\\\Please.\n"
    assert slots_in(r"\{{variant}} C:\{{fixture}}", escapes=False) == ["{{variant}}", "{{fixture}}"]


def _windows_path_project(root: Path, base_url: str, user: str) -> Project:
    """The colour card sealed anew with its fixture after a Windows path (`user` in place of `<item>{{fixture}}…`)."""
    project = ab_project(root, base_url, fixtures=2, repetitions=1)
    card = root / "cards" / "colour-ab.yaml"
    text = card.read_text(encoding="utf-8")
    assert "<item>{{fixture}}</item>" in text
    card.write_text(text.replace("<item>{{fixture}}</item>", user), encoding="utf-8")
    project.seal_path("colour-ab", 1).unlink()
    return project


def _users(project: Project, server: FakeServer) -> set[str]:
    server.configure({"default_reply": "red", "record_bodies": True})
    result = bc(project, "run", "colour-ab")
    assert result.exit_code == 0, result.output
    return {b["messages"][1]["content"] for b in server.stats()["bodies"]}


def test_a_backslash_right_before_a_filled_slot_is_written_twice(tmp_path: Path, server: FakeServer,
                                                                  key: str) -> None:
    """`C:\\\\{{fixture}}` sends `C:\\` then the fixture (Handlebars' rule), where `C:\\{{fixture}}` would leave the
    slot unfilled; `\\{{x}}` still sends `{{x}}`."""
    project = _windows_path_project(tmp_path, server.base_url, r"Open C:\\{{fixture}} as \{{x}}")
    seal_card(tmp_path, "colour-ab")
    assert _users(project, server) == {f"Name the colour.\n{v}Open C:\\a ripe tomato, number {i} as {{{{x}}}}"
                                       for v in ("", "Please.\n") for i in range(2)}


def test_a_version_sealed_before_the_escape_sends_what_it_sent_when_sealed(tmp_path: Path, server: FakeServer,
                                                                           key: str) -> None:
    """`C:\\{{fixture}}` sealed on 2026-12-01 loads and sends `C:\\` and the fixture (in a run and in curl), its
    seal unchanged; the same prompt sealed since the escape does not load (its only {{fixture}} is text), and
    `C:\\\\{{fixture}}` sealed before it sends both backslashes, as it did."""
    project = _windows_path_project(tmp_path, server.base_url, r"Open C:\{{fixture}}")
    seal_card_at(project, "colour-ab", "2026-12-01T10:00:00Z", escapes=False)
    checked = bc(project, "check", "colour-ab")
    assert checked.exit_code == 0
    assert ("warning: cards/colour-ab.yaml: field 'prompt.user': a backslash right before a slot is text here, as "
            "when v1 was sealed (before the slot escape of 2026-12-07 15:49 UTC); in a later version it escapes the "
            "slot: write two (C:\\\\{{fixture}}) for a backslash then the slot, in v2\n") in checked.stdout
    card = load_card(project.card_path("colour-ab"), project)
    sealed = read("colour-ab", 1, project)
    assert not card.slot_escapes and sealed is not None and verify(card, project) == sealed.root
    assert _users(project, server) == {f"Name the colour.\n{v}Open C:\\a ripe tomato, number {i}"
                                       for v in ("", "Please.\n") for i in range(2)}
    curl = bc(project, "curl", "colour-ab").stdout  # JSON: a backslash is written twice
    assert r'"content": "Name the colour.\nOpen C:\\a ripe tomato, number 0"' in curl

    now = _windows_path_project(tmp_path / "now", server.base_url, r"Open C:\{{fixture}}")
    seal_card_at(now, "colour-ab", "2026-12-07T16:00:00Z", escapes=False)  # since the escape
    with pytest.raises(CardError, match=r"field 'prompt.user': an ab prompt must contain \{\{fixture\}\} exactly once"):
        load_card(now.card_path("colour-ab"), now)

    then = _windows_path_project(tmp_path / "then", server.base_url, r"Open C:\\{{fixture}}")
    seal_card_at(then, "colour-ab", "2026-12-07T15:49:07Z", escapes=False)
    assert not load_card(then.card_path("colour-ab"), then).slot_escapes
    assert load_card(then.card_path("colour-ab"), then).messages("baseline", "x")[1]["content"].endswith(
        "Open C:\\\\x")
