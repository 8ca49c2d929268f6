"""`benchcard init [DIR]`: a new project whose first card `check` accepts and a scratch run on the embedded model
runs as it is.

The project holds one minimal A/B card, its three fixtures and their answer keys in one JSONL data file
(`card/_dataset.py`), a `benchcard.yaml` that declares nothing yet, and a `.gitignore` for what never belongs in
the record. A folder that holds anything is refused: init writes only into an empty or new folder, and never
over a file.
"""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO

from benchcard._util.safewrite import write_new
from benchcard._util.text import shell_path
from benchcard.errors import ProjectError
from benchcard.project import Project, enclosing_project

CARD_ID = "first-ab"

CARD = """\
# A minimal A/B card (the format: docs/cards.md in the benchcard repository).
id: first-ab
version: 1
kind: ab
title: Does an "Answer:" cue make the model give the right label?
question: Does ending the prompt with "Answer:" make the model answer with the right word?
variable: The text "Answer:" after the review.
rig: {provider: local, model: SmolLM2-135M-Instruct}   # the embedded model: no key, nothing downloaded
params: {max_tokens: 48, temperature: 0.7}   # room for a short sentence: a reply cut off is never scored
prompt:
  user: |-
    Is this review positive or negative? Answer with one word.

    Review: {{fixture}}{{variant}}
variants: {plain: "", cue: "\\nAnswer:"}
baseline: plain
# One row per fixture: its id, its input and its answer key (label). Three to start with; a win needs six or more.
fixtures: fixtures/first-ab.jsonl
repetitions: 3
scoring: {method: exact, expected_from_key: label, case_sensitive: false}
win:
  all:
    - {metric: score, test: rises}
  equivalence_margin: 0.1
examples:
  - {label: Correct, fixture: r1, output: positive, expect: pass}
  - {label: Rejected — a sentence, fixture: r1, output: The review is positive., expect: fail}
history:
  - {version: 1, note: First version.}
"""

FIXTURES = """\
{"id": "r1", "input": "I loved every minute of it.", "label": "positive"}
{"id": "r2", "input": "A waste of an evening.", "label": "negative"}
{"id": "r3", "input": "The best meal I have had this year.", "label": "positive"}
"""

CONFIG = """\
# benchcard.yaml: providers and prices beyond the built-in ones (openai, openrouter, anthropic, local).
# Keys are read from environment variables only, never from this file. For example:
#   providers:
#     my-vllm: {type: openai, base_url: "http://10.0.0.5:8000/v1", api_key_env: VLLM_KEY}
#   prices:   # USD per million tokens, used when a provider reports no cost; named by the model id as sent:
#     gpt-5-mini: {input: 0.25, output: 2, batch_discount: 0.5}   # --provider openai (--batch: half price)
#     openai/gpt-5-mini: {input: 0.25, output: 2}                 # the same model through openrouter
providers: {}
"""

GITIGNORE = """\
# What never belongs in the project's record. (Each scratch run's folder under results/ holds its own
# .gitignore: trials stay out of git, real runs and the ledger go in.)
# API keys: benchcard reads them from the environment; keep a .env of your own out of git.
.env
# Pages built by `benchcard site` (rebuilt from results/ at any time).
site/
# Locks and half-written files of a command in progress.
*.lock
*.tmp
.*.tmp
__pycache__/
"""

GITATTRIBUTES = """\
# benchcard seals fixtures and keys byte for byte, and the ledger anchors each run's files by their digests: git
# must never change a file's line endings (core.autocrlf, the default of Git for Windows, checks text out with
# CRLF, and every sealed file would then read as changed after sealing).
* -text
"""

FILES: tuple[tuple[str, str, str], ...] = (
    (f"cards/{CARD_ID}.yaml", CARD, "the card: prompt, two variants, scorer and win rule"),
    (f"fixtures/{CARD_ID}.jsonl", FIXTURES, "three fixtures, each with its answer key"),
    ("benchcard.yaml", CONFIG, "providers and prices (the embedded model needs none)"),
    (".gitignore", GITIGNORE, ".env (API keys) and built pages stay out of git (scratch runs ignore themselves)"),
    (".gitattributes", GITATTRIBUTES, "git keeps every file's bytes (no CRLF on Windows): seals hold in any clone"),
)


@dataclass(frozen=True)
class Started:
    """What `init` made: the folder, each file with what it is for, and the commands to type next."""

    root: Path
    files: tuple[tuple[str, str], ...]
    commands: tuple[str, ...]
    notes: tuple[str, ...] = ()  # made with --nested inside another project: says so

    def lines(self) -> list[str]:
        """What `init` prints: what it made, then the commands to type next, each on a line of its own."""
        width = max(len(name) for name, _ in self.files)
        return [f"created a benchcard project in {self.root}:",
                *(f"  {name:<{width}}  {what}" for name, what in self.files), *self.notes,
                "next (the embedded model: no key, nothing downloaded):", *(f"  {c}" for c in self.commands)]


def init_project(folder: Path, shown: str, nested: bool = False) -> Started:
    """Create a project in `folder` (made if missing); a folder holding anything, or a file, is refused, and so is
    a folder among another project's own records (its results/, cards/, fixtures/ or keys/). A folder elsewhere
    inside another project is refused unless `nested` (`--nested`): the new project would keep a ledger of its
    own beside that one's, and commands run in it would use it, which a user rarely means."""
    enclosing = Project.find(folder.resolve().parent)
    if enclosing.cards_dir.is_dir():
        enclosing.refuse_protected(folder, shown, folder=True)
    outer = enclosing_project(folder)
    if outer is not None and not nested:
        raise ProjectError(f"{shown}: inside the benchcard project in {outer}; a project here would keep its own "
                           "cards and ledger beside that one's, and commands run in it would use this one. Add "
                           f"the card to that project (its cards/), or pass --nested to make a separate project "
                           "here anyway")
    if folder.exists() or folder.is_symlink():
        if not folder.is_dir():
            raise ProjectError(f"{shown}: exists and is not a folder; name a new or empty folder")
        with os.scandir(folder) as entries:
            holds = any(True for _ in entries)
        if holds and ((folder / "cards").is_dir() or (folder / "benchcard.yaml").is_file()):
            raise ProjectError(f"{shown}: already a benchcard project; work in it (cd {shell_path(shown)}, or "
                               f"benchcard -C {shell_path(shown)} …), or name a new folder")
        if holds:
            raise ProjectError(f"{shown}: the folder is not empty; benchcard init writes only into an empty or "
                               "new folder (it never writes over a file)")
    made = [p for p in (folder, *folder.parents) if not os.path.lexists(p)]  # deepest first
    written: list[Path] = []
    try:
        _make(folder, shown)
        for name, text, _ in FILES:
            write_new(folder / name, partial(_write, text), force=False, shown=f"{shown}/{name}", error=ProjectError)
            written.append(folder / name)
    except BaseException:
        _unmake(folder, written, made)
        raise
    here = folder.resolve() == Path.cwd().resolve()
    commands = (*(() if here else (f"cd {shell_path(shown)}",)), "benchcard check",
                f"benchcard run {CARD_ID} --scratch --provider local", f"benchcard verdict {CARD_ID}")
    inside = () if outer is None else (f"note: inside the benchcard project in {outer}; this one keeps its own "
                                       "cards, results and ledger, and commands run in it use it",)
    return Started(folder, tuple((name, what) for name, _, what in FILES), commands, inside)


def _make(folder: Path, shown: str) -> None:
    """`folder` made with any folders missing above it; a folder above that may not be written is named (the
    line named the folder it tried to make, as if that one were at fault)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if not (isinstance(exc, PermissionError) or exc.errno == errno.EROFS) or exc.filename is None:
            raise
        below = len(folder.parts) - len(Path(exc.filename).parts)  # how far below the one refused `folder` is
        parent = str(Path(shown).parents[below]) if below < len(Path(shown).parents) else str(folder.parents[below])
        where = "the current folder" if parent == "." else f"the folder {parent}"
        raise ProjectError(f"{shown}: {where} is not writable ({exc.strerror}), so nothing was made; give a folder "
                           "you may write in") from None


def _unmake(folder: Path, written: list[Path], made: list[Path]) -> None:
    """What an init that failed part-way (a full disk) wrote, removed, so that `benchcard init` again is taken
    instead of refused as a folder that is not empty: the files it wrote, then the folders it made, if empty."""
    for path in written:
        with contextlib.suppress(OSError):
            path.unlink()
    for sub in sorted({(folder / name).parent for name, _, _ in FILES} - {folder}, key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            sub.rmdir()  # a folder holding anything (a file that appeared meanwhile) is never removed
    for path in made:
        with contextlib.suppress(OSError):
            path.rmdir()


def _write(text: str, fh: IO[str]) -> None:
    fh.write(text)
