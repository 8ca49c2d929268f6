"""The test modules' rewritten asserts made once for all pytest-xdist workers, before they start.

Every worker collects the whole suite, and pytest rewrites the asserts of each test module it imports: about 8 of a
worker's 11 CPU-s of collection. With PYTHONDONTWRITEBYTECODE set (as on the CI machine) it keeps none of it, so
4 workers did it 4 times in every run; the controller writes pytest's own cached file of each module once (about
4 CPU-s), which every worker then reads (docs/performance.md, "The test suite on 2 cores")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


def rewrite_ahead(config: pytest.Config) -> int:
    """Write pytest's rewritten-assert file of each test module and conftest.py the workers will import, where
    pytest itself reads it (`__pycache__` beside the module, or under PYTHONPYCACHEPREFIX); a file already up to
    date is left alone. Returns how many were written. Only a speed-up: on a pytest whose private helpers differ,
    or a folder that cannot be written, it writes nothing and each worker rewrites as before."""
    try:
        from _pytest.assertion import rewrite
        state = config.stash[rewrite.assertstate_key]
    except (ImportError, AttributeError, KeyError):
        return 0
    written = 0
    for module in _modules(config):
        pyc = rewrite.get_cache_dir(module) / (module.name[:-3] + rewrite.PYC_TAIL)
        try:
            if rewrite._read_pyc(module, pyc) is not None or not rewrite.try_makedirs(pyc.parent):
                continue
            stamp, code = rewrite._rewrite_test(module, config)
        except (OSError, SyntaxError, ValueError):  # the worker's import says what is wrong, as it would have
            continue
        written += bool(rewrite._write_pyc(state, code, stamp, pyc))
    return written


def _modules(config: pytest.Config) -> Iterator[Path]:
    """The files pytest rewrites among those the run collects: test_*.py under each folder named (or the file
    named) and every conftest.py from the root down to them."""
    root = config.rootpath
    seen: set[Path] = set()
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        found = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        chain = [parent / "conftest.py" for parent in path.parents if parent.is_relative_to(root)]
        for module in [*chain, *found]:
            if module not in seen and module.is_file() and (module.name == "conftest.py" or _is_test(module)):
                seen.add(module)
                yield module


def _is_test(path: Path) -> bool:
    return path.name.startswith("test_") and path.suffix == ".py"
