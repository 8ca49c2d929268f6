"""The sealed plan's digests: every file under `sealed/` and the manifest fields that say what the run is.

When the plan is written the manifest records `sealed` (each file under `sealed/` → `sha256:<hex>` of its bytes)
and `plan_digest` (the digest of the fields in `PLAN_FIELDS` — the rig among them — together with `sealed`).
`run --resume`, `verdict` and `ledger --verify` recompute both, so an edited assignment (swapped variant
labels), an edited request body, a file added under `sealed/` or a rig changed in the manifest is named, never
used. Before a verdict these digests sit beside what they protect and catch edits, not a forger who recomputes
them; the verdict copies `plan_digest` into its ledger row, which anchors it (docs/security.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchcard._util.files import is_work_file
from benchcard._util.hashing import digest, file_digest
from benchcard.records.rows import SEALED

#: The manifest fields fixed when the plan is written that say what the run is; `plan_digest` covers them.
PLAN_FIELDS = ("run", "card", "version", "kind", "seal_root", "rig", "scratch", "provider_type", "base_url",
               "endpoints", "batch", "params", "seed", "repetitions", "cells", "started_at")
#: Plan fields added later, covered only when a manifest has them, so that every older run's digest stands:
#: a replication's link to its original and the rule it is judged by (`benchcard replicate`), a sequential
#: card's schedule of looks, the provider's headers of benchcard.yaml the calls sent (names only for secrets).
LATER_PLAN_FIELDS = ("replicates", "replication_rule", "sequential", "headers")


#: Written under `sealed/` after the run by `benchcard blind-sheet` (a sheet's row → cell mapping, hidden from
#: graders); reproducible from outputs.jsonl and the seal, so not part of the plan.
SHEET_MAPPING = re.compile(r"sealed/sheet-[^/]+\.jsonl")


#: Sealed files planned after the run's plan, each with where the manifest records its digest when it is written:
#: a judge card's judging plan (`run/judging.py`, written when every cell has an outcome; a sequential card's,
#: that of the first stretch), and a sequential judge card's plans of later stretches (`judge_stretches`).
LATER = {f"{SEALED}/judge-requests.jsonl": ("judge", "requests_digest")}


def _later_digest(manifest: Mapping[str, Any], name: str) -> str | None:
    if name not in LATER:
        stretches = manifest.get("judge_stretches")
        found = [s.get("requests_digest") for s in stretches if isinstance(s, Mapping) and s.get("file") == name] \
            if isinstance(stretches, list) else []
        return found[0] if found and isinstance(found[0], str) else None
    block, key = LATER[name]
    recorded = manifest.get(block)
    value = recorded.get(key) if isinstance(recorded, Mapping) else None
    return value if isinstance(value, str) else None


def _later_names(manifest: Mapping[str, Any]) -> list[str]:
    """The sealed files planned after the plan that the manifest records a digest of (`LATER`, `judge_stretches`)."""
    stretches = manifest.get("judge_stretches")
    names = [s.get("file") for s in stretches if isinstance(s, Mapping)] if isinstance(stretches, list) else []
    return [n for n in [*LATER, *names] if isinstance(n, str) and _later_digest(manifest, n) is not None]


def _left_beside(folder: Path, name: str) -> bool:
    """A recorded judging plan a kill left beside `sealed/` (`run/judging.py` writes it there, records its digest,
    then moves it in): the resume moves it in, so it is not missing."""
    return (folder / (Path(name).name + ".tmp")).is_file()


def sealed_files(folder: Path) -> dict[str, str]:
    """Every entry under `<run>/sealed/` (but blind sheets' mappings and the work files of writers killed before
    their rename) by its path relative to the run folder, with its digest; an entry that is not a regular file (a
    link, a pipe) is listed as such, so it can never pass for sealed content."""
    found: dict[str, str] = {}
    base = folder / SEALED
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        for name in sorted(filenames) + sorted(d for d in dirnames if os.path.islink(os.path.join(dirpath, d))):
            path = Path(dirpath) / name
            rel = path.relative_to(folder).as_posix()
            if (SHEET_MAPPING.fullmatch(rel) or is_work_file(name)) and not path.is_symlink() and path.is_file():
                continue  # a blind sheet's mapping, or what a writer killed before its rename left
            if path.is_symlink() or not path.is_file():
                found[rel] = "not a regular file"
            else:
                found[rel] = file_digest(path)
    return dict(sorted(found.items()))


def plan_digest(manifest: Mapping[str, Any], sealed: Mapping[str, str]) -> str:
    """The digest of what the run is (`PLAN_FIELDS` as the manifest has them) and of its sealed files."""
    fields = {k: manifest.get(k) for k in PLAN_FIELDS} | {k: manifest[k] for k in LATER_PLAN_FIELDS if k in manifest}
    return digest({"fields": fields, "sealed": dict(sealed)})


def sealed_digests(folder: Path, manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a manifest gets when its plan is written: `sealed` and `plan_digest`."""
    sealed = sealed_files(folder)
    return {"sealed": sealed, "plan_digest": plan_digest(manifest, sealed)}


def sealed_problems(folder: Path, manifest: Mapping[str, Any]) -> list[str]:
    """What no longer matches the plan as it was written, one phrase each (empty when everything does).

    A manifest without the digests is a problem too: a missing digest proves nothing, so it never passes.
    """
    recorded = manifest.get("sealed")
    if not isinstance(recorded, Mapping) or not isinstance(manifest.get("plan_digest"), str):
        return ["manifest.json has no digests of its sealed plan (sealed, plan_digest), so the plan cannot be "
                "shown unchanged"]
    problems: list[str] = []
    actual = sealed_files(folder)
    for name in sorted(set(recorded) | set(actual)):
        if name not in actual:  # a folder made in a file's place is not walked as a file: said as what it is
            problems.append(f"{name} is {'not a regular file' if os.path.lexists(folder / name) else 'missing'}")
        elif name not in recorded and _later_digest(manifest, name) is not None:
            if actual[name] != _later_digest(manifest, name):
                problems.append(f"{name} changed after it was written (sealed {_later_digest(manifest, name)}, "
                                f"now {actual[name]})")
        elif name not in recorded:
            problems.append(f"{name} was added after the plan was written")
        elif actual[name] == "not a regular file":
            problems.append(f"{name} is not a regular file")
        elif actual[name] != recorded[name]:
            problems.append(f"{name} changed after the plan was written (sealed {recorded[name]}, now {actual[name]})")
    problems += [f"{name} is missing (manifest.json records its requests_digest)"
                 for name in _later_names(manifest) if name not in actual and not _left_beside(folder, name)]
    if not problems and plan_digest(manifest, recorded) != manifest["plan_digest"]:
        problems.append("manifest.json: a field of the sealed plan (" + ", ".join(PLAN_FIELDS + LATER_PLAN_FIELDS)
                        + ") or the digests "
                        "of sealed/ changed after the plan was written")
    return problems
