"""`benchcard seal`'s core, one function for the command line and the API alike: the card checked, a design that
cannot win refused unless the card says it accepts that, then sealed (`seal.seal`). Apart from `seal.py`, which
`check` imports, so that sealing may use `check` without a cycle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchcard.card._sealfile import SealFile
from benchcard.card.check import answer_warnings, check_card
from benchcard.card.design import cannot_win
from benchcard.card.load import load_named
from benchcard.card.seal import seal
from benchcard.errors import SealError
from benchcard.project import Project


@dataclass(frozen=True)
class Sealed:
    """What `benchcard seal` did: the version's seal, where it is (as the project names it), and whether this
    call wrote it (False: it was sealed already, with the same content)."""

    card: str
    version: int
    path: str
    seal: SealFile
    written: bool
    # what in its answers a reply typed as it reads would not match (`check.answer_warnings`), said, not refused
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """What `benchcard seal --json` prints: the seal's fields, then `written` and `path`."""
        return {**self.seal.fields(), "written": self.written, "path": self.path, "warnings": list(self.warnings)}

    def lines(self) -> list[str]:
        verb = "sealed" if self.written else "already sealed, unchanged:"
        return [f"{verb} {self.card} v{self.version} → {self.path}", f"root {self.seal.root}",
                *(f"warning: {w}" for w in self.warnings)]


def seal_card(project: Project, name: str) -> Sealed:
    """Seal the card `name` (an id or a path) after `check`'s problems and the design check: SealError names the
    first problem, a rule that backtracks catastrophically (`check.runaway_rules`), or the design that cannot win
    (a version sealed already is only compared with its seal)."""
    card = load_named(project, name)
    report = check_card(card, project, verify_seal=False)
    if report.problems:
        raise SealError(f"refusing to seal: {report.problems[0]}")
    sealed_before = project.seal_path(card.id, card.version).exists()
    if report.runaway and not sealed_before:  # a sealed version keeps its rules: check says so of each
        raise SealError(f"refusing to seal: {report.runaway[0]}")
    accepts = card.win is not None and card.win.accept_cannot_win
    dead = None if sealed_before or accepts else cannot_win(card)
    if dead:
        raise SealError(f"refusing to seal {project.relative(card.path)}: {dead} (or, for an A/A or pilot card, "
                        "say so: win: {accept_cannot_win: true})")
    path, data, written = seal(card, project)
    warned = [*report.runaway,
              *answer_warnings(card, card.answer_keys(project.keys_dir(card.id)), project.relative(card.path))]
    return Sealed(card.id, card.version, project.relative(path), data, written, tuple(warned))
