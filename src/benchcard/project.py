"""Where a project's cards, fixtures, keys and results live, and the rule that no path may leave it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from benchcard.errors import CardError, ProjectError, RunError


@dataclass(frozen=True)
class Project:
    """A benchcard project: a folder with cards/, fixtures/, keys/ and results/."""

    root: Path

    @classmethod
    def find(cls, start: Path | None = None) -> Project:
        """The nearest folder at or above `start` that has a cards/ folder, else `start` itself."""
        here = (start or Path.cwd()).resolve()
        for folder in (here, *here.parents):
            if (folder / "cards").is_dir():
                return cls(folder)
        return cls(here)

    @classmethod
    def of(cls, given: ProjectLike | None = None) -> Project:
        """The project a Python caller means: a `Project` as it is; a folder (`str` or any path) as the nearest
        project at or above it, as `-C DIR` would (a folder that does not exist is refused, naming it); None as
        the nearest project above the current folder. The one coercion every public function uses."""
        if isinstance(given, Project):
            return given
        if given is None:
            return cls.find()
        if not isinstance(given, str | os.PathLike):
            raise ProjectError(f"project={given!r}: expected a Project, a folder (str or Path) or None")
        folder = Path(given)
        if not folder.is_dir():
            raise ProjectError(f"project={os.fspath(given)}: no such folder")
        return cls.find(folder)

    @classmethod
    def require(cls, given: Path | None = None) -> Project:
        """The project a command works in: `-C DIR`, else the nearest folder at or above the current one with a
        cards/ folder. Anywhere else there is nothing to work on, and the error says where it looked."""
        if given is not None:
            root = given.resolve()
            if not root.is_dir():
                raise ProjectError(f"-C {given}: no such folder")
            if not (root / "cards").is_dir():
                raise ProjectError(f"-C {given}: not a benchcard project (no cards/ folder in {root})")
            return cls(root)
        project = cls.find()
        if not project.cards_dir.is_dir():
            raise ProjectError(f"no benchcard project here: no cards/ folder in {project.root} or any folder above "
                               "it; run from a project folder, or name one with -C DIR")
        return project

    @property
    def cards_dir(self) -> Path:
        return self.root / "cards"

    @property
    def results_dir(self) -> Path:
        return self.root / "results"

    @property
    def ledger_path(self) -> Path:
        return self.results_dir / "ledger.jsonl"

    def card_path(self, card_id: str) -> Path:
        return self.cards_dir / f"{card_id}.yaml"

    def keys_dir(self, card_id: str) -> Path:
        return self.root / "keys" / card_id

    def seal_path(self, card_id: str, version: int) -> Path:
        return self.keys_dir(card_id) / f"v{version}.seal.json"

    def run_dir(self, card_id: str, version: int, run_id: str) -> Path:
        return self.results_dir / card_id / f"v{version}" / run_id

    def inside(self, relative: str, *, source: str, field: str) -> Path:
        """Resolve a path written in a card; refuse one that leaves the project (absolute, `..`, a link out)."""
        if Path(relative).is_absolute():
            raise CardError(f"{source}: field '{field}': path '{relative}' must be relative to the project")
        resolved = (self.root / relative).resolve()
        root = self.root.resolve()
        if resolved != root and root not in resolved.parents:
            raise CardError(f"{source}: field '{field}': path '{relative}' leaves the project")
        return resolved

    def run_inside(self, folder: Path, name: str) -> Path:
        """A run folder named on the command line, resolved; one outside this project's results/ is refused, so
        that no command judges, resumes or grades another project's run into this project's ledger."""
        resolved = folder.resolve()
        results = self.results_dir.resolve()
        if results not in resolved.parents:
            raise RunError(f"{name}: the run is outside this project's {self.relative(self.results_dir)}/ "
                           f"({self.root}); use `benchcard -C <its project>`")
        return resolved

    def refuse_protected(self, path: Path, shown: str, *, folder: bool = False, allow: Path | None = None) -> None:
        """The one check of every output path a user names (`export --out`, `blind-sheet --out`, `site --out`,
        `compare --out`): nothing is written over, or created in, what the project owns — the ledger and
        anything under results/ (run folders, sealed files), cards/, fixtures/ or keys/ (keys and seals), or
        benchcard.yaml — not even with --force. A folder (`folder`) may not be the project itself nor hold it.
        `allow` is a folder under results/ that a command fills itself (compare's `results/_compare/`): a new
        path inside it is taken. Links are followed to where they point."""
        target = path.resolve()
        root = self.root.resolve()
        where = None
        if folder and (target == root or target in root.parents):
            where = "the project folder" if target == root else "a folder holding the project"
        elif target == (root / "benchcard.yaml").resolve():
            where = "the project's benchcard.yaml"
        elif target == self.ledger_path.resolve():
            where = "the ledger"
        for owned in (self.results_dir, self.cards_dir, self.root / "fixtures", self.root / "keys"):
            real = owned.resolve()
            if where is None and (target == real or real in target.parents):
                allowed = allow is not None and allow.resolve() in target.parents and not os.path.lexists(target)
                where = None if allowed else f"under {self.relative(owned)}/"
        if where is not None:
            raise RunError(f"{shown}: that is {where}, part of the project's own records; benchcard never "
                           "writes over it or adds to it. Choose a path outside results/, cards/, fixtures/ "
                           "and keys/")

    def relative(self, path: Path) -> str:
        """A path as the user should see it: relative to the project when it is inside."""
        try:
            return str(path.resolve().relative_to(self.root.resolve()))
        except ValueError:
            return str(path)


ProjectLike = Project | str | os.PathLike[str]
"""What every public function takes where it takes a project (`Project.of` turns it into one)."""
