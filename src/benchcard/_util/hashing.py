"""Canonical JSON and digests: every hash in benchcard is sha256 over the same byte form."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from benchcard.errors import NotCanonicalError

_CHUNK = 1 << 20


def canonical_json(obj: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8: the one byte form that two machines agree on.

    NaN and infinities are refused, not written as the non-JSON `NaN`/`Infinity` that another reader would
    reject or read differently: a digest must stand for data anyone can parse back.
    """
    try:
        text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:
        raise NotCanonicalError((_where_not_finite(obj, "$") or "$")[1:].removeprefix(".")) from None
    return text.encode("utf-8")


def _where_not_finite(obj: Any, path: str) -> str | None:
    """The JSON path of the first NaN or infinity in `obj` (only walked when dumping has failed)."""
    if isinstance(obj, float):
        return None if math.isfinite(obj) else path
    if isinstance(obj, dict):
        for key in sorted(obj, key=str):
            found = _where_not_finite(obj[key], f"{path}.{key}")
            if found:
                return found
    elif isinstance(obj, list | tuple):
        for i, value in enumerate(obj):
            found = _where_not_finite(value, f"{path}[{i}]")
            if found:
                return found
    return None


def digest(obj: Any) -> str:
    """`sha256:<hex>` of raw bytes, or of an object's canonical JSON."""
    data = obj if isinstance(obj, bytes) else canonical_json(obj)
    return "sha256:" + hashlib.sha256(data).hexdigest()


def file_digest(path: Any) -> str:
    """Digest of a file's exact bytes, read in chunks so large outputs cost no memory.

    Plain `os.read` on a file descriptor, with no file object around it: a seal hashes fixture files by the
    thousand, and a file object's set-up costs more than the hashing (figures in docs/verdict.md, "Speed").
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        h = hashlib.sha256()
        while chunk := os.read(fd, _CHUNK):
            h.update(chunk)
    finally:
        os.close(fd)
    return "sha256:" + h.hexdigest()


_ROOT = re.compile(r"sha256:([0-9a-f]{64})")


def seed_from(root: str) -> int:
    """A numpy seed (the first 64 bits) from a seal root `sha256:<hex>`.

    Seeding resampling from the seal makes it reproducible by anyone holding the sealed card, and fixed
    before the data exist, so the seed cannot be shopped for.
    """
    match = _ROOT.fullmatch(root.strip().lower())
    if match is None:
        raise ValueError(f"not a seal root of the form sha256:<64 hex digits>: {root!r}")
    return int(match.group(1)[:16], 16)


def strict(obj: Any) -> Any:
    """The same data as strict JSON: NaN and ±inf become null, tuples lists, numpy scalars plain numbers."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, str | int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {str(k): strict(v) for k, v in obj.items()}
    if isinstance(obj, msgspec.Struct):
        return {k: strict(v) for k, v in msgspec.structs.asdict(obj).items() if v is not msgspec.UNSET}
    if isinstance(obj, list | tuple):
        return [strict(v) for v in obj]
    item = getattr(obj, "item", None)  # numpy scalar
    if callable(item):
        return strict(item())
    raise TypeError(f"not JSON data: {type(obj).__name__}")
