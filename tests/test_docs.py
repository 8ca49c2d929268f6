"""The docs a new user starts from: docs/cards.md's minimal cards run as they are, and nothing points outside
the repository."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from benchcard.cli import cli
from benchcard.testing.fakeserver import FakeServer

from .helpers_project import REPO
from .helpers_run import write_config

CARDS_DOC = REPO / "docs" / "cards.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def from_the_doc(root: Path) -> list[str]:
    """Write every card the doc shows (a yaml block opening `# cards/<file>`) and run its file-making shell
    blocks (opening `# fixtures and keys of`) in `root`, exactly as a user pasting them would."""
    root.mkdir(parents=True, exist_ok=True)
    cards = []
    for lang, text in BLOCK.findall(CARDS_DOC.read_text(encoding="utf-8")):
        first = text.splitlines()[0]
        if lang == "yaml" and first.startswith("# cards/"):
            path = root / first[2:].strip()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            cards.append(path.stem)
        elif lang == "sh" and first.startswith("# fixtures and keys of"):
            subprocess.run(["bash", "-euc", text], cwd=root, check=True, timeout=30)
    return cards


def bc(root: Path, *args: str) -> Result:
    result = CliRunner().invoke(cli, ["-C", str(root), *args])
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result


def test_the_minimal_cards_check_seal_run_and_give_a_verdict(tmp_path: Path, server: FakeServer, key: str) -> None:
    root = tmp_path / "proj"
    assert from_the_doc(root) == ["hello-probe", "hello-ab", "hello-data"]
    assert sorted(p.name for p in (root / "keys" / "hello-ab").iterdir()) == [f"r{i}.json" for i in range(1, 5)]
    write_config(root, server.base_url)  # the fake server stands in for the local model: runs marked scratch
    server.configure({"default_reply": "positive"})
    assert "3 card(s) ok, 0 failed" in bc(root, "check").output

    # the loop before sealing: a scratch run of the unsealed card, and its verdict, outside the ledger
    ran = bc(root, "run", "hello-ab", "--scratch", "--provider", "fake", "--json")
    [s] = json.loads(ran.stdout)["runs"]
    assert s["finished"] and s["cells"] == 16 and s["rig"].endswith(" · scratch")
    assert "scratch: a trial verdict, not entered in the ledger" in bc(root, "verdict", s["run"]).output
    assert not (root / "keys" / "hello-ab" / "v1.seal.json").exists()

    for card in ("hello-probe", "hello-ab", "hello-data"):
        bc(root, "seal", card)
        [s] = json.loads(bc(root, "run", card, "--provider", "fake", "--json").stdout)["runs"]
        assert s["finished"]
        bc(root, "verdict", s["run"])
    for card in ("hello-ab", "hello-data"):  # fixtures and keys from files, then from one data file
        scores = [(s["fixture"], s["score"]) for s in map(json.loads, next(
            (root / "results" / card / "v1").glob("*/scores.jsonl")).read_text().splitlines())]
        # "positive" is right for r1 and r3 only: keys are read per fixture
        assert sorted(set(scores)) == [("r1", 1.0), ("r2", 0.0), ("r3", 1.0), ("r4", 0.0)]


def test_the_docs_need_nothing_outside_the_repository() -> None:
    for path in (REPO / "README.md", CARDS_DOC):
        assert "../shared" not in path.read_text(encoding="utf-8"), path


@pytest.mark.local_model
def test_the_minimal_probe_runs_on_the_embedded_model(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    from_the_doc(root)
    bc(root, "seal", "hello-probe")
    [s] = json.loads(bc(root, "run", "hello-probe", "--json").stdout)["runs"]
    assert s["finished"] and s["rig"] == "SmolLM2-135M-Instruct · local"
    assert "ledger: seq 1" in bc(root, "verdict", s["run"]).output
