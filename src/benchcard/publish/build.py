"""`benchcard site`: static pages like the seeds, from cards/, keys/ and results/.

Nothing here needs a server or JavaScript: every link is relative, the one stylesheet is a local file, the plots
are SVG files next to the pages, and each run's raw files are copied into the site so that every "Evidence"
link works from `file://` as well as from any static host.

Every string that reaches a page (model outputs, card prose, verdict notes) goes through Jinja2 with
autoescaping on; the only markup built in Python is the JSON-LD block, which is escaped for a `<script>`
element by `json_ld` (no `<`, `>` or `&` survives as itself, so nothing can close the element).

Run folders are read tolerantly: a field the runner or the verdict did not write shows as a dash, a line of a
JSONL file cut short by a killed run is skipped (the raw file is still published unedited), a folder that is
not a run (no manifest.json) is left out, and one whose manifest is not a `records.Manifest` is left out and named.

The parts: `runs` reads run folders and the ledger, `render` formats figures and renders templates,
`probe` and `runcard` build the card pages (with `cardparts` shared by both, and `plots` for the SVG
figures), `evidence` copies each run and builds its page, `index` builds the index and the ledger page.
"""

from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from benchcard._util.files import alive, refused_write
from benchcard._util.text import ascii_int
from benchcard.card.load import load_cards
from benchcard.card.model import Card
from benchcard.errors import BenchcardError
from benchcard.project import Project, ProjectConfig
from benchcard.publish._evidence import copy_run, run_pages
from benchcard.publish._index import card_summary, ledger_context
from benchcard.publish._lookplot import draw_looks
from benchcard.publish._matrix import PAGE as MATRIX_PAGE
from benchcard.publish._matrix import matrix_context, view_index_context
from benchcard.publish._probe import probe_context
from benchcard.publish._render import environment, json_ld, write_page
from benchcard.publish._runcard import ab_context
from benchcard.publish._runs import Run, ledger_rows, published_runs, read_runs
from benchcard.records.ledgerrow import LedgerRow
from benchcard.records.verdictfile import VerdictFile
from benchcard.verdict.integrity import evidence_problems, verdict_matches
from benchcard.verdict.runfolder import VERDICT_FILE

__all__ = ["MARKER", "SiteReport", "build_site", "json_ld"]

MARKER = ".benchcard-site"
"""A file written at the top of every built site: only a folder holding it may be emptied and rebuilt."""


@dataclass(frozen=True)
class SiteReport:
    """What a build wrote: the output folder, every page (relative paths) and how many runs it shows."""

    out_dir: Path
    pages: tuple[str, ...]
    cards: int
    runs: int
    plots: int
    skipped: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"out": str(self.out_dir), "pages": list(self.pages), "cards": self.cards, "runs": self.runs,
                "plots": self.plots, "skipped": list(self.skipped)}

    def lines(self) -> list[str]:
        """What `benchcard site` prints."""
        return ([f"built {len(self.pages)} pages ({self.cards} cards, {self.runs} runs, {self.plots} plots) → "
                 f"{self.out_dir}"] + [f"  skipped: {note}" for note in self.skipped]
                + [f"  open {self.out_dir / 'index.html'}"])


def _check_out(project: Project, out_dir: Path) -> Path:
    """Refuse any output folder that benchcard did not build (or the project itself, or a folder inside it)."""
    out = out_dir.resolve()
    project.refuse_protected(out_dir, f"--out {out_dir}", folder=True)
    src = (project.root / "src").resolve()
    if out == src or src in out.parents:
        raise BenchcardError(f"--out {out_dir}: refusing to build the site inside src/")
    if out.exists():
        if not out.is_dir():
            raise BenchcardError(f"--out {out_dir}: exists and is not a folder")
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise BenchcardError(
                f"--out {out_dir}: folder is not empty and was not built by benchcard site; "
                "choose an empty or new folder"
            )
    return out


def _staging(out: Path) -> Path:
    """A new, empty folder beside `out` (same file system, so the final swap is a rename), named for this process;
    what a build killed before its swap left there is removed first."""
    out.parent.mkdir(parents=True, exist_ok=True)
    _sweep_builds(out)
    return _new_folder(out, "building")


def _new_folder(out: Path, kind: str) -> Path:
    """A new folder beside `out`, `.<name>.<kind>-<pid>-<hex>`, made by mkdir so that it has the mode the user's
    umask gives every folder: the staging folder becomes the site's folder, and mkdtemp's is 0700 whatever the
    umask, so a web server or a colleague could not read the pages, and a chmod of the site was undone by the
    next build."""
    while True:
        folder = out.parent / f".{out.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder


def _sweep_builds(out: Path) -> None:
    """Remove the staging and old folders of builds of `out` whose process is gone (a build killed mid-way)."""
    for kind in ("building", "old"):
        prefix = f".{out.name}.{kind}-"
        for found in out.parent.iterdir():
            name = found.name[len(prefix):] if found.name.startswith(prefix) else ""
            pid = ascii_int(name.partition("-")[0], digits=None)
            if pid is not None and found.is_dir() and not found.is_symlink() and not alive(pid):
                shutil.rmtree(found, ignore_errors=True)


def _swap_in(staging: Path, out: Path) -> None:
    """Put the finished build at `out`; the last good site is removed only once the new one is in place."""
    old = None
    if out.exists():
        old = _new_folder(out, "old")
        os.replace(out, old / "site")
    os.replace(staging, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build_site(project: Project, out_dir: Path, viewer: bool = False) -> SiteReport:
    """Build every page into `out_dir`, replacing what benchcard built there before.

    The pages are written into a staging folder beside it and swapped in only when every page is written, so
    a build that fails leaves the last good site untouched. `viewer` (`site --serve`) adds each run's
    side-by-side page and its script (`_matrix.py`); the published site carries no script.
    """
    cards = load_cards(project)
    ledger, chain_problem = ledger_rows(project)
    config = project.config()
    skipped: list[str] = []
    runs = read_runs(project, skipped)
    final = _check_out(project, out_dir)
    try:
        out = _staging(final)
    except OSError as exc:  # --out's folder not writable: the hidden staging folder's name is not the user's
        said, mend = refused_write(exc)
        raise BenchcardError(f"--out {out_dir}: the pages could not be written: {final.parent} refused a new folder "
                             f"({said}); the site there before, if any, is as it was. {mend}, then build again, or "
                             "give another --out") from None
    try:
        (out / MARKER).write_text("built by benchcard site; this folder is rebuilt on every build\n", encoding="utf-8")
        report = _build_into(project, out, final, cards, ledger, chain_problem, config, runs, skipped, viewer)
    except BaseException as exc:
        shutil.rmtree(out, ignore_errors=True)
        if isinstance(exc, OSError):
            refused = _refused_page(exc, out, out_dir)
            if refused is not None:
                raise refused from None
        raise
    _swap_in(out, final)
    return report


def _refused_page(exc: OSError, staging: Path, out_dir: Path) -> BenchcardError | None:
    """A write into the staging folder the system refused, said of the page as it would have been under `--out`
    (not of the hidden staging folder, nor of the project file being copied there, which a copy's error names
    first); None when the refusal was not of a page (a project file that could not be read)."""
    said, mend = refused_write(exc)
    kept = f"the site there before, if any, is as it was. {mend}, then build again"
    if exc.filename is None:  # a write or a sync, which names no file: one of the pages'
        return BenchcardError(f"--out {out_dir}: the pages could not be written ({said}); {kept}")
    for name in (exc.filename2, exc.filename):
        if isinstance(name, (str, os.PathLike)) and Path(name).is_relative_to(staging):
            page = out_dir / Path(name).relative_to(staging)
            return BenchcardError(f"--out {out_dir}: {page} could not be written ({said}); {kept}")
    return None


def _matches(file: VerdictFile, written: str | None, row: LedgerRow) -> bool:
    """True when a run's verdict.json is the one its ledger row was entered with: its run, finding, outcome and
    ledger entry (`integrity.verdict_matches`), and its digest as written (a field no struct declares counts)."""
    anchored = row.verdict_digest
    return verdict_matches(file.fields(), row) and (not isinstance(anchored, str) or written == anchored)


def _check_against_rows(project: Project, runs: list[Run], ledger: list[LedgerRow], skipped: list[str]) -> None:
    """Each run's files against its ledger row, as `ledger --verify` checks them: an edited verdict.json is
    replaced on the pages by what the row anchors; every other changed file is named in the build report."""
    by_run = {(r.card, r.run): r for r in ledger}
    read = {(run.card, run.run_id) for run in runs}
    for entry in ledger:  # a row whose run folder was not read (deleted, or a row written by hand) is published too
        if entry.run and (entry.card, entry.run) not in read:
            skipped.extend(f"{p}; the ledger page shows its row (seq {entry.seq}) without the evidence it rests on"
                           for p in evidence_problems(project.root, entry))
    for run in runs:
        row = run.ledger_row = by_run.get((run.card, run.run_id))
        if row is None:
            continue
        run.set_aside = None  # a ledgered run is never set aside: a mark written by hand is named below, not obeyed
        if run.verdict_file is not None and not _matches(run.verdict_file, run.verdict_digest, row):
            skipped.append(f"results/{run.card}/v{run.version}/{run.run_id}/verdict.json differs from its ledger "
                           f"row (seq {row.seq}); the pages show the ledger row's finding")
            # what the row anchors replaces what the edited file says (publish/_verdictview.py); its unanchored
            # prose is not shown, nor is the lead drawn from its figures
            run.edited_file, run.verdict_file = run.verdict_file, None
        if row.run:
            shown = f"{row.evidence}/{VERDICT_FILE}"
            skipped.extend(f"{p}; its published copy is not the file the verdict rests on (ledger row seq {row.seq})"
                           for p in evidence_problems(project.root, row) if not p.startswith(shown))


def _build_into(project: Project, out: Path, final: Path, cards: list[Card], ledger: list[LedgerRow],
                chain_problem: str | None, config: ProjectConfig, runs: list[Run], skipped: list[str],
                viewer: bool = False) -> SiteReport:
    """Every page written into the staging folder `out`; the report names `final`, where it will be."""
    env = environment()
    env.globals["viewer"] = viewer
    env.globals["ledger_problem"] = chain_problem  # every page that shows a finding carries it (base.html)
    if chain_problem:
        skipped.append(f"{project.relative(project.ledger_path)} does not verify ({chain_problem}); every page "
                       "says so above the findings it shows")

    _check_against_rows(project, runs, ledger, skipped)
    cards_by_id = {c.id: c for c in cards}
    for card in cards:
        runs.extend(published_runs(card, skipped))
    runs.sort(key=lambda r: (r.started, r.run_id))

    style = resources.files("benchcard.publish") / "static" / "style.css"
    (out / "style.css").write_bytes(style.read_bytes())

    pages: list[str] = []
    plots = 0
    for run in runs:
        card_obj = cards_by_id.get(run.card)
        copy_run(run, out)
        looks = draw_looks(run, out / run.site_dir, card_obj.gate if card_obj is not None else None)
        plots += looks is not None
        for href, context in run_pages(run, card_obj):
            pages.append(write_page(env, out, href, "run.html", context | {"looks": looks}))
        if viewer and run.folder is not None and run.outputs:
            pages.append(write_page(env, out, f"{run.site_dir}/{MATRIX_PAGE}", "matrix.html",
                                    matrix_context(run, card_obj)))

    summaries = []
    for card in cards:
        card_runs = [r for r in runs if r.card == card.id]
        page = f"cards/{card.id}/index.html"
        if card.is_ab:
            context, n_plots = ab_context(card, card_runs, project, out, config)
            plots += n_plots
            pages.append(write_page(env, out, page, "runcard.html", context))
        else:
            sealed = project.seal_path(card.id, card.version).is_file()
            pages.append(write_page(env, out, page, "probe.html", probe_context(card, card_runs, config, sealed)))
        summaries.append(card_summary(card, card_runs, ledger))

    ledger_page = ledger_context(ledger, runs, cards_by_id, chain_problem)
    pages.append(write_page(env, out, "ledger.html", "ledger.html", ledger_page))
    if viewer:
        (out / "matrix.js").write_bytes((resources.files("benchcard.publish") / "static" / "matrix.js").read_bytes())
        pages.append(write_page(env, out, "view.html", "view.html", view_index_context(runs)))
    pages.append(write_page(env, out, "index.html", "index.html",
                            {"root": "", "cards": summaries, "ledger_rows": len(ledger), "title": "Cards"}))
    return SiteReport(out_dir=final, pages=tuple(pages), cards=len(cards), runs=len(runs), plots=plots,
                      skipped=tuple(skipped))
