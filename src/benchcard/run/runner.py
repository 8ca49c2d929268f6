"""`benchcard run`: plan the grid, call the model for every cell, record each outcome, score blind at the end.

This module carries a run from the card to the finished folder: the rig it uses (a card's, or the one given
with --provider/--model/--base-url), the plan written before the first call, the calls (`calls.py`: one client,
N workers, retries, one row per cell), the blind scoring and the manifest's closing fields. N is `--concurrency`,
capped at a provider's `max_concurrency` (the local model's 1) so that no cell's latency counts time spent
queued. Model output is data: it is stored byte for byte and never executed or interpreted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import httpx

from benchcard._util.hashing import file_digest
from benchcard._util.version import __version__
from benchcard.card import seal as sealmod
from benchcard.card.load import load_card, resolve_card_path
from benchcard.card.model import Card, Rig
from benchcard.errors import ProviderError, RunError, SealError
from benchcard.project import Project
from benchcard.run.batch import run_batch
from benchcard.run.calls import RateLimiter, Session, execute, make_client, workers_for
from benchcard.run.grid import default_seed, plan_cells, plan_rows
from benchcard.run.judging import JudgeSummary, judge_config, judge_manifest_fields, judge_run, judge_spec
from benchcard.run.options import RunOptions
from benchcard.run.plandigest import plan_problems, seal_plan
from benchcard.run.pool import PoolProvider, pool_capacity
from benchcard.run.progress import NullProgress, Progress, RichProgress
from benchcard.run.providers import (
    Price,
    endpoint,
    load_config,
    make_provider,
    price_table,
    provider_config,
    require_key,
)
from benchcard.run.providers.base import Provider, ProviderConfig
from benchcard.run.providers.openai import is_openrouter
from benchcard.run.rows import Counts, OutputRow, new_run_id, utc_stamp
from benchcard.run.store import RunStore
from benchcard.scoring.keys import load_keys
from benchcard.scoring.scorers import score_run


@dataclass
class RunSummary:
    """What one run did; `--json` prints a list of these."""

    run: str
    folder: str
    card: str
    version: int
    rig: str
    provider: str
    model: str
    cells: int
    counts: Counts
    missing: int
    cost: float | None
    cost_unknown: int
    wall_s: float
    called: int
    finished: bool
    resumed: bool
    seed: int | None = None
    concurrency: int = 0  # calls in flight at most: --concurrency, capped by the provider (`workers_for`)
    judge: JudgeSummary | None = None  # a judge card's judging pass, counted apart from the model's calls
    batch: bool = False  # through the vendor's batch API

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------------------------------------ scoring


def score_blind(outputs_path: Path, scores_path: Path, card: Card, project: Project) -> int:
    """Score a run from `outputs.jsonl`, the keys and the fixtures alone: no assignment, request, manifest
    or model reaches the scorer (tests/test_runner.py checks which files it opens). Returns the rows written."""
    keys = load_keys(card.scoring, project.keys_dir(card.id), card.fixture_ids())
    texts = {f: card.fixture_text(f) for f in card.fixture_ids()} if card.is_ab else {}
    return score_run(outputs_path, scores_path, card.scoring, keys, texts)


# ------------------------------------------------------------------------------------------------- the run


@dataclass
class _Target:
    """One run to carry out: a new one (store None until planned) or one being resumed."""

    cfg: ProviderConfig
    model: str | None
    rig: Rig | None = None
    store: RunStore | None = None
    manifest: dict[str, Any] | None = None


def run(project: Project, card_name: str, options: RunOptions, *, transport: httpx.AsyncBaseTransport | None = None,
        stream: IO[str] | None = None, stop_after: int | None = None) -> list[RunSummary]:
    """Run (or resume) a card: one run per model. The core of `benchcard run`.

    `transport` replaces the network (tests); `stream` takes the progress bar (default stderr);
    `stop_after` stops each run after that many calls, as a kill would (benchmarks of resume).
    """
    _check_options(options)
    card = load_card(resolve_card_path(project, card_name), project)
    seal_root = sealmod.verify(card, project)
    config = load_config(project.root)
    prices = price_table(config)
    targets = _targets(project, card, options, config, seal_root)
    for t in targets:
        require_key(t.cfg)
    spec = judge_spec(card)
    if spec is not None:
        require_key(judge_config(spec, config))
    state: dict[str, Any] = {}
    try:
        return asyncio.run(_run_all(project, card, seal_root, targets, options, prices, transport, stream,
                                    stop_after, state))
    except KeyboardInterrupt:
        store: RunStore | None = state.get("store")
        if store is None:
            raise RunError("interrupted before the first run was planned; nothing was called") from None
        raise RunError(
            f"interrupted; every finished cell is recorded. Continue with: "
            f"benchcard run {card.id} --resume {store.run_id}"
        ) from None


def _check_options(o: RunOptions) -> None:
    if o.concurrency < 1:
        raise RunError("--concurrency must be at least 1")
    if o.attempts < 1:
        raise RunError("--attempts must be at least 1")
    if o.timeout <= 0:
        raise RunError("--timeout must be a positive number of seconds")
    if o.rpm is not None and o.rpm <= 0:
        raise RunError("--rpm must be a positive number of requests per minute")
    if o.resume and (len(o.models) > 1):
        raise RunError("--resume continues one run; drop the extra --model options")
    if len(set(o.models)) != len(o.models):
        raise RunError("the same --model is named twice")


def _targets(project: Project, card: Card, o: RunOptions, config: Mapping[str, Any], seal_root: str) -> list[_Target]:
    if o.resume is None:
        cfg = provider_config(o.provider or card.rig.provider, config, o.base_url)
        if cfg.type != "local" and not cfg.base_url:
            raise ProviderError(f"provider '{cfg.name}' has no base_url; set one with --base-url")
        models: list[str | None] = list(o.models) or [card.rig.model if cfg.type != "local" else None]
        return [_Target(cfg, m) for m in models]
    store = RunStore.find(project, card.id, card.version, o.resume)
    if not store.has_manifest():
        # killed while planning: no call was made, so planning again in the same folder loses nothing
        cfg = provider_config(o.provider or card.rig.provider, config, o.base_url)
        model = o.models[0] if o.models else (card.rig.model if cfg.type != "local" else None)
        return [_Target(cfg, model, store=store)]
    manifest = store.read_manifest()
    where = project.relative(store.folder)
    if manifest.get("card") != card.id or manifest.get("version") != card.version:
        raise RunError(f"{where}: this run is of {manifest.get('card')} v{manifest.get('version')}, "
                       f"not {card.id} v{card.version}")
    if manifest.get("seal_root") != seal_root:
        raise SealError(f"{where}: the run was planned under seal {manifest.get('seal_root')}, the card is now "
                        f"sealed as {seal_root}; a run never spans two versions")
    problems = plan_problems(store.folder, manifest)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise SealError(f"{where}: {problems[0]}{more}; a run is only continued with the plan it was sealed with")
    rig = manifest["rig"]
    for flag, given, recorded in (("--provider", o.provider, rig["provider"]),
                                  ("--model", o.models[0] if o.models else None, rig["model"]),
                                  ("--base-url", o.base_url.rstrip("/") if o.base_url else None, manifest["base_url"])):
        if given is not None and given != recorded:
            raise RunError(f"{where}: the run was started with {flag} {recorded}; a resumed run keeps its rig "
                           f"(drop {flag})")
    # a pool is resumed on the pool configured now (servers may have been added); one server keeps its URL
    cfg = provider_config(rig["provider"], config, None if manifest.get("endpoints") else manifest.get("base_url"))
    if cfg.type != manifest.get("provider_type"):
        raise RunError(f"{where}: provider '{cfg.name}' is now of type {cfg.type}, the run used "
                       f"{manifest.get('provider_type')}")
    return [_Target(cfg, rig["model"], Rig(rig["provider"], rig["model"], rig.get("effort"), rig.get("surface")),
                    store, manifest)]


async def _run_all(project: Project, card: Card, seal_root: str, targets: list[_Target], o: RunOptions,
                   prices: Mapping[str, Price], transport: httpx.AsyncBaseTransport | None, stream: IO[str] | None,
                   stop_after: int | None, state: dict[str, Any]) -> list[RunSummary]:
    size = max([o.concurrency, *(pool_capacity(t.cfg, o.concurrency) for t in targets)])
    client = make_client(size, o.timeout, transport)
    summaries = []
    try:
        for target in targets:
            provider: Provider = (PoolProvider(target.cfg, client, o.concurrency) if target.cfg.endpoints
                                  else make_provider(target.cfg, client, target.model))
            try:
                summaries.append(await _run_one(project, card, seal_root, target, provider, o, prices, stream,
                                                stop_after, state, transport))
            finally:
                await provider.aclose()
    finally:
        await client.aclose()
    return summaries


def capped_note(provider: str, workers: int) -> str:
    return f"{workers} call{'s' if workers > 1 else ''} at a time (provider '{provider}' takes no more)"


def _local_model_name(provider: Provider) -> str:
    for attr in ("model_name", "model"):
        value = getattr(provider, attr, None)
        if isinstance(value, str) and value:
            return value
    return "local"


async def _run_one(project: Project, card: Card, seal_root: str, t: _Target, provider: Provider, o: RunOptions,
                   prices: Mapping[str, Price], stream: IO[str] | None, stop_after: int | None,
                   state: dict[str, Any], transport: httpx.AsyncBaseTransport | None = None) -> RunSummary:
    wall = time.perf_counter()
    resumed = t.manifest is not None
    batch = bool(t.manifest.get("batch")) if t.manifest is not None else o.batch
    if batch or o.batch:
        _check_batch(t, o, provider)
    workers = workers_for(provider, o.concurrency)
    if isinstance(provider, PoolProvider):  # each server takes its own number of calls
        workers = provider.max_concurrency
        await provider.check_models(t.model or t.cfg.name)
    if t.manifest is None:
        model = t.model or _local_model_name(provider)
        surface = card.rig.surface if t.cfg.name == card.rig.provider else None
        # effort means nothing to the embedded model (local.build_body sends none), so its rig line claims none
        rig = Rig(t.cfg.name, model, card.rig.effort if t.cfg.type != "local" else None, surface)
        started = datetime.now(UTC)
        seed = o.seed if o.seed is not None else default_seed(seal_root, started)
        cells = plan_cells(card, seed)
        url = endpoint(t.cfg)
        rows = plan_rows(card, cells, provider, model, url)
        first = next(rows)  # builds one body before any folder exists: a card the provider refuses leaves none
        prepare = getattr(provider, "prepare", None)  # the local model loads here: a bad file leaves no folder
        if prepare is not None:
            await prepare()
        store = t.store or RunStore.create(project, card.id, card.version, new_run_id(started))
        state["store"] = store

        def all_rows() -> Any:
            yield first
            yield from rows

        n = store.write_plan(all_rows())
        manifest: dict[str, Any] = {
            "run": store.run_id,
            "card": card.id,
            "version": card.version,
            "kind": card.kind,
            "seal_root": seal_root,
            "rig": {"provider": rig.provider, "model": rig.model, "effort": rig.effort, "surface": rig.surface,
                    "line": rig.line()},
            "provider_type": t.cfg.type,
            "base_url": t.cfg.base_url,
            **({"endpoints": [e.url for e in t.cfg.endpoints]} if t.cfg.endpoints else {}),
            "params": dict(card.params),
            "seed": seed,
            "repetitions": card.repetitions,
            "cells": n,
            "concurrency": workers,
            **({"batch": True} if batch else {}),
            "benchcard_version": __version__,
            "started_at": utc_stamp(started),
        }
        manifest.update(seal_plan(store.folder, manifest))
        store.write_manifest(manifest)
        del cells
    else:
        assert t.store is not None and t.rig is not None
        store, manifest, rig, model = t.store, t.manifest, t.rig, t.rig.model
        state["store"] = store
        prepare = getattr(provider, "prepare", None)  # the local model's preflight, before any cell is called
        if prepare is not None and "finished_at" not in manifest:
            await prepare()

    total = int(manifest["cells"])
    progress: Progress = RichProgress(stream) if o.progress else NullProgress()
    session = Session(store=store, provider=provider, model=model, prices=prices, options=o,
                       limiter=RateLimiter(o.rpm or t.cfg.requests_per_minute), progress=progress,
                       secret_env=t.cfg.api_key_env, workers=workers)
    called = 0
    judge: JudgeSummary | None = None
    if "finished_at" not in manifest:
        with store.open_outputs() as writer:
            tally = _Tally.of(store) if resumed else _Tally(Counts(ok=0, truncated=0, failed=0))
            writer.on_append = tally.add  # kept as cells are written: no second pass over outputs at the end
            done = store.done_cells()
            if len(done) < total:
                verb = ("resuming" if resumed else "run") + (" batch" if batch else "")
                capped = f" · {capped_note(t.cfg.name, workers)}" if workers < o.concurrency else ""
                progress.start(f"{verb} {store.run_id} · {rig.line()} → {project.relative(store.folder)}{capped}",
                               total, len(done))
                try:
                    called = await (run_batch(session, writer, done) if batch
                                    else execute(session, writer, done, stop_after))
                finally:
                    progress.stop()
            if session.fatal is not None:
                raise RunError(f"{session.fatal}; the run stopped with {len(done) + writer.written} of {total} "
                               f"cells recorded. Fix the cause, then: benchcard run {card.id} --resume "
                               f"{store.run_id}")
            if tally.seen >= total:  # every cell has an outcome: score blind (a judge card: judge) and close
                if judge_spec(card) is not None:
                    judge = await judge_run(project, card, store, o, load_config(project.root), prices,
                                            transport=transport, stream=stream, stop_after=stop_after)
                else:
                    score_blind(store.outputs_path, store.scores_path, card, project)
                if judge is None or judge.finished:
                    manifest = store.add_to_manifest({
                        "finished_at": utc_stamp(),
                        "outputs_digest": file_digest(store.outputs_path),
                        "scores_digest": file_digest(store.scores_path),
                        "counts": tally.counts,
                        **(judge_manifest_fields(store, judge) if judge is not None else {}),
                    })
    else:
        tally = _Tally.of(store)
    return RunSummary(
        run=store.run_id, folder=project.relative(store.folder), card=str(manifest["card"]),
        version=int(manifest["version"]), rig=rig.line(), provider=rig.provider, model=rig.model, cells=total,
        counts=tally.counts, missing=max(0, total - tally.seen), cost=round(tally.cost, 6) if tally.priced else None,
        cost_unknown=tally.unpriced, wall_s=round(time.perf_counter() - wall, 3), called=called,
        finished="finished_at" in manifest, resumed=resumed, seed=manifest.get("seed"), concurrency=workers,
        judge=judge,
        batch=batch,
    )


def _check_batch(t: _Target, o: RunOptions, provider: Provider) -> None:
    """--batch goes to OpenAI's or Anthropic's batch API, for a whole run: refuse anything else in one line."""
    where = f"provider '{t.cfg.name}'"
    if t.manifest is not None and o.batch and not t.manifest.get("batch"):
        raise RunError("this run was started interactively; resume it without --batch")
    if isinstance(provider, PoolProvider):
        raise RunError(f"{where} is a pool of servers, which has no batch API; drop --batch")
    if t.cfg.type not in ("openai", "anthropic"):
        raise RunError(f"{where} is of type {t.cfg.type}, which has no batch API; --batch needs openai or anthropic")
    if is_openrouter(t.cfg):
        raise RunError(f"{where} (OpenRouter) has no batch API; use openai or anthropic with --batch")


@dataclass
class _Tally:
    """One pass over outputs.jsonl: counts by status and the cost so far."""

    counts: Counts
    seen: int = 0
    cost: float = 0.0
    priced: int = 0
    unpriced: int = 0  # answered cells with no reported cost and no configured price

    @classmethod
    def of(cls, store: RunStore) -> _Tally:
        t = cls(Counts(ok=0, truncated=0, failed=0))
        for row in store.iter_outputs():
            t.add(row)
        return t

    def add(self, row: OutputRow) -> None:
        self.seen += 1
        if row["status"] in self.counts:
            self.counts[row["status"]] += 1  # type: ignore[literal-required]
        if row["cost"] is not None:
            self.cost += row["cost"]
            self.priced += 1
        elif row["status"] != "failed":
            self.unpriced += 1
