"""Variant names, fixture ids and metric names that read the same, or not as written, stop `check` and `seal`
with one line naming the card file, the field and the names (issue 25: "plain" and "plain" + a zero-width
space, a right-to-left override, Cyrillic look-alikes all passed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..helpers_cli import bc, one_line_error
from ..helpers_project import AB_CARD, make_ab_project

PLAIN = 'variants: {baseline: "", A: "Please.\\n"}\nbaseline: baseline'


@pytest.mark.parametrize(("variants", "expected"), [
    ('variants: {plain: "", "plain\\u200b": "Please.\\n"}\nbaseline: plain',
     "field 'variants': variant name 'plain\\u200b' holds an invisible or control character (U+200B ZERO WIDTH "
     "SPACE), so it does not read as it is written"),
    ('variants: {plain: "", "\\u202eniapl": "Please.\\n"}\nbaseline: plain',
     "field 'variants': variant name '\\u202eniapl' holds a bidirectional control character (U+202E "
     "RIGHT-TO-LEFT OVERRIDE)"),
    ('variants: {plain: "", "pl\\u0430in": "Please.\\n"}\nbaseline: plain',
     "field 'variants': variant names 'plain' and 'plаin' ('pl\\u0430in') read the same; give them names that "
     "look different"),
    ('variants: {"base": "", "\\uff42ase2": "Please.\\n"}\nbaseline: base',
     "not in Unicode normal form (NFKC); write it as 'base2'"),
])
@pytest.mark.parametrize("command", ["check", "seal"])
def test_variant_names_that_read_the_same_stop_check_and_seal(tmp_path: Path, variants: str, expected: str,
                                                             command: str) -> None:
    root = make_ab_project(tmp_path, AB_CARD.replace(PLAIN, variants))
    result = bc(root, command, "tiny-ab")
    if command == "check":  # check reports each card and goes on: the card's line names the file and field
        assert result.exit_code == 1 and "  error: cards/tiny-ab.yaml: field 'variants': " in result.output
        assert expected in result.output, result.output
    else:
        line = one_line_error(result)
        assert line.startswith("error: cards/tiny-ab.yaml: field 'variants': ") and expected in line, line
    assert not (root / "keys").exists() or not list((root / "keys").rglob("*.seal.json"))


def test_fixture_ids_that_read_the_same_are_refused(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path)
    fixtures = root / "fixtures" / "tiny-ab"
    (fixtures / "item-0l.txt").write_text("a ripe tomato\n", encoding="utf-8")  # beside item-01
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert line == ("error: cards/tiny-ab.yaml: field 'fixtures': fixture names 'item-01' and 'item-0l' read the "
                    "same; give them names that look different")


def test_metric_names_that_read_the_same_are_refused(tmp_path: Path) -> None:
    rule = "why: The only right answer.}\n"
    text = AB_CARD.replace(rule, rule + "    - {id: says_rеd, must_match: /red/i, why: 'The same, in Cyrillic.'}\n")
    assert text != AB_CARD
    root = make_ab_project(tmp_path, text)
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert "field 'scoring': metric names 'rule.says_red' and 'rule.says_rеd' ('rule.says_r\\u0435d') read the " \
           "same" in line


def test_the_repositorys_cards_pass() -> None:
    from ..helpers_run import REPO

    result = bc(REPO, "check", "--no-rig")
    assert "field 'variants'" not in result.output and "read the same" not in result.output, result.output
