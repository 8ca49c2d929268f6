"""The judging pass of a judge card: every ok output judged k times by the card's sealed judge, blind.

It runs when every cell of the run has an outcome, as the scoring step, and is planned and stored like the
run itself (`_calls.py` does the calls):

- `sealed/judge-requests.jsonl`, written whole before the first judge call (beside `sealed/`, its digest recorded
  in the manifest's `judge` block, then renamed in: `_seal_judgements`): one row per judgement, `{cell (the
  judgement's own opaque id), output (the judged cell), judgement (0..k-1), fixture, redacted, provider, url,
  body}`. The order is a seeded shuffle of all (output, judgement) pairs, so the judge meets the variants mixed
  and never in the run's order. Each body holds one output, its fixture, its key and the rubric (the card's
  template, `scoring.judge._prompt`), with verbatim echoes of any variant's text removed; never the variant,
  its text, the run or the model under test (tests/run/test_judging.py checks every body).
- `judge-outputs.jsonl`: one row per finished judgement, the shape of `outputs.jsonl`, appended and flushed as it
  comes, so a killed pass resumes with the judgements it lacks (`run --resume`).
- `scores.jsonl` is then written from the outputs and the judge's answers: per output, each metric is the mean
  over its readable judgements. An output with none (every judgement failed in transport or answered off-form)
  gets no score row, and the verdict counts it as unscored rather than wrong.

The judge's calls are costed and counted apart from the model's (the manifest's `judge` block).
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Container, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import httpx
import msgspec

from benchcard._util.files import AtomicFile, move_into_place, synced_file
from benchcard._util.hashing import canonical_json, file_digest, seed_from
from benchcard._util.numfmt import dollars
from benchcard._util.urls import secrets_of
from benchcard.card.model import Card
from benchcard.errors import ProviderError, RunError
from benchcard.project import Project, ProjectConfig
from benchcard.records.rows import (
    JUDGE_REQUESTS,
    SEALED,
    STATUSES,
    AssignmentRow,
    JudgeRequestRow,
    JudgeStretch,
    Manifest,
    RequestRow,
    ScoreRow,
    dumps_line,
    rig_line,
    utc_stamp,
)
from benchcard.records.runreader import JudgeReader
from benchcard.run._calls import RateLimiter, Session, execute, make_client
from benchcard.run._headers import recorded_headers
from benchcard.run._pool import calls_in_flight, check_served, client_size, open_provider
from benchcard.run._progress import NullProgress, Progress, RichProgress
from benchcard.run._proxies import refusal
from benchcard.run.grid import CHARS_PER_TOKEN, grid_size
from benchcard.run.options import DEFAULT_CONCURRENCY, RunOptions
from benchcard.run.providers import Price, endpoint, price_gap, provider_config
from benchcard.run.providers.base import Provider, ProviderConfig
from benchcard.run.store import RunStore
from benchcard.scoring.judge import JudgeSpec, blind_output, judge_messages, read_judgements
from benchcard.scoring.judge.keys import key_text


def judge_config(spec: JudgeSpec, config: ProjectConfig) -> ProviderConfig:
    """The judge's provider as the project configures it; checked before the run's first call."""
    cfg = provider_config(spec.provider, config)
    if cfg.type != "local" and not cfg.base_url:
        raise ProviderError(f"the judge's provider '{cfg.name}' has no base_url; declare it in benchcard.yaml")
    return cfg


def refuse_judge_route(card: Card, cfg: ProviderConfig, client: httpx.AsyncClient) -> None:
    """A ProviderError naming the judge when `client` could not reach a server of the judge's provider (each of a
    pool's): its route is a proxy benchcard's client cannot use, a socks one (`_proxies.refusal`, the check the
    run's own provider makes when it is opened). Asked before the run's first call and before `check --live`'s, so
    that such a proxy stops the command at once, not when judging begins and the run's calls are spent."""
    for url in [e.url for e in cfg.endpoints] or [cfg.base_url or ""]:
        refused = refusal(client, httpx.URL(url)) if url else None  # the local judge: no server, no proxy
        if refused is not None:
            raise ProviderError(f"the judge of {card.id} (provider '{cfg.name}'): {refused}")


class JudgeStore(JudgeReader, RunStore):
    """The judge's calls in a run folder: the run store's append-and-flush, lock and torn-tail repair, over
    `judge-outputs.jsonl` (`records.runreader.JudgeReader`), its plan read as the runner's calls read cells."""

    COUNTED_ROWS = "judge_replied_rows"
    MOVED_ROWS = None

    def iter_sealed(self, skip: Container[str] = ()) -> Iterator[tuple[AssignmentRow, RequestRow]]:
        """Each planned judgement as the runner's calls read a cell: its id, its fixture and its body."""
        for row in self.iter_judge_requests():
            if row.cell not in skip:
                yield (AssignmentRow(cell=row.cell, variant="judge", fixture=row.fixture, repetition=row.judgement),
                       RequestRow(cell=row.cell, provider=row.provider, url=row.url, body=row.body))


@dataclass
class JudgeSummary:
    """What the judging pass did, counted apart from the model under test."""

    rig: str
    judgements: int
    per_output: int
    counts: dict[str, int]  # ok, truncated, failed
    unreadable: int
    called: int
    cost: float | None
    tokens: dict[str, int]
    finished: bool
    wall_s: float = 0.0  # this invocation's judging, planning included
    unjudged: int = 0  # ok outputs none of whose judgements could be read: left unscored
    price_note: str = ""  # why its cost is unknown, when no price of the judge model applies (price_gap)
    model: str = ""  # the judge's model, as its price is named
    # judgements whose cost priced input read from the prompt cache at the full input price (no `cached_input`):
    # the judge's cost is then an upper bound, said as the run's own is (docs/prices.md)
    cost_upper_bound: int = 0

    def line(self) -> str:
        c = self.counts
        cost = "cost unknown" if self.cost is None else ("≤ " if self.cost_upper_bound else "") + dollars(self.cost)
        if self.cost is None and self.price_note:
            cost += f" ({self.price_note})"
        state = "" if self.finished else f" · {self.judgements - _done(c)} missing"
        if self.unjudged:
            state += (f" · {self.unjudged} output(s) with no readable judgement, left unscored (the verdict counts "
                      "them with --allow-incomplete)")
        # an unreadable answer came back whole (ok in transport): each judgement is counted once, so they add up
        return (f"judge {self.rig}: {self.judgements} judgements ({self.per_output} per ok output): "
                f"{c['ok'] - self.unreadable} read as grades, {self.unreadable} unreadable, {c['truncated']} "
                f"truncated, {c['failed']} failed{state} · "
                f"{self.tokens['input']} + {self.tokens['output']} tokens · {cost} · {self.wall_s:.1f} s")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


async def judge_run(project: Project, card: Card, store: RunStore, options: RunOptions, config: ProjectConfig,
                    prices: Mapping[str, Price], *, transport: httpx.AsyncBaseTransport | None = None,
                    stream: IO[str] | None = None, stop_after: int | None = None,
                    look: int | None = None) -> JudgeSummary:
    """Plan (once), call and read the judgements of a run whose cells all have an outcome; writes scores.jsonl
    when every judgement has one. Resumable: only judgements without a row in judge-outputs.jsonl are called.
    `look`: a sequential run's stretch before that look is whole, and its ok outputs not yet planned are planned
    (once, sealed and digested like the first plan) and judged before the look is taken."""
    spec = card.judge_spec
    assert spec is not None
    wall = time.perf_counter()
    cfg = judge_config(spec, config)
    jstore = JudgeStore(store.folder)
    concurrency = options.concurrency or DEFAULT_CONCURRENCY
    client = make_client(client_size(cfg, concurrency), options.timeout, transport)
    # a pool (base_urls) spreads the judgements over its servers as a run's cells, with each server's width
    provider = open_provider(cfg, client, spec.model, concurrency)
    called = 0
    try:
        await check_served(provider, spec.model)
        manifest = store.read_manifest()
        if manifest.judge is None:  # not planned, or killed before the plan was recorded: no judge call yet
            await provider.prepare()
            rig_line = _seal_judgements(project, card, spec, store, jstore, provider, cfg, manifest)
        else:
            _finish_sealed(jstore, manifest)
            rig_line = manifest.judge.rig.line if manifest.judge.rig and manifest.judge.rig.line else spec.model
            if look is not None and look > _last_planned(manifest):  # a later stretch of a sequential run
                await provider.prepare()
                _seal_stretch(project, card, spec, store, jstore, provider, cfg, manifest, look)
        manifest = store.read_manifest()
        if manifest.judge is None or manifest.judge.judgements is None:
            raise RunError(f"{store.manifest_path}: field 'judge.judgements' is missing; the judging was never "
                           "planned")
        total = manifest.judgements_planned
        workers = calls_in_flight(provider, concurrency)
        progress: Progress = RichProgress(stream) if options.progress else NullProgress()
        session = Session(store=jstore, provider=provider, model=spec.model, prices=prices, options=options,
                          limiter=RateLimiter(options.rpm or cfg.requests_per_minute), progress=progress,
                          secret_env=cfg.api_key_env, hidden=secrets_of(cfg.credentials), workers=workers)
        with jstore.open_outputs() as writer:
            done = jstore.done_cells()
            if len(done) < total:
                progress.start(f"judging {store.run_id} · {rig_line} · {total} judgements", total, len(done))
                try:
                    called = await execute(session, writer, done, stop_after)
                finally:
                    progress.stop()
                    session.record_replies(writer, judge=True)
            session.raise_if_stopped("judging", "judgements", len(done) + writer.written, total,
                                     f"benchcard run {card.id} --resume {store.run_id}")
    finally:
        await provider.aclose()
        await client.aclose()
    judged = read_judgements(spec, jstore)
    summary = _summarise(jstore, spec, rig_line, total, called, judged, prices)
    if summary.finished:
        write_scores(store, judged)
    summary.wall_s = round(time.perf_counter() - wall, 3)
    return summary


def _seal_judgements(project: Project, card: Card, spec: JudgeSpec, store: RunStore, jstore: JudgeStore,
                     provider: Provider, cfg: ProviderConfig, manifest: Manifest) -> str:
    """Write `sealed/judge-requests.jsonl` and the manifest's `judge` block: the file whole and synced beside
    `sealed/`, its digest recorded in the manifest, then the file renamed into `sealed/` (`_finish_sealed`), so a
    kill at any instant leaves either no recorded plan (planned again) or one whose file can be completed."""
    seed = seed_from(manifest.seal_root) ^ int(manifest.seed or 0)
    tmp = _sealed_tmp(jstore, jstore.judge_requests_path)
    n = _write_judgements(project, card, spec, store, provider, cfg, seed, tmp, set(), set())
    model = provider.model_name if cfg.type == "local" else None
    rig = {"provider": cfg.name, "model": model or spec.model, "effort": spec.effort if cfg.type != "local" else None}
    rig["line"] = rig_line(str(rig["model"]), rig["effort"], None, cfg.name)
    pool = {"endpoints": [e.url for e in cfg.endpoints]} if cfg.endpoints else {}  # as a run's, never a password
    headers = recorded_headers(cfg)  # as a run's: a secret by its name alone (run/_headers.py)
    sent = {"headers": headers} if headers is not None else {}
    store.add_to_manifest({"judge": {
        "rig": rig, "provider_type": cfg.type, "base_url": cfg.base_url, **pool, **sent, "per_output": spec.judgements,
        "judgements": n, "seed": seed, "planned_at": utc_stamp(),
        "requests_digest": file_digest(tmp)}})
    _finish_sealed(jstore, store.read_manifest())
    return str(rig["line"])


def _seal_stretch(project: Project, card: Card, spec: JudgeSpec, store: RunStore, jstore: JudgeStore,
                  provider: Provider, cfg: ProviderConfig, manifest: Manifest, look: int) -> None:
    """A sequential run's later stretch: its ok outputs not yet planned, planned in a file of their own
    (`sealed/judge-requests-<look>.jsonl`) written, recorded in `judge_stretches` and renamed in as the first
    plan is, so no judgement already planned or made is ever changed, and a look taken is never reopened."""
    assert manifest.judge is not None and manifest.judge.seed is not None
    planned = list(jstore.iter_judge_requests())
    name = f"{SEALED}/{JUDGE_REQUESTS.removesuffix('.jsonl')}-{look}.jsonl"
    tmp = _sealed_tmp(jstore, jstore.folder / name)
    seed = (manifest.judge.seed + look) % 2**64
    n = _write_judgements(project, card, spec, store, provider, cfg, seed, tmp, {r.output for r in planned},
                    {r.cell for r in planned})
    store.append_judge_stretch(JudgeStretch(look=look, file=name, judgements=n, seed=seed, planned_at=utc_stamp(),
                                            requests_digest=file_digest(tmp)))
    _finish_sealed(jstore, store.read_manifest())


def _write_judgements(project: Project, card: Card, spec: JudgeSpec, store: RunStore, provider: Provider,
                      cfg: ProviderConfig, seed: int, tmp: Path, planned: set[str], seen: set[str]) -> int:
    """The judging plan of every ok output not in `planned`, written whole and synced to `tmp`: a seeded
    shuffle of its (output, judgement) pairs, each body blind (`scoring.judge.blind_output`). Returns its rows."""
    keys = card.answer_keys(project.keys_dir(card.id), spec) if spec.uses_key else {}
    variant_texts = list(card.variants.values())
    outputs = {row.cell: row for row in store.iter_outputs() if row.status == "ok" and row.cell not in planned}
    rng = random.Random(seed)
    pairs = [(cell, k) for cell in sorted(outputs) for k in range(spec.judgements)]
    rng.shuffle(pairs)
    url = endpoint(cfg)
    occurrences: dict[bytes, int] = defaultdict(int)
    with synced_file(tmp) as fh:  # moved into sealed/ by _finish_sealed once its digest is in the manifest
        for cell, k in pairs:
            out = outputs[cell]
            fixture = out.fixture
            blinded = blind_output(out.text, variant_texts)
            fixture_text = card.fixture_text(fixture) if card.is_ab and spec.uses_fixture else ""
            messages = judge_messages(spec, blinded.text, fixture_text, key_text(keys.get(fixture)))
            body = provider.build_body(spec.model, messages, spec.params, spec.effort)
            if provider.plans_bodies:
                identity = canonical_json(body)
                body = provider.planned_body(body, occurrences[identity])
                occurrences[identity] += 1
            jid = _judgement_id(rng, seen)
            fh.write(dumps_line(JudgeRequestRow(cell=jid, output=cell, judgement=k, fixture=fixture,
                                                redacted=blinded.removed, provider=cfg.name, url=url, body=body)))
    return len(pairs)


def _last_planned(manifest: Manifest) -> int:
    """The look whose stretch was planned last (1: the first plan, made at the first look or for a whole run)."""
    return manifest.judge_stretches[-1].look if manifest.judge_stretches else 1


def _sealed_tmp(jstore: JudgeStore, path: Path) -> Path:
    """Where a judging plan is written before it is recorded: beside `sealed/`, never inside it."""
    return jstore.folder / (path.name + ".tmp")


def _finish_sealed(jstore: JudgeStore, manifest: Manifest) -> None:
    """Rename each recorded plan into `sealed/` if a kill left it beside; refuse one that is missing or differs."""
    recorded = [(jstore.judge_requests_path, manifest.judge.requests_digest if manifest.judge else None)]
    recorded += [(jstore.folder / s.file, s.requests_digest) for s in manifest.judge_stretches or []]
    for path, digest in recorded:
        if path.is_file():
            continue
        tmp = _sealed_tmp(jstore, path)
        if not tmp.is_file() or file_digest(tmp) != digest:
            raise RunError(f"{path}: missing, and no written plan matches the manifest's requests_digest {digest}")
        move_into_place(tmp, path)


def _judgement_id(rng: random.Random, seen: set[str]) -> str:
    while True:
        jid = f"j{rng.getrandbits(40):010x}"
        if jid not in seen:
            seen.add(jid)
            return jid


def _summarise(jstore: JudgeStore, spec: JudgeSpec, rig_line: str, total: int, called: int,
               judged: Mapping[str, list[dict[str, float] | None]], prices: Mapping[str, Price]) -> JudgeSummary:
    counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
    cost, priced, upper = 0.0, False, 0
    tokens = {"input": 0, "output": 0}
    for row in jstore.iter_outputs():
        counts[row.status] += 1
        if row.cost is not None:
            cost += row.cost
            priced = True
            upper += row.cost_upper_bound is True
        tokens["input"] += row.usage.input
        tokens["output"] += row.usage.output
    finished = _done(counts) >= total
    unreadable = counts["ok"] - sum(g is not None for grades in judged.values() for g in grades)
    return JudgeSummary(rig=rig_line, judgements=total, per_output=spec.judgements, counts=counts,
                        unreadable=unreadable, called=called, cost=round(cost, 6) if priced else None,
                        tokens=tokens, finished=finished,
                        unjudged=sum(all(g is None for g in grades) for grades in judged.values()) if finished else 0,
                        price_note="" if priced or not counts["ok"] + counts["truncated"] else price_gap(spec.model,
                                                                                                        prices),
                        model=spec.model, cost_upper_bound=upper)


def _done(counts: dict[str, int]) -> int:
    return counts["ok"] + counts["truncated"] + counts["failed"]


def write_scores(store: RunStore, judged: Mapping[str, list[dict[str, float] | None]]) -> int:
    """scores.jsonl from outputs.jsonl and the judgements: per output, each metric's mean over its readable
    judgements; truncated and failed outputs get a null score, outputs with no readable judgement no row."""
    written = 0
    with AtomicFile(store.scores_path) as fh:
        for out in store.iter_outputs():
            if out.status != "ok":
                row = ScoreRow(cell=out.cell, fixture=out.fixture, status=out.status, score=None, metrics={},
                               rules=None)
            else:
                grades = [g for g in judged.get(out.cell, []) if g is not None]
                if not grades:
                    continue
                means = {name: sum(g[name] for g in grades) / len(grades) for name in grades[0]}
                row = ScoreRow(cell=out.cell, fixture=out.fixture, status="ok", score=means["score"],
                               metrics=dict(means), rules=None)
            fh.write(dumps_line(row))
            written += 1
    return written


def judge_manifest_fields(store: RunStore, summary: JudgeSummary) -> dict[str, Any]:
    """What the manifest's closing adds for the judge: the digest of its outputs and its own totals."""
    return {"judge_outputs_digest": file_digest(JudgeStore(store.folder).outputs_path),
            "judge_counts": {**summary.counts, "unreadable": summary.unreadable},
            "judge_cost": summary.cost, "judge_tokens": summary.tokens,
            "judge_cost_upper_bound": True if summary.cost is not None and summary.cost_upper_bound else None}


class JudgeEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """`benchcard plan`'s figures for a judge card's judging (its `judge`), in the order `--json` prints them."""

    rig: str
    per_output: int  # judgements of each ok output
    calls: int
    input_tokens: int
    max_output_tokens: int
    max_cost: float | None  # None: no price configured for the judge's model


def judge_estimate(project: Project, card: Card, prices: Mapping[str, Price]) -> JudgeEstimate | None:
    """The judging a run of a judge card will take at most (every output ok, each judged k times): calls, input
    tokens (characters / 4 of the filled template, plus the judged output at its max_tokens), output tokens, cost.
    None for other cards."""
    spec = card.judge_spec
    if spec is None:
        return None
    keys = card.answer_keys(project.keys_dir(card.id), spec) if spec.uses_key else {}
    per_output = int(card.params["max_tokens"])
    input_tokens = 0
    for fixture in card.fixture_ids():
        text = card.fixture_text(fixture) if card.is_ab and spec.uses_fixture else ""
        chars = sum(len(m["content"]) for m in judge_messages(spec, "", text, key_text(keys.get(fixture))))
        input_tokens += (-(-chars // CHARS_PER_TOKEN) + per_output) * len(card.variant_names()) * card.repetitions
    calls = grid_size(card) * spec.judgements
    input_tokens *= spec.judgements
    max_output = int(spec.params["max_tokens"]) * calls
    price = prices.get(spec.model)
    local = spec.provider == "local"
    cost = 0.0 if local else (None if price is None else (input_tokens * price.input + max_output * price.output)
                              / 1_000_000)
    return JudgeEstimate(rig=f"{spec.model} · {spec.provider}", per_output=spec.judgements, calls=calls,
                         input_tokens=input_tokens, max_output_tokens=max_output, max_cost=cost)


def judge_plan_lines(judge: JudgeEstimate | None) -> list[str]:
    """`benchcard plan`'s lines for the judge, counted apart from the model under test."""
    if judge is None:
        return []
    cost = ("no price configured for the judge's model" if judge.max_cost is None
            else f"cost ≤ {dollars(judge.max_cost)}")
    return [f"judge           ≤ {judge.calls:,} calls ({judge.per_output} per ok output) · {judge.rig} · "
            f"input ~{judge.input_tokens:,} tokens · output ≤ {judge.max_output_tokens:,} tokens · {cost}"]
