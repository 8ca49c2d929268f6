"""Scratch runs: trials, marked as such in the manifest, the rig line and every page, never in the ledger.

A run is scratch when the user says so (`run --scratch`, to iterate on a card before sealing it: such a run may
use a version not sealed yet, and records the root it would be sealed with), and
also when its endpoint is not the card's rig: `--base-url` (or an SDK variable such as `OPENAI_BASE_URL`)
pointing the provider elsewhere, or a provider
declared in `benchcard.yaml` (a fake server, a proxy) standing in for the rig's. Such a run says nothing about
the model the card names, so it must not look like a run of it. Another built-in provider or `--model` is
another rig, recorded as such, and is not scratch.
"""

from __future__ import annotations

from pathlib import Path

from benchcard._util.files import write_atomic
from benchcard.card.model import Card
from benchcard.project import Project
from benchcard.run.options import RunOptions
from benchcard.run.providers import BUILTIN
from benchcard.run.providers.base import ProviderConfig

GITIGNORE = (b"# A scratch run (a trial, never in the ledger): git leaves this folder out. Delete this file to "
             b"commit it.\n*\n")

MARK = "scratch"
"""Appended to a scratch run's rig line: `test/model · fake · scratch`."""


def scratch_reason(project: Project, card: Card, cfg: ProviderConfig, options: RunOptions,
                   endpoint_from: str | None = None) -> str | None:
    """Why a new run is scratch, in a few words; None for a run of a real rig. `endpoint_from` names what pointed
    the provider at another endpoint: `--base-url`, or an SDK variable such as OPENAI_BASE_URL (run/_conventions.py)."""
    if options.scratch:
        sealed = (project.seal_path(card.id, card.version)).is_file()
        return "run with --scratch" + ("" if sealed else f", v{card.version} not sealed yet")
    source = "--base-url" if options.base_url else endpoint_from
    if source:
        return f"{source} {cfg.base_url or ''} instead of the provider's own endpoint"
    if cfg.name != card.rig.provider and cfg.name not in BUILTIN:
        return f"provider '{cfg.name}' (declared in benchcard.yaml) instead of the card's '{card.rig.provider}'"
    return None


def keep_out_of_git(folder: Path) -> None:
    """A `.gitignore` in a new scratch run's folder, holding `*`: `git add .` leaves the trial out (git reads a
    folder's own .gitignore wherever it is), while benchcard and its pages read the run as always."""
    write_atomic(folder / ".gitignore", GITIGNORE, overwrite=False)
