"""`benchcard compare` with its plots: one per-sample figure per (variant, gap clause) beside the comparison, and
none, said in one line, above the samples a figure can show."""

from __future__ import annotations

import json
from pathlib import Path

from benchcard.compare import RuleOptions
from benchcard.publish.compareplots import MAX_PLOTTED_SAMPLES, compare_and_plot

from ..helpers_compare import LM_A, LM_B, bc


def test_a_comparison_gets_one_figure_per_gap_clause_in_its_folder(tmp_path: Path) -> None:
    done = compare_and_plot(LM_A, LM_B, RuleOptions(None, ("acc rises", "acc_norm rises")), out=tmp_path / "c")
    assert done.samples == 40 <= MAX_PLOTTED_SAMPLES and done.plot_note == ""
    assert len(done.plots) == 2 and sorted(done.plots) == sorted((tmp_path / "c").glob("*.svg"))
    svgs = [p.read_text(encoding="utf-8") for p in sorted(done.plots)]
    assert all(s.startswith("<?xml") for s in svgs)
    assert any("acc: per-fixture paired differences" in s for s in svgs)
    assert any("acc_norm: per-fixture paired differences" in s for s in svgs)


def test_more_samples_than_a_figure_shows_get_no_plot(tmp_path: Path) -> None:
    for arm, shift in (("a", 0), ("b", 1)):
        lines = [json.dumps({"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": float((i + shift) % 2)})
                 for i in range(150)]
        (tmp_path / f"{arm}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = bc("compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--win", "acc rises", "--out",
                str(tmp_path / "cmp"))
    assert result.exit_code == 0, result.stderr
    assert "no plots: 150 samples are more than a per-sample figure shows (100 at most)" in result.stdout
    assert not list((tmp_path / "cmp").glob("*.svg"))


def test_a_log_naming_its_model_with_dollar_signs_is_compared_and_drawn_as_written(tmp_path: Path) -> None:
    """Hostile audit: matplotlib typesets text between two `$` as TeX, and a side is named after what its log
    says (its model, a task argument such as a prompt holding `$x^2$`), so `compare` of a log whose model is
    `tuned $x^$` wrote its verdict and then ended in a ValueError traceback drawing the figure."""
    for arm, shift, model in (("a", 0, "tuned $x^$"), ("b", 1, "base")):
        lines = [json.dumps({"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": float((i + shift) % 3 == 0),
                             "model_name": model}) for i in range(20)]
        (tmp_path / f"{arm}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = bc("compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--win", "acc rises", "--out",
                str(tmp_path / "cmp"))
    assert result.exit_code == 0, result.output
    assert "wrote table.csv, verdict.json, 1 plot(s)" in result.stdout
    [svg] = (tmp_path / "cmp").glob("*.svg")
    assert "base b − tuned $x^$ a, mean over repetitions" in svg.read_text(encoding="utf-8")


def test_a_logs_name_holding_a_terminal_escape_is_drawn_escaped_and_never_reaches_the_terminal(
        tmp_path: Path) -> None:
    """Hostile audit (round 12b): a name another tool's log gives (an lm-eval metric, an inspect_ai sample id) is
    drawn on the comparison's figure; one holding ESC (`acc\\x1b[2J`) was written raw into the SVG, which no XML
    reader then reads (the figure showed nothing), and matplotlib's warning that the font has no glyph for it
    printed the raw ESC on the terminal. Every label is drawn as it shows, its controls as escapes."""
    import xml.etree.ElementTree as ET

    metric = "acc\x1b[2J"
    for arm, shift in (("a", 0), ("b", 1)):
        lines = [json.dumps({"doc_id": i, "filter": "none", "metrics": [metric], metric: float((i + shift) % 3 == 0)})
                 for i in range(20)]
        (tmp_path / f"{arm}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = bc("compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--win", f"{metric} rises",
                "--out", str(tmp_path / "cmp"))
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout + result.stderr
    [svg] = (tmp_path / "cmp").glob("*.svg")
    texts = ["".join(t.itertext()) for t in ET.fromstring(svg.read_bytes()).iter("{http://www.w3.org/2000/svg}text")]
    assert "acc\\x1b[2J: per-fixture paired differences" in texts, texts
