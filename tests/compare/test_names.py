"""The two sides of a comparison named after what the logs say (issue 24.7): the model, then the task arguments,
model arguments and generation settings in which the logs differ; `--name A=… --name B=…` over that; and
`--gate` exiting with the verdict's codes (docs/ci.md). Real inspect_ai logs (tests/compare/conftest.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ..helpers_compare import LM_A, LM_B, bc


def test_same_model_told_apart_by_task_argument_and_generation_setting(inspect_variants: dict[str, Path],
                                                                       tmp_path: Path) -> None:
    plain, hinted, warm = inspect_variants["plain"], inspect_variants["hinted"], inspect_variants["warm"]
    result = bc("compare", str(plain), str(hinted), "--win", "match rises", "--out", str(tmp_path / "args"))
    assert result.exit_code == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("unsealed comparison · inspect_ai · openai/model-x hint=none (baseline, ")
    assert f"vs openai/model-x hint=red ({hinted}) · 32 cells" in first
    assert "openai/model-x hint=red raised match from 0.000 to 1.000" in result.stdout
    v = json.loads((tmp_path / "args" / "verdict.json").read_text(encoding="utf-8"))
    assert (v["baseline"], v["variants"]) == ("openai/model-x hint=none", ["openai/model-x hint=red"])
    assert [s["label"] for s in v["sources"]] == ["openai/model-x hint=none", "openai/model-x hint=red"]
    warmer = bc("compare", str(plain), str(warm), "--win", "match rises", "--out", str(tmp_path / "warm"))
    assert warmer.exit_code == 0, warmer.stderr
    assert "openai/model-x (baseline, " in warmer.stdout and "vs openai/model-x temperature=0.5 (" in warmer.stdout
    again = bc("compare", str(plain), str(plain), "--win", "match rises", "--out", str(tmp_path / "same"))
    assert again.exit_code == 0 and "inspect_ai · A (baseline, " in again.stdout  # one log twice: nothing differs


def test_names_given_on_the_command_line(inspect_variants: dict[str, Path], tmp_path: Path) -> None:
    plain, hinted = inspect_variants["plain"], inspect_variants["hinted"]
    result = bc("compare", str(plain), str(hinted), "--win", "match rises", "--name", "A=no hint",
                "--name", "b=hint", "--out", str(tmp_path / "named"), "--json")
    assert result.exit_code == 0, result.stderr
    v = json.loads(result.stdout)
    assert (v["baseline"], v["variants"]) == ("no hint", ["hint"]) and v["rig"] == "no hint vs hint"
    only_b = bc("compare", str(plain), str(hinted), "--win", "match rises", "--name", "B=hint",
                "--out", str(tmp_path / "only-b"))
    assert "openai/model-x hint=none (baseline, " in only_b.stdout and "hint raised match" in only_b.stdout


@pytest.mark.parametrize(("names", "said"), [
    (["C=x"], "error: --name 'C=x': expected A=NAME or B=NAME (A is the baseline, B the variant)"),
    (["A"], "error: --name 'A': expected A=NAME or B=NAME"),
    (["A=x", "A=y"], "error: --name 'A=y': A is named twice"),
    (["A="], "error: --name 'A=': a name has 1 to 80 characters"),
    (["A=plain", "B=plain\u200b"], "error: --name 'B=plain\\u200b': U+200B is invisible or a control character"),
    (["A=plain", "B=pla\u202ein"], "U+202E is invisible or a control character"),
    # default-ignorable characters outside the format category show nothing either (one definition: _util/names)
    (["A=plain", "B=pl\u034fain"], "U+034F is invisible or a control character"),
    (["A=plain", "B=plain\ufe0f"], "U+FE0F is invisible or a control character"),
    (["A=Plain", "B=plain "], "error: --name: both sides would be called 'Plain'; give each its own"),
    (["A=ｐｌａｉｎ", "B=plain"], "both sides would be called 'ｐｌａｉｎ'"),
    # one look-alike test for names (_util/names.skeleton): a Cyrillic р reads as p, as in a card's names
    (["A=gpt-4o", "B=g\u0440t-4o"], "both sides would be called 'gpt-4o'"),
    (["A=gpt  4o", "B=GPT 4O"], "both sides would be called 'gpt  4o'"),
])
def test_names_a_reader_cannot_tell_apart_are_refused(names: list[str], said: str, tmp_path: Path) -> None:
    args = [part for name in names for part in ("--name", name)]
    result = bc("compare", str(LM_A), str(LM_B), "--win", "acc rises", *args, "--out", str(tmp_path / "x"))
    assert result.exit_code == 1 and said in result.stderr and "\n" not in result.stderr.strip()
    assert not (tmp_path / "x").exists()


def test_lm_eval_sides_named_from_the_results_file_beside_the_samples(tmp_path: Path) -> None:
    """lm-eval writes results_<date>.json beside samples_<task>_<date>.jsonl: its model_name and model_args."""
    logs = []
    for side, revision in (("a", "step1000"), ("b", "step2000")):
        folder = tmp_path / side / "org__pythia"
        folder.mkdir(parents=True)
        samples = folder / LM_A.name
        shutil.copy(LM_A if side == "a" else LM_B, samples)
        date = LM_A.stem.rpartition("_")[2]
        (folder / f"results_{date}.json").write_text(json.dumps({
            "model_name": "org/pythia", "n-shot": {"arc_easy": 0}, "date": 1764496800.0,
            "config": {"model": "hf", "model_args": f"pretrained=org/pythia,revision={revision}"}}),
            encoding="utf-8")
        logs.append(samples)
    result = bc("compare", str(logs[0]), str(logs[1]), "--win", "acc rises", "--out", str(tmp_path / "x"), "--json")
    assert result.exit_code == 0, result.stderr
    v = json.loads(result.stdout)
    assert (v["baseline"], v["variants"]) == ("org/pythia revision=step1000", ["org/pythia revision=step2000"])


def test_gate_exits_with_the_verdicts_codes(inspect_logs: dict[str, Path], tmp_path: Path) -> None:
    a, b, c = inspect_logs["a"], inspect_logs["b"], inspect_logs["c"]
    cases = [((a, b), 0, "gate: win → exit 0 (unsealed comparison)"),
             ((b, a), 2, "gate: loss → exit 2 (only a win passes) (unsealed comparison)"),
             ((LM_A, LM_B), 4, "gate: inconclusive → exit 4 (only a win passes) (unsealed comparison)"),
             ((a, c), 5, "gate: incomplete → exit 5 (only a win passes) (unsealed comparison)")]
    for i, ((first, second), code, line) in enumerate(cases):
        metric = "acc" if first == LM_A else "match"
        result = bc("compare", str(first), str(second), "--win", f"{metric} rises", "--gate",
                    "--out", str(tmp_path / f"g{i}"))
        assert result.exit_code == code, (result.stdout, result.stderr)
        assert result.stdout.splitlines()[-1] == line
    as_json = bc("compare", str(b), str(a), "--win", "match rises", "--gate", "--json", "--out", str(tmp_path / "j"))
    assert as_json.exit_code == 2
    assert json.loads(as_json.stdout)["gate"] == {"run": json.loads(as_json.stdout)["run"], "finding": "loss",
                                                  "code": 2, "passed": False,
                                                  "why": "gate: loss → exit 2 (only a win passes) (unsealed "
                                                         "comparison)"}
    refused = bc("compare", str(a), str(LM_B), "--win", "match rises", "--gate")
    assert refused.exit_code == 1 and "is an inspect_ai log but" in refused.stderr


def test_a_logs_own_name_that_does_not_show_as_written_is_refused_unless_the_side_is_named(tmp_path: Path) -> None:
    """Hostile audit: a log's model name holding a right-to-left override (U+202E) became its side's name, so
    the printed header, verdict and ledger row read in another order (`org/<RLO>ledom-a x1 (baseline, …) vs …`).
    `--name` refused such a name; a log's own is refused the same way, and `--name` for that side is the way out."""
    rows = [json.loads(line) for line in LM_A.read_text(encoding="utf-8").splitlines()]
    odd = tmp_path / "odd" / LM_A.name
    odd.parent.mkdir()
    odd.write_text("".join(json.dumps({**r, "model_name": "org/\u202eledom-a"}) + "\n" for r in rows),
                   encoding="utf-8")
    refused = bc("compare", str(odd), str(LM_B), "--win", "acc rises", "--out", str(tmp_path / "x"))
    assert refused.exit_code == 1 and not (tmp_path / "x").exists()
    assert refused.stderr == (f"error: {odd}: the name it gives its side, 'org/\\u202eledom-a', holds U+202E, an "
                              "invisible, control or direction character (a right-to-left override would make the "
                              "line read otherwise); name the side yourself: --name A=NAME\n")
    named = bc("compare", str(odd), str(LM_B), "--win", "acc rises", "--name", "A=model-a", "--out",
               str(tmp_path / "y"), "--json")
    assert named.exit_code == 0, named.stderr
    assert json.loads(named.stdout)["baseline"] == "model-a"
