"""`benchcard run`: plan the grid, call the model for every cell, record each outcome, score blind at the end.

This module carries a run from the card to the finished folder: the rig it uses (a card's, or the one given
with --provider/--model/--base-url), the plan written before the first call, the calls (`_calls.py`: one client,
N workers, retries, one row per cell), the blind scoring and the manifest's closing fields. N is `--concurrency`,
capped at a provider's `max_concurrency` (the local model's 1) so that no cell's latency counts time spent
queued. Model output is data: it is stored byte for byte and never executed or interpreted.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

import httpx
import msgspec

from benchcard._util.files import refused_write
from benchcard._util.hashing import file_digest
from benchcard._util.names import name_clash, shown
from benchcard._util.urls import secrets_of, strip_credentials
from benchcard._util.version import __version__
from benchcard.card import seal as sealmod
from benchcard.card.load import load_card, moved_text, resolve_card_path
from benchcard.card.model import Card, Rig
from benchcard.card.schedule import schedule_record
from benchcard.errors import CardError, RunError, SealError
from benchcard.project import CONFIG_FILE, Project, ProjectConfig
from benchcard.records.plandigest import sealed_digests, sealed_problems
from benchcard.records.rows import (
    MANIFEST,
    RUN_ID,
    AssignmentRow,
    Manifest,
    RequestRow,
    RigRecord,
    Rules,
    stop_line,
    utc_stamp,
)
from benchcard.records.runreader import Outcomes, outcomes
from benchcard.records.setaside import refuse_set_aside
from benchcard.run._calls import RateLimiter, Session, execute, make_client
from benchcard.run._conventions import judge_note, load_dotenv_keys, new_targets, resume_note
from benchcard.run._headers import header_changes, recorded_headers, uncompared_secrets
from benchcard.run._looking import Looked, Looker, run_in_looks
from benchcard.run._pool import PoolProvider, calls_in_flight, check_served, client_size, open_provider
from benchcard.run._progress import NullProgress, Progress, RichProgress
from benchcard.run._retry import done_cells, refuse_if_judged, reopen_failed, scoring_since
from benchcard.run._scratch import MARK as SCRATCH
from benchcard.run._scratch import keep_out_of_git, scratch_reason
from benchcard.run.batch import run_batch
from benchcard.run.grid import PlannedCell, default_seed, plan_cells, plan_rows
from benchcard.run.judging import JudgeSummary, judge_config, judge_manifest_fields, judge_run, refuse_judge_route
from benchcard.run.options import DEFAULT_CONCURRENCY, RunOptions
from benchcard.run.providers import (
    endpoint,
    provider_config,
    require_key,
    stored_url,
)
from benchcard.run.providers.base import Provider, ProviderConfig
from benchcard.run.providers.openai import is_openrouter
from benchcard.run.store import RunStore
from benchcard.run.summary import RunSummary, Tally, capped_note, run_summary
from benchcard.scoring.scorers import score_run

# ------------------------------------------------------------------------------------------------ scoring


def score_blind(outputs_path: Path, scores_path: Path, card: Card, project: Project, *, retried: bool = False,
                since: tuple[int, int] | None = None) -> int:
    """Score a run from `outputs.jsonl`, the keys and the fixtures alone: no assignment, request, manifest
    or model reaches the scorer (tests/run/test_runner.py checks which files it opens); `retried`: each cell's
    last row is its outcome, `since`: only the rows a retry added are scored, appended (retry.py). Returns the
    rows written."""
    keys = card.answer_keys(project.keys_dir(card.id))
    texts = {f: card.fixture_text(f) for f in card.fixture_ids()} if card.is_ab else {}
    try:
        return score_run(outputs_path, scores_path, card.scoring, keys, texts, latest=retried, since=since)
    except CardError as exc:  # e.g. a rule over its time limit: the outputs stay, unscored
        raise CardError(f"{project.relative(card.path)}: blind scoring stopped: {exc}; every output is kept in "
                        f"{project.relative(outputs_path)}") from None


# ------------------------------------------------------------------------------------------------- the run


class ReplicaSource(Protocol):
    """What `benchcard replicate` (run/replicate.py) adds to a new run: the original's seed (unless --seed gives
    another), the sealed rows (the original's bodies), and the manifest's link to the original and its rule."""

    @property
    def seed(self) -> int: ...

    def manifest_fields(self) -> dict[str, object]: ...

    @property
    def rules(self) -> Rules | None: ...

    def rows(self, card: Card, cells: list[PlannedCell], provider: Provider, model: str, url: str
             ) -> Iterator[tuple[AssignmentRow, RequestRow]]: ...


@dataclass
class _Target:
    """One run to carry out: a new one (store None until planned) or one being resumed."""

    cfg: ProviderConfig
    model: str | None
    rig: Rig | None = None
    store: RunStore | None = None
    manifest: Manifest | None = None
    endpoint_from: str | None = None  # what named a new run's endpoint instead of its provider's own
    replica: ReplicaSource | None = None  # a new replication run (run/replicate.py)


@dataclass(frozen=True)
class _Setting:
    """What every run of one invocation shares. `folders` gets each run's folder as soon as it is open, so that an
    interrupt can name the run to resume."""

    project: Project
    card: Card
    seal_root: str
    options: RunOptions
    config: ProjectConfig  # benchcard.yaml, read once for the invocation
    stream: IO[str] | None
    stop_after: int | None
    transport: httpx.AsyncBaseTransport | None
    looker: Looker | None
    folders: list[RunStore] = field(default_factory=list)


@dataclass(frozen=True)
class _Opened:
    """A run ready for its cells: a new one planned and sealed, or a resumed one as its manifest records it."""

    store: RunStore
    manifest: Manifest
    rig: Rig
    model: str


@dataclass(frozen=True)
class _Outcome:
    """What this invocation's calls came to: the manifest as it now stands, the tally, the calls made, the judge."""

    manifest: Manifest
    tally: Tally
    called: int = 0
    judge: JudgeSummary | None = None


def run(project: Project, card_name: str, options: RunOptions, *, transport: httpx.AsyncBaseTransport | None = None,
        stream: IO[str] | None = None, stop_after: int | None = None,
        replica: ReplicaSource | None = None, looker: Looker | None = None,
        tell: Callable[[str], None] | None = None) -> list[RunSummary]:
    """Run (or resume) a card: one run per model. The core of `benchcard run`.

    `transport` replaces the network (tests' mock transports; no command or API passes one, and it gets no
    keep-alive resend, `_calls.make_client`); `stream` takes the progress bar (default stderr);
    `stop_after` stops each run after that many calls, as a kill would (benchmarks of resume); `replica` makes
    the new run a replication (`benchcard replicate`, run/replicate.py); `looker` takes a sequential card's
    looks (`verdict.looks.look_at`, which this stage may not import: the CLI and the API pass it); `tell` takes
    the notes said before the calls (keys read from .env, a resume's or a judge's provider, cells a retry keeps
    failed), so that the CLI reports them (default: on `stream` or stderr, beside the progress bar).
    """
    tell = tell or (lambda line: print(line, file=stream or sys.stderr))
    _check_options(options)
    card = load_card(resolve_card_path(project, card_name), project)
    _check_sequential(card, options, looker)
    seal_root = sealmod.root_for_scratch(card, project, options.scratch or _resumes_scratch(project, card, options))
    config = project.config()
    notes = load_dotenv_keys(project.root, config)
    targets = _targets(project, card, options, config, seal_root, notes, replica)
    resumed = targets[0] if options.resume is not None and targets[0].manifest is not None else None
    if options.retry_failed and card.judge_spec is not None:
        raise RunError("--retry-failed does not re-judge yet: call a judge card's failed cells in a new run")
    if resumed is not None:
        options = _as_recorded(options, resumed)
        nothing = _nothing_to_call(project, card, resumed, options)
        if nothing is not None:
            return [nothing]  # said before any key is asked for: nothing will be sent
    options = replace(options, concurrency=options.concurrency or DEFAULT_CONCURRENCY)
    spec = card.judge_spec
    notes += filter(None, [judge_note(spec.provider) if spec is not None else None])
    for line in dict.fromkeys(notes):  # out loud, before a missing key stops the run
        tell(line)
    for t in targets:
        require_key(t.cfg, batch=options.batch or bool(t.manifest is not None and t.manifest.batch))
    if spec is not None:
        require_key(judge_config(spec, config))
    if resumed is not None and options.retry_failed:
        _reopen_failed(resumed, tell)
    setting = _Setting(project, card, seal_root, options, config, stream, stop_after, transport, looker)
    try:
        return asyncio.run(_run_all(setting, targets))
    except KeyboardInterrupt:
        raise RunError(_interrupted(card, setting.folders)) from None


def _interrupted(card: Card, folders: list[RunStore]) -> str:
    """What a Ctrl-C (or SIGTERM) says, from where the runs stand on disk, not from when it came: one that lands
    while a run closes (a sequential run's deciding look, the scoring of its last cells) leaves that run finished,
    and a `--resume` of it has nothing to call, so the line names its verdict instead."""
    if not folders:
        return "interrupted before the first run was planned; nothing was called"
    open_runs = [f for f in folders if not f.has_manifest() or f.read_manifest().finished_at is None]
    if open_runs:
        return (f"interrupted; every finished cell is recorded. Continue with: "
                f"benchcard run {card.id} --resume {open_runs[-1].run_id}")
    last = folders[-1].read_manifest()
    looks = _looks_line(last)
    return (f"interrupted after run {last.run} had finished{f' ({looks})' if looks else ''}: every cell it needs has "
            f"an outcome and is scored, so nothing is left to call. Its verdict: benchcard verdict {last.run}")


def _check_sequential(card: Card, o: RunOptions, looker: Looker | None) -> None:
    """A sequential card runs with its looks (`--retry-failed` calls again only the failed
    cells no look has read: `runreader.outcomes`)."""
    if card.sequential is None:
        return
    if looker is None:
        raise RunError(f"{card.id} is a sequential card: its run takes the sealed looks, so start it with "
                       "`benchcard run` or `benchcard.api.run_card`")


def _resumes_scratch(project: Project, card: Card, o: RunOptions) -> bool:
    """Whether `--resume` names a scratch run (which may have been made before the version was sealed)."""
    if o.resume is None:
        return False
    store = _resumed_store(project, card, o.resume)
    return store.has_manifest() and bool(store.read_manifest().scratch)


def _resumed_store(project: Project, card: Card, name: str) -> RunStore:
    """The run `--resume` names, under the card's version; a run of the card's other version (the card file moved
    on since) is refused in one line saying so and what to do (`load.moved_text`), not as "no such run"."""
    try:
        store = RunStore.find(project, card.id, card.version, name)
    except RunError:
        if not RUN_ID.fullmatch(name):
            raise
        others = sorted(p.parent for p in project.results_dir.glob(f"{card.id}/v*/{name}/{MANIFEST}"))
        if not others:
            raise
        store = RunStore(others[0])
    if store.has_manifest():
        manifest = store.read_manifest()
        if manifest.card == card.id and manifest.version != card.version:
            raise RunError(moved_text(project, store.run_id, card.id, manifest.version, card.version, "resume"))
    return store


def _as_recorded(o: RunOptions, t: _Target) -> RunOptions:
    """A resumed run keeps the concurrency and rate limit it was started with, unless given again."""
    assert t.manifest is not None
    # a pool's concurrency is each server's; the run's is their sum, so a pool keeps its per-server default
    recorded = t.manifest.endpoint_concurrency if t.manifest.endpoints else t.manifest.concurrency
    rpm = t.manifest.requests_per_minute
    return replace(o, concurrency=o.concurrency or (recorded if isinstance(recorded, int) and recorded > 0 else None),
                   rpm=o.rpm or (float(rpm) if isinstance(rpm, int | float) and rpm > 0 else None))


def _nothing_to_call(project: Project, card: Card, t: _Target, o: RunOptions) -> RunSummary | None:
    """A resume that would call nothing says so, and why, instead of asking for a key."""
    assert t.manifest is not None and t.store is not None and t.rig is not None
    _check_batch_resume(t, o)
    found = outcomes(t.store)
    if o.retry_failed and found.failed:
        refuse_if_judged(project, t.store)
        return None
    if t.manifest.finished_at is None:
        return None
    run_id = t.store.run_id
    counts = f"{found.recorded} of {t.manifest.cells} cells have an outcome, {found.failed + found.final} failed"
    if found.final:  # a finished sequential run: every cell it called was read by a look
        note = (f"{'nothing to retry: ' if o.retry_failed else ''}run {run_id} is finished ({counts}); "
                f"{_final_note(t, found)}")
    elif o.retry_failed:
        note = f"nothing to retry: run {run_id} is finished and no cell failed ({counts})"
    elif found.failed:
        note = (f"run {run_id} is finished: nothing to call ({counts}); `benchcard run {card.id} --resume {run_id} "
                f"--retry-failed` would call the {found.failed} failed cell(s) again, keeping the failed attempts "
                "in outputs.jsonl")
    else:
        note = f"run {run_id} is finished: nothing to call ({counts})"
    tally = Tally.of(t.store)
    return run_summary(project, t.store, t.manifest, t.rig, tally, time.perf_counter(), 0, True,
                       int(t.manifest.concurrency or 0), False, note, looks=_looks_line(t.manifest))


def _reopen_failed(t: _Target, tell: Callable[[str], None]) -> None:
    """`--retry-failed`: the failed cells a retry may call again reopened (a sequential run: those no look has
    read, the others said to stay failed)."""
    assert t.store is not None
    found = outcomes(t.store)
    if found.final:
        tell(_final_note(t, found))
    reopen_failed(t.store, found)
    t.manifest = t.store.read_manifest()


def _final_note(t: _Target, found: Outcomes) -> str:
    """What a sequential run's failed cells already read by a look are: final, never called again."""
    assert t.manifest is not None and t.manifest.looks
    taken = len(t.manifest.looks)
    which = "look 1" if taken == 1 else f"looks 1 to {taken}"
    counted = "against win.allow_failed" if t.manifest.kind == "ab" else "as failing the gate"
    return (f"{found.final} failed cell(s) were read by {which}, and a look taken is final: they are not called "
            f"again (they count {counted})")


def _check_options(o: RunOptions) -> None:
    if o.scratch and o.resume is not None:
        raise RunError("--scratch marks a new run; a resumed run keeps what it was (drop --scratch)")
    if o.retry_failed and o.resume is None:
        raise RunError("--retry-failed calls the failed cells of an earlier run: give that run with --resume RUN")
    if o.concurrency is not None and o.concurrency < 1:
        raise RunError("--concurrency must be at least 1")
    if o.attempts < 1:
        raise RunError("--attempts must be at least 1")
    if o.timeout <= 0:
        raise RunError("--timeout must be a positive number of seconds")
    if o.rpm is not None and o.rpm <= 0:
        raise RunError("--rpm must be a positive number of requests per minute")
    if o.resume and (len(o.models) > 1):
        raise RunError("--resume continues one run; drop the extra --model options")
    _check_models(o.models)


def _check_models(models: Sequence[str]) -> None:
    """Each --model makes a run whose rig line a reader compares with the others': no name twice, none with a
    character that does not show, no two that read the same (`_util/names.py`)."""
    if len(set(models)) != len(models):
        raise RunError("the same --model is named twice")
    clash = name_clash(models)
    if clash is not None:
        name, other, problem = clash
        raise RunError(f"--model {shown(name)} and {shown(other)} {problem}; name models that look different"
                       if other else f"--model {shown(name)} {problem}")


def _targets(project: Project, card: Card, o: RunOptions, config: ProjectConfig, seal_root: str,
             notes: list[str], replica: ReplicaSource | None = None) -> list[_Target]:
    """The runs to make (one per model; a replication) or the one to resume; `notes` gets what was read how
    (run/_conventions.py)."""
    if o.resume is None:
        made, said = new_targets(card, o, config)
        notes += said
        return [_Target(t.cfg, t.model, endpoint_from=t.endpoint_from, replica=replica) for t in made]
    store = _resumed_store(project, card, o.resume)
    if not store.has_manifest():
        # killed while planning: no call was made, so planning again in the same folder loses nothing
        cfg = provider_config(o.provider or card.rig.provider, config, o.base_url)
        model = o.models[0] if o.models else (card.rig.model if cfg.type != "local" else None)
        return [_Target(cfg, model, store=store)]
    manifest = store.read_manifest()
    where = project.relative(store.folder)
    _check_resumable(store, manifest, where, card, seal_root)
    rig = manifest.rig
    if rig is None:
        raise RunError(f"{where}: its manifest names no rig; it cannot be resumed")
    _check_same_rig(o, manifest, rig, where)
    # a pool is resumed on the pool configured now (servers may have been added); one server keeps its URL. The
    # stored URL has no credentials: they come from --base-url or the config when it names the same server
    notes += filter(None, [resume_note(rig.provider, manifest.base_url)])
    cfg = provider_config(rig.provider, config, o.base_url)
    if not manifest.endpoints and stored_url(cfg) != manifest.base_url:
        cfg = provider_config(rig.provider, config, manifest.base_url)
    if cfg.type != manifest.provider_type:
        raise RunError(f"{where}: provider '{cfg.name}' is now of type {cfg.type}, the run used "
                       f"{manifest.provider_type}")
    secrets = _check_same_headers(cfg, manifest.headers, where, manifest.card)
    if card.judge_spec is not None and manifest.judge is not None:  # a judging planned: its judge's headers too
        secrets += _check_same_headers(judge_config(card.judge_spec, config), manifest.judge.headers, where,
                                       manifest.card, judge=True)
    if secrets:
        notes.append(f"headers not compared: {', '.join(secrets)}: a run records a secret header's name, never its "
                     "value (nor a digest, from which a short one could be found), so a change of its value since "
                     "the run started cannot be seen; they are sent as benchcard.yaml sets them now")
    return [_Target(cfg, rig.model, Rig(rig.provider, rig.model, rig.effort, rig.surface), store, manifest)]


def _check_resumable(store: RunStore, manifest: Manifest, where: str, card: Card, seal_root: str) -> None:
    """A run is continued only as what it was: not set aside, of this card's version, under this seal and with
    the plan it was sealed with."""
    refuse_set_aside(store.folder, where)
    if manifest.card != card.id or manifest.version != card.version:
        raise RunError(f"{where}: this run is of {manifest.card} v{manifest.version}, "
                       f"not {card.id} v{card.version}")
    if manifest.seal_root != seal_root:
        raise SealError(f"{where}: the run was planned under seal {manifest.seal_root}, the card is now "
                        f"sealed as {seal_root}; a run never spans two versions")
    problems = sealed_problems(store.folder, store.manifest_as_written())
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise SealError(f"{where}: {problems[0]}{more}; a run is only continued with the plan it was sealed with")


def _check_same_rig(o: RunOptions, manifest: Manifest, rig: RigRecord, where: str) -> None:
    """--provider, --model and --base-url given to a resume must name the rig the run was started with, and
    --seed its seed."""
    given_url = strip_credentials(o.base_url.rstrip("/")) if o.base_url else None
    for flag, given, recorded in (("--provider", o.provider, rig.provider),
                                  ("--model", o.models[0] if o.models else None, rig.model),
                                  ("--base-url", given_url, manifest.base_url)):
        if given is not None and given != recorded:
            raise RunError(f"{where}: the run was started with {flag} {recorded}; a resumed run keeps its rig "
                           f"(drop {flag})")
    if o.seed is not None and o.seed != manifest.seed:  # it was ignored: the sealed order (and a sequential
        # card's stretches) are the recorded seed's, so another one would only mislead
        raise RunError(f"{where}: the run was planned with seed {manifest.seed}; a resumed run keeps its sealed "
                       "order of calls (drop --seed)")


def _check_same_headers(cfg: ProviderConfig, recorded: Mapping[str, str | None] | None, where: str, card: str,
                        judge: bool = False) -> list[str]:
    """The provider's headers of benchcard.yaml are part of the rig (`anthropic-beta` changes what the model may
    do), and the judge's of its judging: a resume sends the ones the run recorded (a run, or a judging, made
    before they were recorded: not checked). The secrets it could not compare, each as `NAME (providers.P.headers)`
    for the line that says so."""
    if recorded is None:
        return []
    now = recorded_headers(cfg) or {}
    changes = header_changes(recorded, now)
    whose = ("the judge's " if judge else "", ", the judge's" if judge else "")
    if changes:
        more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
        sends = "a resumed run's judge sends the headers its judging was planned with" if judge else \
            "a resumed run sends the headers it was started with"
        raise RunError(f"{where}: {whose[0]}{changes[0]}{more} (providers.{cfg.name}.headers in {CONFIG_FILE}); "
                       f"{sends}: set them back, or start a new run (benchcard run {card})")
    return [f"{name} (providers.{cfg.name}.headers{whose[1]})" for name in uncompared_secrets(recorded, now)]


async def _run_all(s: _Setting, targets: list[_Target]) -> list[RunSummary]:
    concurrency = s.options.concurrency or DEFAULT_CONCURRENCY
    size = max([concurrency, *(client_size(t.cfg, concurrency) for t in targets)])
    client = make_client(size, s.options.timeout, s.transport)
    summaries = []
    try:
        for target in targets:
            provider = open_provider(target.cfg, client, target.model, concurrency)
            try:
                if s.card.judge_spec is not None:  # its routes asked beside the provider's, before the first call
                    refuse_judge_route(s.card, judge_config(s.card.judge_spec, s.config), client)
                summaries.append(await _run_one(s, target, provider))
            finally:
                await provider.aclose()
    finally:
        await client.aclose()
    return summaries


async def _run_one(s: _Setting, t: _Target, provider: Provider) -> RunSummary:
    """One run: opened (planned, or resumed as recorded), its uncalled cells called, scored blind and closed."""
    wall = time.perf_counter()
    o = s.options
    resumed = t.manifest is not None
    batch = bool(t.manifest.batch) if t.manifest is not None else o.batch
    if batch or o.batch:
        _check_batch(t, o, provider)
    asked = o.concurrency or DEFAULT_CONCURRENCY
    workers = calls_in_flight(provider, asked)  # a pool's: each server takes its own number of calls
    await check_served(provider, t.model or t.cfg.name)
    rpm = o.rpm or t.cfg.requests_per_minute
    opened = await (_open_new(s, t, provider, workers, rpm, batch) if t.manifest is None else _reopen(s, t, provider))
    store, manifest = opened.store, opened.manifest
    session = Session(store=store, provider=provider, model=opened.model, prices=s.config.prices, options=o,
                      limiter=RateLimiter(rpm), progress=RichProgress(s.stream) if o.progress else NullProgress(),
                      secret_env=t.cfg.api_key_env, hidden=secrets_of(t.cfg.credentials), workers=workers,
                      variants=len(s.card.variant_names()), fixtures=len(s.card.fixture_ids()))
    if manifest.finished_at is None:
        came = await _call_cells(s, t, opened, session, batch, workers < asked)
    else:
        came = _Outcome(manifest, Tally.of(store))
    return run_summary(s.project, store, came.manifest, opened.rig, came.tally, wall, came.called, resumed, workers,
                       workers < asked, rpm=rpm, judge=came.judge, batch=batch, warnings=tuple(session.notes),
                       looks=_looks_line(came.manifest), narrowed=session.narrowed)


async def _open_new(s: _Setting, t: _Target, provider: Provider, workers: int, rpm: float | None,
                    batch: bool) -> _Opened:
    """A new run: its rig, seed and grid, the plan written and sealed in its folder before the first call."""
    card, o, project = s.card, s.options, s.project
    model = t.model or provider.model_name or "local"
    surface = card.rig.surface if t.cfg.name == card.rig.provider else None
    # effort means nothing to the embedded model (local.build_body sends none), so its rig line claims none
    rig = Rig(t.cfg.name, model, card.rig.effort if t.cfg.type != "local" else None, surface)
    scratch = scratch_reason(project, card, t.cfg, o, t.endpoint_from)
    started = datetime.now(UTC)
    seed = o.seed if o.seed is not None else t.replica.seed if t.replica else default_seed(s.seal_root, started)
    cells = plan_cells(card, seed)
    url = endpoint(t.cfg)
    rows = (t.replica.rows if t.replica else plan_rows)(card, cells, provider, model, url)
    first = next(rows)  # builds one body before any folder exists: a card the provider refuses leaves none
    await provider.prepare()  # the local model loads here: a bad file leaves no folder
    store = t.store or RunStore.create(project, card.id, card.version, started=started)
    s.folders.append(store)

    def all_rows() -> Any:
        yield first
        yield from rows

    with _planning(s, t, store):
        manifest = _sealed_manifest(s, t, store, store.write_sealed(all_rows()), rig, scratch, (seed, started),
                                    (workers, rpm, batch))
    if scratch:
        keep_out_of_git(store.folder)
    return _Opened(store, manifest, rig, model)


def _sealed_manifest(s: _Setting, t: _Target, store: RunStore, n: int, rig: Rig, scratch: str | None,
                     when: tuple[int, datetime], calls: tuple[int, float | None, bool]) -> Manifest:
    """A new run's manifest, with the digests of its sealed plan, written: the last step of planning."""
    card, o, project = s.card, s.options, s.project
    (seed, started), (workers, rpm, batch) = when, calls
    manifest = Manifest(
        run=store.run_id, card=card.id, version=card.version, kind=card.kind, seal_root=s.seal_root,
        rig=RigRecord(provider=rig.provider, model=rig.model, effort=rig.effort, surface=rig.surface,
                      line=rig.line() + (f" · {SCRATCH}" if scratch else "")),
        scratch=scratch,
        provider_type=t.cfg.type, base_url=stored_url(t.cfg), headers=recorded_headers(t.cfg),
        endpoints=[e.url for e in t.cfg.endpoints] if t.cfg.endpoints else None,  # never with a password
        endpoint_concurrency=(o.concurrency or DEFAULT_CONCURRENCY) if t.cfg.endpoints else None,
        params=dict(card.params),
        seed=seed, repetitions=card.repetitions, cells=n, concurrency=workers, batch=True if batch else None,
        requests_per_minute=rpm, benchcard_version=__version__, started_at=utc_stamp(started),
        **(t.replica.manifest_fields() if t.replica else {}),  # type: ignore[arg-type]
        sequential=schedule_record(card, card.win.alpha if card.win is not None else card.gate_alpha,
                                   t.replica.rules if t.replica else sealmod.sequential_rules(card, project)),
    )
    manifest = msgspec.structs.replace(manifest, **sealed_digests(store.folder, manifest.fields()))
    store.write_manifest(manifest)
    return manifest


@contextlib.contextmanager
def _planning(s: _Setting, t: _Target, store: RunStore) -> Iterator[None]:
    """A run's folder while its plan and manifest are written. When that fails (a full disk, an interrupt), a
    folder made for it is removed again, since no call was made from it: no later `run`, `status` or page meets
    a half-made run. A disk that refuses the plan is one line saying what happened and what to do."""
    try:
        yield
    except BaseException as exc:
        removed = t.store is None and store.discard_unplanned()
        if removed:
            s.folders.remove(store)
        if isinstance(exc, OSError):
            raise RunError(_unplanned(s.project, s.card.id, store, exc, removed)) from None
        raise


def _unplanned(project: Project, card_id: str, store: RunStore, exc: OSError, removed: bool) -> str:
    """The line for a plan the disk refused: the run, the file, what the system said, and the command to run."""
    name = Path(str(exc.filename)) if exc.filename else None
    file = f" writing {name.relative_to(store.folder)}" if name and name.is_relative_to(store.folder) else ""
    why, fix = refused_write(exc)
    then = (f"nothing was called, and the half-made folder is removed. {fix}, then: benchcard run {card_id}"
            if removed else f"nothing was called. {fix}, then: benchcard run {card_id} --resume {store.run_id}")
    return f"{project.relative(store.folder)}: the run could not be planned ({why}){file}; {then}"


async def _reopen(s: _Setting, t: _Target, provider: Provider) -> _Opened:
    """A resumed run, as its manifest records it."""
    assert t.store is not None and t.manifest is not None and t.rig is not None
    s.folders.append(t.store)
    if t.manifest.finished_at is None:
        await provider.prepare()  # the local model's preflight, before any cell is called
    return _Opened(t.store, t.manifest, t.rig, t.rig.model)


async def _call_cells(s: _Setting, t: _Target, opened: _Opened, session: Session, batch: bool,
                      capped: bool) -> _Outcome:
    """Call every cell without an outcome (a sequential card: look by look), then score, judge and close."""
    card, store, manifest = s.card, opened.store, opened.manifest
    resumed = t.manifest is not None
    total = int(manifest.cells or 0)
    called = 0
    looked: Looked | None = None
    judged: list[JudgeSummary] = []  # a sequential judge card: each stretch's judging
    with store.open_outputs() as writer:
        tally = Tally.of(store) if resumed else Tally()
        writer.on_append = tally.add  # kept as cells are written: no second pass over outputs at the end
        done = done_cells(store)  # a retry's reopened cells are called again

        paused: list[bool] = []  # a sequential judge card: the bar stopped while a stretch was judged

        async def call(skip: set[str]) -> int:  # the cells this call recorded (the writer counts them all)
            if paused:
                session.progress.start(label, total, len(done_cells(store)))
                paused.clear()
            before = writer.written
            await (run_batch(session, writer, skip) if batch else execute(session, writer, skip, s.stop_after))
            return writer.written - before

        if len(done) < total or card.sequential is not None:
            verb = ("resuming" if resumed else "run") + (" batch" if batch else "")
            note = f" · {capped_note(t.cfg.name, session.workers)}" if capped else ""
            where = s.project.relative(store.folder)
            label = f"{verb} {store.run_id} · {manifest.rig_line} → {where}{note}"
            session.progress.start(label, total, len(done))
            try:
                if card.sequential is None:
                    called = await call(done)
                else:
                    assert s.looker is not None
                    looked = await run_in_looks(card, store, manifest, s.looker, call, _look_scorer(
                        s, store, judged, session.progress, lambda: paused.append(True)))
                    called = looked.called
            finally:
                session.progress.stop()
                session.record_replies(writer)
        if looked is None or not looked.finished:
            session.raise_if_stopped("run", "cells", len(done) + writer.written, total,
                                     f"benchcard run {card.id} --resume {store.run_id}", tally.counts["failed"])
        if looked is not None:
            return await _close_looked(s, store, tally, called, looked, judged)
        if tally.seen < total:
            return _Outcome(manifest, tally, called)
        return await _score_and_close(s, store, manifest, tally, called)


def _look_scorer(s: _Setting, store: RunStore, judged: list[JudgeSummary], progress: Progress,
                 restart: Callable[[], None]) -> Callable[[int, tuple[int, int] | None], Awaitable[bool]]:
    """How a sequential run scores a stretch before its look: blind by the card's rules, or (a judge card) by
    judging the stretch's outputs, planned and sealed apart (`judge_run(look=…)`), the run's bar stopped meanwhile
    (`restart`: the next stretch's calls start it again); False while the judging is unfinished (its look waits
    for the resume)."""
    async def score(look: int, since: tuple[int, int] | None) -> bool:
        if s.card.judge_spec is None:
            score_blind(store.outputs_path, store.scores_path, s.card, s.project, since=since,
                        retried=bool(store.read_manifest().retries))
            return True
        progress.stop()  # the judging shows its own
        try:
            summary = await judge_run(s.project, s.card, store, s.options, s.config, s.config.prices,
                                      transport=s.transport, stream=s.stream, stop_after=s.stop_after, look=look)
        finally:
            restart()
        judged.append(summary)
        return summary.finished

    return score


async def _close_looked(s: _Setting, store: RunStore, tally: Tally, called: int, looked: Looked,
                        judged: list[JudgeSummary]) -> _Outcome:
    """A sequential run after its looks: closed once a look decided it or every look was taken (a judge card with
    its judging's totals), else left open for `--resume` as it stands."""
    judge = replace(judged[-1], called=sum(j.called for j in judged), wall_s=round(sum(j.wall_s for j in judged), 3)) \
        if judged else None
    if not looked.finished:
        return _Outcome(store.read_manifest(), tally, called, judge)
    if judge is None and s.card.judge_spec is not None:  # its last look was taken before a kill: judged whole
        judge = await judge_run(s.project, s.card, store, s.options, s.config, s.config.prices,
                                transport=s.transport, stream=s.stream, look=len(store.read_manifest().looks or []))
    return _Outcome(_close(store, tally, judge), tally, called, judge)


async def _score_and_close(s: _Setting, store: RunStore, manifest: Manifest, tally: Tally, called: int) -> _Outcome:
    """Every cell has an outcome: score blind (a judge card: judge), and close the manifest once that is done."""
    judge: JudgeSummary | None = None
    if s.card.judge_spec is not None:
        judge = await judge_run(s.project, s.card, store, s.options, s.config, s.config.prices,
                                transport=s.transport, stream=s.stream, stop_after=s.stop_after)
    else:
        score_blind(store.outputs_path, store.scores_path, s.card, s.project, retried=bool(manifest.retries),
                    since=scoring_since(manifest))
    if judge is None or judge.finished:
        manifest = _close(store, tally, judge)
    return _Outcome(manifest, tally, called, judge)


def _looks_line(manifest: Manifest) -> str:
    """A finished sequential run's looks in one line; empty for any other run."""
    if manifest.sequential is None or manifest.finished_at is None:
        return ""
    return stop_line(manifest.sequential, manifest.looks[-1] if manifest.looks else None)


def _close(store: RunStore, tally: Tally, judge: JudgeSummary | None = None) -> Manifest:
    """The manifest's closing fields, once every cell the run needs has an outcome and is scored (or judged)."""
    return store.add_to_manifest({
        "finished_at": utc_stamp(),
        "outputs_digest": file_digest(store.outputs_path),
        "scores_digest": file_digest(store.scores_path),
        "counts": tally.counts,
        **(judge_manifest_fields(store, judge) if judge is not None else {}),
    })


def _check_batch_resume(t: _Target, o: RunOptions) -> None:
    if t.manifest is not None and o.batch and not t.manifest.batch:
        raise RunError("this run was started interactively; resume it without --batch")


def _check_batch(t: _Target, o: RunOptions, provider: Provider) -> None:
    """--batch goes to OpenAI's or Anthropic's batch API, for a whole run: refuse anything else in one line."""
    where = f"provider '{t.cfg.name}'"
    _check_batch_resume(t, o)
    if isinstance(provider, PoolProvider):
        raise RunError(f"{where} is a pool of servers, which has no batch API; drop --batch")
    if t.cfg.type not in ("openai", "anthropic"):
        raise RunError(f"{where} is of type {t.cfg.type}, which has no batch API; --batch needs openai or anthropic")
    if is_openrouter(t.cfg):
        raise RunError(f"{where} (OpenRouter) has no batch API; use openai or anthropic with --batch")
