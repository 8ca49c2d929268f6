"""Where a project's cards, fixtures, keys and results live, and the rule that no path may leave it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchcard.errors import CardError


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

    def relative(self, path: Path) -> str:
        """A path as the user should see it: relative to the project when it is inside."""
        try:
            return str(path.resolve().relative_to(self.root.resolve()))
        except ValueError:
            return str(path)
