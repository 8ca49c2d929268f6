"""`benchcard check --live`: a judge card's worked examples sent to the real judge, each judged k times.

Offline, `check` reads the answers recorded in the card (`card/judgecheck.py`); live, the judge itself must give
every example its expected grade in each of its k judgements. The answers are printed as they came, so they can
be recorded in the card's `judge_answers`. Calls go through the runner's calls (`calls.call_cell`: retries,
backoff, the key scrubbed from errors), all of a card's at once within the judge's calls in flight; nothing is
written to disk.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchcard._util.urls import secrets_of, shown_url
from benchcard.card.check import CheckReport, check
from benchcard.card.judgecheck import example_prompt, expectation_problem, fixture_problem
from benchcard.card.model import Card, Example
from benchcard.errors import Fatal, ProviderError, UnreadableAnswer
from benchcard.project import Project, ProjectConfig
from benchcard.records.answerkey import AnswerKey
from benchcard.records.rows import OutputRow
from benchcard.run._calls import Job, RateLimiter, Session, call_cell, make_client
from benchcard.run._conventions import load_dotenv_keys
from benchcard.run._pool import calls_in_flight, check_served, client_size, open_provider
from benchcard.run._preflight import Preflight, local_rigs, preflight_local
from benchcard.run._progress import NullProgress
from benchcard.run.judging import judge_config, refuse_judge_route
from benchcard.run.options import DEFAULT_CONCURRENCY, RunOptions
from benchcard.run.providers import require_key
from benchcard.run.providers.base import Provider, ProviderConfig
from benchcard.run.store import RunStore
from benchcard.scoring.judge import read_answer

#: Calls timed out in a row, with no answer at all from the judge's server, that stop `check --live`: a check has no
#: run to protect, and its calls are few, so the run's rule (`_calls.SILENT_CELLS`: 9 calls here, 18
#: minutes at the default timeout) would keep a user waiting for what two calls have shown.
CHECK_SILENT_CALLS = 2


@dataclass(frozen=True)
class LiveExample:
    card: str
    label: str
    answers: tuple[str, ...]
    problem: str  # "" when every judgement gave the expected grade


@dataclass(frozen=True)
class LiveReport:
    examples: tuple[LiveExample, ...]

    @property
    def ok(self) -> bool:
        return not any(e.problem for e in self.examples)

    def lines(self) -> list[str]:
        out = []
        for e in self.examples:
            out.append(f"{'FAIL' if e.problem else 'ok  '} judge of {e.card}: example '{e.label}'"
                       + (f": {e.problem}" if e.problem else ""))
            out.append(f"     judge_answers: {json.dumps(list(e.answers), ensure_ascii=False)}")
        return out or ["no judge card to check live"]


#: What a failed preflight adds: the cards can be checked without their rig (a CI job running them elsewhere).
NO_RIG_HINT = ("(to check the cards without starting their rig, e.g. in a CI job that runs them on another "
               "provider: benchcard check --no-rig)")


@dataclass(frozen=True)
class ModelChecks:
    """What `check` asked of models beyond the cards themselves (`check_calls`), as one report: its lines for a
    person, its part of `check --json`, and whether any failed."""

    skipped: tuple[tuple[str, str], ...] = ()  # (provider, model) of local rigs not started: --no-rig
    preflights: tuple[Preflight, ...] = ()
    notes: tuple[str, ...] = ()  # with --live: the API keys read from .env, named, never their values
    live: LiveReport | None = None

    @property
    def failed(self) -> bool:
        return any(p.problem is not None for p in self.preflights) or (self.live is not None and not self.live.ok)

    def lines(self) -> list[str]:
        out = [f"skip local model {m} ({p}): not started (--no-rig)" for p, m in self.skipped]
        out += [f"{'FAIL' if p.problem else 'ok  '} local model {p.model} ({p.provider}): "
                + (f"{p.problem} {NO_RIG_HINT}" if p.problem else "loaded and answered a one-token call")
                for p in self.preflights]
        return out + ([*self.notes, *self.live.lines()] if self.live is not None else [])

    def to_json(self) -> dict[str, Any]:
        """What `check --json` adds to the cards' report: the local models (each started or not, and what went
        wrong) and the live examples, each only when there was one to ask."""
        local = [{"provider": p, "model": m, "started": False, "ok": True, "problem": None} for p, m in self.skipped]
        local += [{"provider": p.provider, "model": p.model, "started": True, "ok": p.problem is None,
                   "problem": p.problem} for p in self.preflights]
        live = None if self.live is None else [
            {"card": e.card, "example": e.label, "ok": not e.problem, "problem": e.problem or None,
             "judge_answers": list(e.answers)} for e in self.live.examples]
        return {**({"local_models": local} if local else {}), **({"live": live} if live is not None else {})}


def check_calls(project: Project, cards: Sequence[Card], live: bool, rig: bool = True) -> ModelChecks:
    """What `check` asks of models beyond the cards themselves: each local model loaded once (`_preflight.py`)
    unless `rig` is False (`--no-rig`: nothing is started, and the report says so), and with `--live` the judges
    of judge cards."""
    skipped = () if rig else tuple(local_rigs(project, cards))
    preflights = tuple(preflight_local(project, cards)) if rig else ()
    if not live:
        return ModelChecks(skipped, preflights)
    notes = tuple(load_dotenv_keys(project.root, project.config()))  # keys from .env, said
    return ModelChecks(skipped, preflights, notes, live_check(project, cards))


@dataclass(frozen=True)
class FullCheck:
    """`benchcard check` whole: the cards' own report, then what was asked of models (nothing when a card failed)."""

    cards: CheckReport
    models: ModelChecks

    @property
    def ok(self) -> bool:
        return self.cards.ok and not self.models.failed

    def to_json(self) -> dict[str, Any]:
        """`check --json`: the cards, then the models asked, and `ok` false when any of them failed."""
        return {**self.cards.to_json(), **self.models.to_json(), "ok": self.ok}


def check_all(project: Project, names: Sequence[str], live: bool, rig: bool = True,
              cards_checked: Callable[[CheckReport], None] = lambda _: None) -> FullCheck:
    """The cards checked (`card/check.py`), then, if they pass, their models (`check_calls`). `cards_checked`
    gets the cards' report before any model is loaded, which takes a while, so a person sees it at once. The
    project's benchcard.yaml is read first: a bad one is the one line said, never after "1 card(s) ok"."""
    project.config()
    checked = check(project, names)
    cards_checked(checked)
    usable = [r.card for r in checked.cards if r.card]
    return FullCheck(checked, check_calls(project, usable, live, rig) if checked.ok else ModelChecks())


def live_check(project: Project, cards: Sequence[Card], options: RunOptions | None = None) -> LiveReport:
    """Send every judge card's worked examples to its judge; cards of other methods are passed over."""
    options = options or RunOptions(progress=False)
    config = project.config()
    results: list[LiveExample] = []
    for card in cards:
        spec = card.judge_spec
        if spec is None:
            continue
        cfg = judge_config(spec, config)
        require_key(cfg)
        results += asyncio.run(_card(project, card, cfg, config, options))
    return LiveReport(tuple(results))


async def _card(project: Project, card: Card, cfg: Any, config: ProjectConfig,
                options: RunOptions) -> list[LiveExample]:
    """Every judgement of the card's examples sent at once, within the judge's calls in flight (a pool's servers'
    widths together, else the run's default concurrency; the local model one at a time), so that a check waits
    about one call's time, not the sum of them all; each example's answers kept in judgement order."""
    spec = card.judge_spec
    assert spec is not None
    keys = card.answer_keys(project.keys_dir(card.id), spec) if spec.uses_key else {}
    concurrency = options.concurrency or DEFAULT_CONCURRENCY
    client = make_client(client_size(cfg, concurrency), options.timeout)
    try:  # a route the client cannot use (a socks proxy): one line naming the judge, before any call
        refuse_judge_route(card, cfg, client)
        # a pool's (base_urls): each call to its least-loaded healthy server, so the examples go round its servers
        provider = open_provider(cfg, client, spec.model, concurrency)
    except BaseException:
        await client.aclose()
        raise
    # call_cell reads no store; the session's is the project's results folder, never written here
    session = Session(store=RunStore(project.results_dir), provider=provider, model=spec.model,
                      prices=config.prices, options=options, limiter=RateLimiter(cfg.requests_per_minute),
                      progress=NullProgress(), secret_env=cfg.api_key_env,
                      hidden=secrets_of(cfg.credentials),
                      longer_answers=f"check --live waits {options.timeout:g} s for each answer, and no longer",
                      silent_stop=CHECK_SILENT_CALLS, server=_server(cfg),
                      workers=calls_in_flight(provider, concurrency))
    try:
        await check_served(provider, spec.model)
        problems = [fixture_problem(card, example, keys, i) for i, example in enumerate(card.examples)]
        jobs = [[_job(card, provider, keys, i, k) for k in range(spec.judgements if not problems[i] else 0)]
                for i in range(len(card.examples))]
        rows = await _all(_judgement(session, job) for example in jobs for job in example)
    finally:
        await provider.aclose()
        await client.aclose()
    if session.halted:
        raise ProviderError(f"the judge of {card.id}: {session.fatal or session.stopped}")
    answered = iter(rows)
    by_example = [[next(answered) for _ in judgements] for judgements in jobs]
    return [_example(card, example, problems[i], [row for row in by_example[i] if row is not None])
            for i, example in enumerate(card.examples)]


def _job(card: Card, provider: Provider, keys: Mapping[str, AnswerKey], i: int, k: int) -> Job:
    """Judgement `k` of example `i`: its body as the provider sends it (planned apart when it plans bodies)."""
    spec = card.judge_spec
    assert spec is not None
    example = card.examples[i]
    body = provider.build_body(spec.model, example_prompt(card, example, keys), spec.params, spec.effort)
    sent = provider.planned_body(body, k) if provider.plans_bodies else body
    return Job(f"example-{i}-{k}", example.fixture or card.id, dict(sent))


async def _all(calls: Iterable[Coroutine[Any, Any, OutputRow | None]]) -> list[OutputRow | None]:
    """The calls run together, their rows in order; an error in one (the pool's, a run-level one) ends the others
    before the provider they share is closed."""
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _judgement(session: Session, job: Job) -> OutputRow | None:
    """One judgement through the runner's calls; None when the check stopped, a fatal error (a key refused)
    stopping the others too (`Session.fail`: none is sent after it)."""
    try:
        return await call_cell(session, job)
    except Fatal as exc:
        session.fail(str(exc))
        return None


def _example(card: Card, example: Example, problem: str, rows: list[OutputRow]) -> LiveExample:
    """An example's report: its answers in judgement order, and its first problem (its fixture's, or the first
    judgement not giving the expected grade)."""
    for k, row in enumerate(rows):
        problem = problem or _graded(row.status, row.error, row.text, card, example.expect, k)
    return LiveExample(card.id, example.label, tuple(row.text for row in rows), problem)


def _server(cfg: ProviderConfig) -> str:
    """The judge's server as a stop names it: its provider and the URL called (a pool's servers, each called in
    turn), never a password or a query."""
    urls = [e.url for e in cfg.endpoints] or ([cfg.base_url] if cfg.base_url else [])
    return f"the judge's provider '{cfg.name}'" + (f" at {', '.join(shown_url(u) for u in urls)}" if urls else "")


def _graded(status: str, error: str | None, text: str, card: Card, expect: Any, k: int) -> str:
    spec = card.judge_spec
    assert spec is not None
    if status != "ok":
        return f"judgement {k + 1} was {status}" + (f" ({error})" if error else "")
    try:
        metrics = read_answer(spec, text)
    except UnreadableAnswer as exc:
        return f"judgement {k + 1} is unreadable: {exc}"
    problem = expectation_problem(expect, metrics)
    return f"judgement {k + 1}: {problem}" if problem else ""

