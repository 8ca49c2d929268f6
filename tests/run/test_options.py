"""The options of `benchcard run`: a value no run could start with is one line before anything is planned."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Sequence
from pathlib import Path

import pytest

from benchcard.errors import RunError
from benchcard.project import MAX_CONCURRENCY
from benchcard.run.options import RunFields, RunOptions

from ..helpers_cli import exit_and_streams
from ..helpers_project import make_ab_project


def test_a_concurrency_too_large_to_start_is_one_line(tmp_path: Path) -> None:
    """`--concurrency 1000000000` once started a billion workers before the first call."""
    project = make_ab_project(tmp_path / "proj")
    code, out, err = exit_and_streams(project, "run", "tiny-ab", "--concurrency", "1000000000")
    assert code == 1 and err == ("error: --concurrency 1,000,000,000: expected 1 to 1,024 calls in flight (each "
                                 "holds a socket; no provider's rate limit lets more through)\n"), (out, err)


def test_every_concurrency_up_to_the_limit_is_taken() -> None:
    assert RunOptions(concurrency=MAX_CONCURRENCY).concurrency == MAX_CONCURRENCY
    with pytest.raises(RunError, match="--concurrency 0: expected 1 to 1,024"):
        RunOptions(concurrency=0)


def test_the_keywords_of_run_card_are_the_fields_of_run_options_with_their_types() -> None:
    """`RunFields` (what `benchcard.run_card` takes as keywords) names every field of `RunOptions` with its type, so a
    field added to one and not the other fails here; `models` takes any sequence (run_card makes it a tuple)."""
    fields = typing.get_type_hints(RunFields)
    options = typing.get_type_hints(RunOptions)
    assert list(fields) == [f.name for f in dataclasses.fields(RunOptions)]
    assert {**fields, "models": options["models"]} == options and fields["models"] == Sequence[str]
    assert RunFields.__required_keys__ == frozenset()


@pytest.mark.parametrize("field", ["provider", "base_url", "resume"])
def test_an_empty_provider_endpoint_or_run_from_python_is_refused_not_the_cards_own(tmp_path: Path,
                                                                                    field: str) -> None:
    """`run_card(card, base_url=os.environ.get("URL", ""))` ran the card's own rig, as `--base-url ""` did."""
    from benchcard.api import run_card

    said = f"{field}='': empty (a variable set but empty?); give a value, or None for the card's own"
    with pytest.raises(RunError) as info:
        dataclasses.replace(RunOptions(), **{field: ""})  # type: ignore[arg-type]
    assert str(info.value) == said
    project = make_ab_project(tmp_path / "proj")
    with pytest.raises(RunError, match=r"^base_url='': empty"):
        run_card("tiny-ab", project, base_url="")
    assert not (project / "results").exists()


def test_an_empty_model_name_from_python_is_refused_as_the_command_line_refuses_it() -> None:
    """`run_card(card, models=[os.environ.get("MODEL", "")])` asked the endpoint for a model named '' (a run of
    failed cells, or whatever the gateway's default is, recorded as the rig), where `--model ""` is refused."""
    with pytest.raises(RunError) as info:
        RunOptions(models=("gpt-4o", ""))
    assert str(info.value) == "models[1]='': empty (a variable set but empty?); give a model's name"
