"""`benchcard compare` given and written (compare/_comparison.py): the rule given once, where the comparison is
written, its seed from the two logs, the ledger only when asked, the run term taken as zero and said so, and the
lines it prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy import stats

from benchcard._util.hashing import digest, file_digest, seed_from
from benchcard.cli import cli
from benchcard.compare._comparison import RuleOptions, compare
from benchcard.errors import CompareError
from benchcard.project import Project
from benchcard.records import ledger

from ..helpers_compare import LM_A, LM_B, bc, lm_column


def test_ledger_only_when_asked_and_marked_unsealed(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "cards").mkdir(parents=True)
    project = Project(root)
    first = CliRunner().invoke(cli, ["-C", str(root), "compare", str(LM_A), str(LM_B), "--win", "acc rises"])
    assert first.exit_code == 0, first.stderr
    assert ledger.read(project) == [] and len(list((root / "results" / "_compare").iterdir())) == 1
    entered = CliRunner().invoke(cli, ["-C", str(root), "compare", str(LM_A), str(LM_B), "--win", "acc rises",
                                       "--ledger", "--json"])
    assert entered.exit_code == 0, entered.stderr
    v = json.loads(entered.stdout)
    [row] = [r.fields() for r in ledger.read(project)]  # as written
    assert row["kind"] == "compare" and row["unsealed"] is True and row["seal_root"] is None
    assert row["finding"] == v["finding"] and row["evidence"] == v["evidence"] and row["run"] == v["run"]
    assert v["ledger"]["seq"] == 1 and (root / v["evidence"] / "verdict.json").is_file()
    assert row["metrics"]["acc"]["gap"] == pytest.approx(0.125)
    verify = CliRunner().invoke(cli, ["-C", str(root), "ledger", "--verify"])
    assert verify.exit_code == 0, verify.output
    assert "ledger ok: 1 row(s)" in verify.stdout and "note" not in verify.stdout  # anchored: table, verdict
    shown = CliRunner().invoke(cli, ["-C", str(root), "ledger"])
    assert "unsealed" in shown.stdout and "compare" in shown.stdout
    site = CliRunner().invoke(cli, ["-C", str(root), "site"])
    assert site.exit_code == 0, site.output
    assert "compare (unsealed)" in (root / "site" / "ledger.html").read_text(encoding="utf-8")
    table = root / v["evidence"] / "table.csv"
    table.write_text(table.read_text().replace("model-b", "model-x"), encoding="utf-8")
    tampered = CliRunner().invoke(cli, ["-C", str(root), "ledger", "--verify"])
    assert tampered.exit_code == 1 and f"{v['evidence']}/table.csv changed" in tampered.stdout


def test_a_one_epoch_comparison_can_win_and_says_the_run_term_is_taken_as_zero(tmp_path: Path) -> None:
    """lm-eval logs have one epoch: a clear paired gain is a win, with the plain paired interval, said so."""
    rows_a = [json.loads(line) for line in LM_A.read_text(encoding="utf-8").splitlines()]
    for name, acc in (("model-a", lambda i: float(i % 2)), ("model-b", lambda i: 1.0 if i % 5 else float(i % 2))):
        folder = tmp_path / name
        folder.mkdir()
        lines = [json.dumps({**r, "acc": acc(r["doc_id"]), "acc_norm": acc(r["doc_id"])}) for r in rows_a]
        (folder / LM_A.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    a, b = tmp_path / "model-a" / LM_A.name, tmp_path / "model-b" / LM_A.name
    result = bc("compare", str(a), str(b), "--win", "acc rises", "--out", str(tmp_path / "cmp"), "--json")
    assert result.exit_code == 0, (result.output, result.stderr)
    v = json.loads(result.stdout)
    d = lm_column(b, "acc") - lm_column(a, "acc")
    ref = stats.t.interval(0.95, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    assert v["metrics"]["acc"]["ci"] == pytest.approx(list(ref), abs=1e-9) and ref[0] > 0
    assert v["finding"] == "win" and v["outcome"] == "result"
    assert "Epochs are not runs" in v["why"] and v["why"].startswith("unsealed comparison: ")


def _lm(path: Path, accs: list[float]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"doc_id": i, "metrics": ["acc"], "acc": a}) + "\n"
                            for i, a in enumerate(accs)), encoding="utf-8")
    return path


def test_the_rule_is_given_once_and_the_logs_must_share_a_metric(tmp_path: Path) -> None:
    rule = tmp_path / "rule.yaml"
    rule.write_text("all: [{metric: acc, test: rises}]\n", encoding="utf-8")
    with pytest.raises(CompareError, match="give the win rule once: --rule FILE or --win clauses, not both"):
        compare(LM_A, LM_B, RuleOptions(file=rule, clauses=("acc rises",)))
    other = tmp_path / "f1.jsonl"
    other.write_text(json.dumps({"doc_id": 0, "metrics": ["f1"], "f1": 0.5}) + "\n", encoding="utf-8")
    with pytest.raises(CompareError) as err:
        compare(LM_A, other, RuleOptions(clauses=("acc rises",)))
    assert str(err.value) == (f"{LM_A} and {other} have no numeric metric in common (first: acc, acc_norm; "
                              "second: f1)")


def test_without_a_project_the_comparison_is_written_here_and_never_entered(tmp_path: Path) -> None:
    got = compare(LM_A, LM_B, RuleOptions(clauses=("acc rises",)), project=Project(tmp_path / "no-cards"))
    assert got.out_dir.parent == tmp_path and got.out_dir.name == f"compare-{got.file.run}"
    assert {p.name for p in got.out_dir.iterdir()} == {"table.csv", "verdict.json"}
    assert got.ledger_row is None and got.samples == 40
    assert json.loads((got.out_dir / "verdict.json").read_text(encoding="utf-8")) == got.to_json()


def test_the_seed_is_the_two_logs_digest_so_a_comparison_made_again_gives_the_same_figures(tmp_path: Path) -> None:
    first = compare(LM_A, LM_B, RuleOptions(clauses=("acc rises",)), out=tmp_path / "1", n_resamples=2000)
    again = compare(LM_A, LM_B, RuleOptions(clauses=("acc rises",)), out=tmp_path / "2", n_resamples=2000)
    assert first.file.bootstrap.seed == seed_from(digest([file_digest(LM_A), file_digest(LM_B)]))
    assert first.to_json()["metrics"] == again.to_json()["metrics"]
    assert (tmp_path / "1" / "table.csv").read_bytes() == (tmp_path / "2" / "table.csv").read_bytes()


def test_a_ledger_rows_evidence_must_be_inside_the_project(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "cards").mkdir(parents=True)
    with pytest.raises(CompareError, match=r"--out .*outside: outside the project; a ledger row's evidence"):
        compare(LM_A, LM_B, RuleOptions(clauses=("acc rises",)), project=Project(root), out=tmp_path / "outside",
                enter_ledger=True)
    assert not (tmp_path / "outside").exists() and not Project(root).ledger_path.exists()


def test_the_lines_say_what_was_compared_and_that_it_was_unsealed(tmp_path: Path) -> None:
    a = _lm(tmp_path / "model-a" / "samples_t_2026.jsonl", [0.0, 1.0] * 6)
    b = _lm(tmp_path / "model-b" / "samples_t_2026.jsonl", [1.0] * 12)
    got = compare(a, b, RuleOptions(clauses=("acc rises",)), out=tmp_path / "cmp", n_resamples=2000)
    lines = got.lines()
    assert lines[0] == f"unsealed comparison · lm-eval · model-a (baseline, {a}) vs model-b ({b}) · 24 cells"
    assert any(line.startswith("finding: ") and line.endswith(" (unsealed comparison)") for line in lines)
    assert not any("seal root" in line for line in lines)
    assert lines[-2:] == ["ledger: not entered (an unsealed comparison enters the ledger only with --ledger)",
                          f"wrote table.csv, verdict.json → {tmp_path / 'cmp'}"]


def test_a_result_needs_the_exact_sign_flip_over_samples_too(tmp_path: Path) -> None:
    """Seven samples up by 1 and one down by 1: the paired t says p 0.02, the exact sign-flip 18/256 = 0.070.
    A comparison has no run term to calibrate its t with, so it asks both (A/A within α, docs/compare.md)."""
    a = _lm(tmp_path / "a" / "samples_t_2026.jsonl", [0.0] * 7 + [1.0])
    b = _lm(tmp_path / "b" / "samples_t_2026.jsonl", [1.0] * 7 + [0.0])
    d = lm_column(b, "acc") - lm_column(a, "acc")
    assert stats.ttest_1samp(d, 0.0).pvalue < 0.05
    result = bc("compare", str(a), str(b), "--win", "acc rises", "--out", str(tmp_path / "cmp"), "--gate")
    assert result.exit_code == 4, (result.stdout, result.stderr)
    assert "sign-flip p = 0.0703: the sign-flip p 0.070 is above α" in result.stdout
    assert result.stdout.splitlines()[-1] == "gate: inconclusive → exit 4 (only a win passes) (unsealed comparison)"


def test_one_sample_has_an_interval_within_the_metrics_range_said_alike_on_every_line(tmp_path: Path) -> None:
    """One sample pair measures no spread, so its interval is everything the gap can be: [−1, 1] for a 0–1
    metric, as two samples' wide interval is cut to. It read [−∞, ∞] in the clause's line and [n/a, n/a] in the
    headline (hostile audit 13b): an interval beyond the metric's range is never right."""
    a = _lm(tmp_path / "a" / "samples_t_2026.jsonl", [0.0])
    b = _lm(tmp_path / "b" / "samples_t_2026.jsonl", [1.0])
    result = bc("compare", str(a), str(b), "--win", "acc rises", "--out", str(tmp_path / "cmp"))
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "∞" not in result.stdout and "n/a, n/a" not in result.stdout
    assert "(+1.000, 95 % CI [−1.000, 1.000])" in result.stdout
    assert "gap +1.000, 95% CI [−1.000, 1.000], p = 1.0000" in result.stdout
    assert "the 90% CI of the acc gap [−1.000, 1.000] is not inside ±0.05" in result.stdout
    v = json.loads((tmp_path / "cmp" / "verdict.json").read_text(encoding="utf-8"))
    m = v["metrics"]["acc"]
    assert m["ci"] == [-1.0, 1.0] and (m["lower_one_sided"], m["upper_one_sided"]) == (-1.0, 1.0)
    assert v["comparisons"][0]["equivalence"]["ci"] == [-1.0, 1.0]
    # cut at ±1 on the values alone (no declared range): said, as another tool's count may stay within [0, 1]
    assert ("acc's interval reaches ±1, where it is cut taking acc for a score in [0, 1] (every value of both logs "
            "is); if it can be larger, declare its range: --range 'acc LOWEST HIGHEST'.") in v["notes"]
    declared = bc("compare", str(a), str(b), "--win", "acc rises", "--range", "acc 0 3", "--out", str(tmp_path / "c2"))
    assert declared.exit_code == 0, (declared.stdout, declared.stderr)
    w = json.loads((tmp_path / "c2" / "verdict.json").read_text(encoding="utf-8"))
    assert w["metrics"]["acc"]["ci"] == [-3.0, 3.0] and not any("reaches ±1" in n for n in w["notes"])


def test_a_guard_or_equivalence_margin_no_gap_can_reach_is_refused_where_the_range_is_known(tmp_path: Path) -> None:
    """A card refuses a guard that can never be broken (its margin at least the widest gap its metric can show)
    and an equivalence margin no effect can leave; a comparison took both, of any metric. Where the range is known
    (declared, or a score in [0, 1] in both logs, whose intervals are cut at ±1) it refuses them in one line; a
    count without a declared range has no bound to hold a margin to."""
    a, b = _lm(tmp_path / "a.jsonl", [0.0, 1.0] * 10), _lm(tmp_path / "b.jsonl", [1.0] * 20)
    with pytest.raises(CompareError) as err:
        compare(a, b, RuleOptions(clauses=("acc rises", "acc not_rises 1.5")), out=tmp_path / "c1")
    assert str(err.value) == ("win clause 2, acc does not rise (margin 1.5): a gap of acc (a score in [0, 1] in both "
                              "logs) is never beyond ±1, so a guard at margin 1.5 can never be broken; use a margin "
                              "below 1, or declare its range: --range 'acc LOWEST HIGHEST'")
    with pytest.raises(CompareError) as err:
        compare(a, b, RuleOptions(clauses=("acc rises",), equivalence_margin=1.0), out=tmp_path / "c2")
    assert str(err.value) == ("equivalence margin 1: a gap of acc (a score in [0, 1] in both logs) is never beyond "
                              "±1, so no effect could be shown to be none; use a margin below 1")
    ratings = _lm(tmp_path / "r.jsonl", [float(i % 11) for i in range(20)])
    with pytest.raises(CompareError) as err:
        compare(ratings, b, RuleOptions(clauses=("acc rises", "acc not_rises 10"), ranges=("acc 0 10",)),
                out=tmp_path / "c3")
    assert str(err.value) == ("win clause 2, acc does not rise (margin 10): a gap of acc (its declared range [0, 10]) "
                              "is never beyond ±10, so a guard at margin 10 can never be broken; use a margin below 10")
    kept = compare(ratings, b, RuleOptions(clauses=("acc rises", "acc not_rises 2"), ranges=("acc 0 10",)),
                   out=tmp_path / "c4")
    assert kept.file.metrics  # a margin inside the declared range is taken
    uncounted = compare(ratings, b, RuleOptions(clauses=("acc rises", "acc not_rises 50")), out=tmp_path / "c5")
    assert any("acc has values beyond [0, 1] and no declared range" in note for note in uncounted.file.notes)


def test_a_0_to_10_rating_with_a_sample_cut_off_is_not_bounded_as_a_score_in_0_1() -> None:
    """inspect_ai ratings of 0–10, one baseline sample halted by a limit: its worst case for the claim was the
    baseline at 1, the highest a score in [0, 1] takes, so the "worst case" gaps (+1.750 to +1.812) lay above the
    observed +1.467 and the rise was a win. With no range declared, neither end of the rating is known: the claim
    cannot be shown, said in one line; with `--range 'rating 0 10'` the cut-off sample is bounded at 10."""
    import math

    import numpy as np

    from benchcard.card.reader import read_win_rule
    from benchcard.compare import rule_on
    from benchcard.compare._logs import Sample, Samples
    from benchcard.records.verdictfile import VerdictHead

    rng = np.random.default_rng(1)
    ids = [f"s{i}" for i in range(16)]
    base = {s: float(rng.integers(3, 8)) for s in ids}
    rise = {s: float(rng.integers(1, 3)) for s in ids}
    a = {(s, 1): Sample("ok", {"rating": base[s]}) for s in ids} | {("s0", 1): Sample("truncated", {})}
    b = {(s, 1): Sample("ok", {"rating": base[s] + rise[s]}) for s in ids}
    first, second = (Samples(path=Path(name), tool="inspect_ai", model="m", task="t", samples=samples,
                             metrics=("rating",)) for name, samples in (("a.eval", a), ("b.eval", b)))
    win = read_win_rule({"all": [{"metric": "rating", "test": "rises"}], "equivalence_margin": 0.05,
                         "allow_failed": 1}, {}, "rule", {"rating"}, {s: None for s in ids})
    head = VerdictHead(run="r", card="compare", version=None, kind="compare", rig="a vs b", seal_root=None,
                       evidence="r")
    _, open_ = rule_on(first, second, win, ("A", "B"), head, 1, 200, Path("out"))
    gap = sum(rise[s] for s in ids[1:]) / 15
    assert open_.metrics["rating"].gap == pytest.approx(gap)
    assert open_.finding == "inconclusive" and open_.metrics["rating"].bounded_gaps == [-math.inf, math.inf]
    assert ("1 cell was cut off and rating has no known range (values beyond [0, 1], none declared): the rise cannot "
            "be shown; its 1 truncated cell(s) allow gaps from −∞ to +∞.") in open_.clauses[0].why
    _, declared = rule_on(first, second, win, ("A", "B"), head, 1, 200, Path("out"), spans={"rating": (0.0, 10.0)})
    bounded = declared.metrics["rating"].bounded_gaps
    assert declared.finding == "win" and isinstance(bounded, list)
    low, high = bounded
    assert low == pytest.approx((15 * gap - (10 - base["s0"] - rise["s0"])) / 16)
    assert low is not None and high is not None and low < gap < high
