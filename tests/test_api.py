"""The public Python API (`benchcard/__init__.py`, docs/api.md): complete, cheap to import, and the whole path of
a run — load, plan, run, verdict, read — through it, against the fake server."""

from __future__ import annotations

import inspect
import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import benchcard
from benchcard.testing.fakeserver import FakeServer

from .helpers_run import ab_project, runs_of


def test_every_exported_name_resolves_and_nothing_is_exported_twice() -> None:
    assert benchcard.__all__ == sorted(benchcard.__all__) and len(set(benchcard.__all__)) == len(benchcard.__all__)
    for name in benchcard.__all__:
        assert getattr(benchcard, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = benchcard.nope  # type: ignore[attr-defined]


def test_run_card_takes_the_fields_of_run_options_as_keywords_with_their_defaults(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Typed for a type checker (`RunFields`: tests/run/test_options.py); the defaults are RunOptions' own but for
    one, no progress bar; a name that is no field is Python's TypeError, before anything runs."""
    from benchcard import api

    given: list[benchcard.RunOptions] = []

    def run(project: benchcard.Project, card: str, options: benchcard.RunOptions, **_: object) -> list[object]:
        given.append(options)
        return []

    monkeypatch.setattr(api, "_run", run)
    benchcard.run_card("any", ".")
    benchcard.run_card("any", ".", provider="local", models=["a", "b"], seed=3, progress=True)
    assert given == [benchcard.RunOptions(progress=False),
                     benchcard.RunOptions(provider="local", models=("a", "b"), seed=3, progress=True)]
    with pytest.raises(TypeError, match=r"^run_card\(\) got an unexpected keyword argument 'provder'$"):
        benchcard.run_card("any", ".", provder="local")  # type: ignore[call-arg]
    # a str is a Sequence[str] to a type checker: one model given as "gpt-4o" was six runs, of "g", "p", "t", …
    for call in (lambda: benchcard.run_card("any", ".", models="gpt-4o"),
                 lambda: benchcard.run_card("any", ".", benchcard.RunOptions(models="gpt-4o"))):  # type: ignore[arg-type]
        with pytest.raises(benchcard.BenchcardError) as refused:
            call()
        assert str(refused.value) == "models 'gpt-4o': expected a list of model names, one run each (models=['gpt-4o'])"
    assert len(given) == 2
    fields = inspect.signature(benchcard.run_card).parameters["fields"]
    assert fields.kind is inspect.Parameter.VAR_KEYWORD and fields.annotation == "Unpack[RunFields]"


def test_run_card_refuses_options_beside_keywords_and_runs_with_either(tmp_path: Path, server: FakeServer,
                                                                        key: str) -> None:
    """Both given, one silently lost: `options` once won over `seed=` and `progress=False` without a word."""
    server.configure({"default_reply": "red", "latency_ms": 1})
    root = tmp_path / "proj"
    ab_project(root, server.base_url, fixtures=2, repetitions=1)
    options = benchcard.RunOptions(provider="fake", progress=False, seed=7)
    for call in (lambda: benchcard.run_card("colour-ab", root, options, seed=8, progress=False),
                 lambda: benchcard.run_card("colour-ab", root, options=options, seed=8, progress=False)):
        with pytest.raises(benchcard.BenchcardError) as raised:
            call()
        assert str(raised.value) == ("run_card() got options and the keywords seed, progress, which are its fields: "
                                     "pass the keywords alone, or options=dataclasses.replace(options, seed=…) alone")
    assert runs_of(benchcard.Project(root), "colour-ab") == []
    [by_options] = benchcard.run_card("colour-ab", root, options=options)
    [by_keywords] = benchcard.run_card("colour-ab", root, None, provider="fake", seed=7)
    assert by_options.finished and by_keywords.finished
    seeds = {benchcard.manifest_of(s.run, root).seed for s in (by_options, by_keywords)}
    assert seeds == {7}


def test_run_card_prints_nothing_its_notes_go_to_tell_or_the_logger(tmp_path: Path, server: FakeServer, key: str,
                                                                    capsys: pytest.CaptureFixture[str],
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """The notes `benchcard run` prints on stderr reach a library's caller as it asks, and never its terminal."""
    server.configure({"default_reply": "red", "latency_ms": 1})
    root = tmp_path / "proj"
    ab_project(root, server.base_url, fixtures=2, repetitions=1)
    (root / ".env").write_text("HF_TOKEN=abc\n", encoding="utf-8")
    note = ".env: ignored HF_TOKEN (only API keys are read from it)"
    said: list[str] = []
    benchcard.run_card("colour-ab", root, provider="fake", tell=said.append)
    assert said == [note]
    with caplog.at_level(logging.INFO, logger="benchcard"):
        benchcard.run_card("colour-ab", root, provider="fake")
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [("benchcard", logging.INFO, note)]
    assert capsys.readouterr() == ("", "")


def test_importing_benchcard_loads_no_numpy_pandas_or_scipy() -> None:
    """Every command line call imports benchcard; the API's heavy modules load only when used."""
    code = ("import sys, benchcard; heavy = [m for m in ('numpy', 'pandas', 'scipy', 'httpx') if m in sys.modules];"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_a_card_is_planned_run_judged_and_read_through_the_api(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "latency_ms": 1})
    root = tmp_path / "proj"
    ab_project(root, server.base_url, fixtures=3, repetitions=2)

    card = benchcard.load_card("colour-ab", root)
    assert card.id == "colour-ab" and card.kind == "ab"
    plan = benchcard.plan("colour-ab", root)
    assert plan.calls == 12 and plan.fixtures == 3

    [summary] = benchcard.run_card("colour-ab", root, provider="fake")
    assert summary.finished and summary.counts == {"ok": 12, "truncated": 0, "failed": 0}
    manifest = benchcard.manifest_of(summary.run, root)
    assert manifest.cells == 12 and manifest.finished_at is not None

    blind = benchcard.read_run(summary.run, benchcard.Project(root))
    assert blind.attrs["blinded"] and "variant" not in blind.columns and len(blind) == 12

    verdict = benchcard.give_verdict(summary.run, root)
    assert verdict.outcome in ("result", "non-result") and verdict.run == summary.run
    assert benchcard.verdict_of(summary.run, root).finding == verdict.finding
    frame = benchcard.read_run(summary.run, benchcard.Project(root))
    assert sorted(set(frame["variant"])) == ["A", "baseline"] and len(frame) == 12

    with pytest.raises(benchcard.BenchcardError, match="already has a verdict"):
        benchcard.give_verdict(summary.run, root)


def test_every_public_function_takes_a_project_as_a_project_a_str_or_a_path(tmp_path: Path, server: FakeServer,
                                                                               key: str) -> None:
    """docs/api.md: `project` is a `benchcard.Project` or a folder; each public function that takes one is called
    with each of the three forms here (a function added later without a line below fails the first assert)."""
    import inspect

    server.configure({"default_reply": "red", "latency_ms": 1})
    root = tmp_path / "proj"
    ab_project(root, server.base_url, fixtures=3, repetitions=1)
    forms: dict[str, benchcard.Project | str | Path] = {"Project": benchcard.Project(root), "str": str(root),
                                                       "Path": root}
    takers = sorted(name for name in benchcard.__all__ if callable(getattr(benchcard, name))
                    and not isinstance(getattr(benchcard, name), type)
                    and "project" in inspect.signature(getattr(benchcard, name)).parameters)
    assert takers == ["give_verdict", "load_card", "manifest_of", "plan", "read_ledger", "read_run", "run_card",
                      "seal_card", "verdict_of"]
    for form, project in forms.items():
        assert benchcard.load_card("colour-ab", project=project).id == "colour-ab", form
        sealed = benchcard.seal_card("colour-ab", project=project)  # sealed by ab_project already: unchanged
        assert not sealed.written and sealed.path == f"keys/colour-ab/v{sealed.version}.seal.json", form
        assert benchcard.plan("colour-ab", project=project).calls == 6, form
        [summary] = benchcard.run_card("colour-ab", project=project, provider="fake")
        assert summary.finished, form
        assert benchcard.manifest_of(summary.run, project=project).cells == 6, form
        assert benchcard.read_run(summary.run, project=project).attrs["blinded"], form
        verdict = benchcard.give_verdict(summary.run, project=project)
        assert benchcard.verdict_of(summary.run, project=project).finding == verdict.finding, form
        assert set(benchcard.read_run(summary.run, project=project)["variant"]) == {"A", "baseline"}, form
    for form, project in forms.items():
        assert len(benchcard.read_ledger(project=project)) == 3, form


def test_a_project_folder_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(benchcard.BenchcardError) as info:
        benchcard.read_run("anything", project=tmp_path / "nowhere")
    assert str(info.value) == f"project={tmp_path / 'nowhere'}: no such folder"
    with pytest.raises(benchcard.BenchcardError) as info:
        benchcard.load_card("anything", project=42)  # type: ignore[arg-type]
    assert str(info.value) == "project=42: expected a Project, a folder (str or Path) or None"


api: Any = benchcard  # called as an untyped caller would, with what the signatures refuse


@pytest.mark.parametrize(("call", "said"), [
    (lambda: api.load_card(123), "card=123: expected an id or a path (str or Path)"),
    (lambda: api.seal_card(None), "card=None: expected an id or a path (str or Path)"),
    (lambda: api.run_card(["colour-ab"]), "card=['colour-ab']: expected an id or a path (str or Path)"),
    (lambda: api.load_card(b"cards/colour-ab.yaml"), "card=b'cards/colour-ab.yaml': expected an id or a "
                                                           "path (str or Path)"),
    (lambda: api.plan("colour-ab", pilot=3), "pilot=3: expected an id or a path (str or Path)"),
    (lambda: api.give_verdict(7), "run=7: expected an id or a path (str or Path)"),
    (lambda: api.verdict_of(7.5), "run=7.5: expected an id or a path (str or Path)"),
    (lambda: api.manifest_of({}), "run={}: expected an id or a path (str or Path)"),
    (lambda: api.read_run(1), "run=1: expected an id or a path (str or Path)"),
])
def test_a_card_or_run_of_the_wrong_type_is_one_line_naming_the_argument(
        call: Callable[[], object], said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit: load_card(123) was Python's TypeError from inside os.fspath, naming no argument, and
    load_card(b"…") one from inside pathlib; each is now the BenchcardError the project argument gives."""
    ab_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(benchcard.BenchcardError) as info:
        call()
    assert str(info.value) == said
