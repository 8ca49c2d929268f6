"""`compare`'s tests share real inspect_ai logs, made once per pytest run against the fake server (pytest-xdist's
workers share them: tests/helpers_once.py) and only read."""

from __future__ import annotations

import gc
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from benchcard.testing.fakeserver import FakeServer

from ..helpers_once import made_once, shared_folder


@contextmanager
def _inspect_clients_collected() -> Iterator[None]:
    """inspect_ai leaves its model clients' sockets (and earlier evals' ones) to the garbage collector: while it
    runs here, and once at the end, their ResourceWarning is expected, not raised in whichever test happens to
    run the collector next."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            yield
        finally:
            gc.collect()


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real inspect_ai logs: the same 8-sample task, 3 epochs, run by inspect_ai against the fake server, as
    model-a (answers blue except on q6 and q7) and model-b (red everywhere), model-c on 7 of the samples, and
    model-d (each sample's calls cycle red, blue, blue: right in one epoch of three)."""
    made = made_once(shared_folder(tmp_path_factory, "inspect"), _inspect_logs)
    return {name: Path(path) for name, path in made.items()}


def _inspect_logs(folder: Path) -> dict[str, str]:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    saved = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = "not-a-key"
    out: dict[str, str] = {}
    try:
        with _inspect_clients_collected(), FakeServer() as server:
            for name, config, n in (
                ("a", {"default_reply": "blue", "replies": [{"match": "q6", "reply": "red"},
                                                             {"match": "q7", "reply": "red"}]}, 8),
                ("b", {"default_reply": "red"}, 8),
                ("c", {"default_reply": "red"}, 7),
                ("d", {"replies": [{"match": "", "replies_cycle": ["red", "blue", "blue"]}]}, 8),
            ):
                server.configure(config)
                task = Task(dataset=[Sample(input=f"q{i}: what colour is a ripe tomato?", target="red", id=f"q{i}")
                                     for i in range(n)], solver=generate(), scorer=match(), epochs=3, name="colour")
                [log] = inspect_eval(task, model=f"openai/model-{name}", model_base_url=server.base_url,
                                     log_dir=str(folder / name),
                                     display="none", log_format="eval" if name != "c" else "json")
                assert log.status == "success", log.error
                out[name] = log.location
            # inspect_ai's openai/ provider speaks the Responses API, as a user runs it (no chat-only flag)
            assert set(server.stats()["by_endpoint"]) == {"/v1/responses"}
    finally:
        if saved is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = saved
    return out


@pytest.fixture(scope="session")
def inspect_variants(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three real inspect_ai logs of one model and one task that differ only in how they were made: a task
    argument (`hint=none`, `hint=red`: model-x answers red when the prompt hints so) and a generation setting
    (`temperature=0.5`); 8 samples, 2 epochs each."""
    made = made_once(shared_folder(tmp_path_factory, "inspect-variants"), _inspect_variants)
    return {name: Path(path) for name, path in made.items()}


def _inspect_variants(folder: Path) -> dict[str, str]:
    from inspect_ai import Task, task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    @task
    def colour(hint: str = "none") -> Task:
        return Task(dataset=[Sample(input=f"q{i}: what colour is a ripe tomato? hint {hint}", target="red",
                                    id=f"q{i}") for i in range(8)], solver=generate(), scorer=match(), epochs=2)

    saved = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = "not-a-key"
    out: dict[str, str] = {}
    try:
        with _inspect_clients_collected(), FakeServer() as server:
            server.configure({"default_reply": "blue", "replies": [{"match": "hint red", "reply": "red"}]})
            runs: tuple[tuple[str, str, float | None], ...] = (("plain", "none", None), ("hinted", "red", None),
                                                               ("warm", "none", 0.5))
            for name, hint, temperature in runs:
                [log] = inspect_eval(colour(hint=hint), model="openai/model-x", model_base_url=server.base_url,
                                     log_dir=str(folder / name),
                                     display="none", temperature=temperature)
                assert log.status == "success", log.error
                out[name] = log.location
    finally:
        if saved is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = saved
    return out
