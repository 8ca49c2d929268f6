"""What a card's design can never show, said by `benchcard check` before anything is sealed or paid for.

The verdict's rule (docs/verdict.md) needs the exact sign-flip's smallest p ≤ α over the fixtures, so F
fixtures can never win when 2/2^F > α; it counts the run-to-run spread from the repetitions, so one
repetition can never win. Beyond those, a design where even a treatment right every time against a baseline
right about half the time wins less than 95 % of the time (stats/reach.py: too few fixtures or repetitions for
Holm's α/V over the variants, or a run term known on too few degrees of freedom) is a dead design: `check`
says so in one line naming the smallest change that can, and `benchcard seal` refuses it unless the card
says `win: {accept_cannot_win: true}` (a pure A/A card, a pilot). The plainest effect is held to every clause on
its metric: one it breaks whatever the data (`falls` beside `rises`, `holds` at 0) or a guard against its own
direction whose margin its gap cannot be shown within makes a dead design too. Cells cut off by `max_tokens` count
against `allow_failed` and are bounded at the worst case; a card whose runs were cut off should raise it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from benchcard.card.model import Card, Clause, spending_text
from benchcard.card.reader import field_locator
from benchcard.card.schedule import card_design, card_rules, spending_of
from benchcard.project import Project
from benchcard.records.rows import Rules, gate_side, manifest_or_none
from benchcard.scoring.scorers import metric_range
from benchcard.stats import reach


def fewest_fixtures(alpha: float) -> int:
    """The fewest fixtures whose exact two-sided sign-flip p can reach alpha (2/2^F ≤ alpha)."""
    return max(2, math.ceil(1 + math.log2(1 / alpha)))


def _locator(card: Card, project: Project) -> Callable[..., str]:
    """`at(*field)`: the card's file and the line of a field, for a warning."""
    return field_locator(card.path, project.relative(card.path))


def truncation_warnings(card: Card, project: Project) -> list[str]:
    """The runs of this version cut off at the card's max_tokens (`check` and `plan` both say so)."""
    return _truncation_warnings(card, project, _locator(card, project)("params", "max_tokens"))


def design_warnings(card: Card, project: Project) -> list[str]:
    """One line per thing this card's design cannot show, each naming the file, line and field."""
    at = _locator(card, project)
    out: list[str] = []
    rules = sealed_rules(card, project)
    dead = cannot_win(card, rules)
    if dead and card.win is not None:
        accepted = " (the card accepts it: win.accept_cannot_win)" if card.win.accept_cannot_win else ""
        field = _blocking_field(card, rules)
        out.append(f"{at(*field)}: field '{'.'.join(field)}': {dead}{accepted}")
    early = early_looks(card, rules) or undecidable_probe_looks(card, rules)
    if early:
        out.append(f"{at('sequential', 'looks')}: field 'sequential.looks': {early}")
    fail_only = probe_looks_that_cannot_pass(card, rules)
    if fail_only:
        out.append(f"{at('sequential', 'looks')}: field 'sequential.looks': {fail_only}")
    out += _truncation_warnings(card, project, at("params", "max_tokens"))
    return out


def sealed_rules(card: Card, project: Project) -> Rules | None:
    """The rule parameters the card's seal records (its runs follow them), None for this benchcard's."""
    from benchcard.card.seal import sequential_rules
    from benchcard.errors import SealError

    try:
        return sequential_rules(card, project)
    except SealError:  # `check` names an unreadable seal on its own line
        return None


def schedule_line(card: Card, project: Project) -> str | None:
    """A sequential card's sealed looks in one line, as `check` and the card's page say them (`3 looks, after
    repetitions 3, 6, 9 of 9 (96, 192, 288 calls); α spent obrien-fleming; may stop for futility`), the spending
    the seal records; None for a card that is not sequential."""
    if card.sequential is None:
        return None
    rules = sealed_rules(card, project) or card_rules(card.sequential, card.is_ab)
    return card.sequential.describe(card.repetitions, len(card.variant_names()) * len(card.fixture_ids()),
                                    spending_text(*spending_of(card.sequential, rules)))


def early_looks(card: Card, rules: Rules | None = None) -> str | None:
    """What a sequential card's looks before any α is spent can do (only stop for futility, or nothing at all,
    with the smallest fix); None when every look may decide. `stats.sequential` spends no α at a look before
    `decide_from` repetitions (the seal's `rules`, else this benchcard's) unless it is the last."""
    if card.sequential is None:
        return None
    from benchcard.stats.sequential import MIN_REPETITIONS_TO_DECIDE

    least = MIN_REPETITIONS_TO_DECIDE if rules is None else rules.decide_from
    looks = card.sequential.looks
    early = [k for k, r in enumerate(looks, 1) if r < least and r != card.repetitions]
    if not early:
        return None
    first = looks[early[0] - 1]
    which = (f"look {early[0]} comes after {first} repetition{'' if first == 1 else 's'}" if len(early) == 1 else
             f"looks {', '.join(map(str, early))} come after {', '.join(str(looks[k - 1]) for k in early)} "
             "repetitions")
    head = f"{which}, before the {least} repetitions from which α is spent"
    if card.is_ab and card.sequential.futility:
        return f"{head}: it can stop the run only for futility, never for a win or a loss"
    kept = [r for r in looks if r >= least]
    fix = (f"drop {'it' if len(early) == 1 else 'them'}: looks: {kept}" if len(kept) >= 2 else
           "give more repetitions, or drop the sequential block")
    why = "futility is off" if card.is_ab else "a probe never stops for futility"
    return f"{head}, and {why}: {'it' if len(early) == 1 else 'they'} can never stop the run ({fix})"


def _probe_looks(card: Card, rules: Rules | None) -> list[tuple[int, int, float, float | None, float | None]]:
    """A sequential probe's looks before the last at which α is spent: (look, cells, its boundary z, the least mean
    that passes the gate there, the greatest that fails it; None: none can), as the run's look computes them
    (`stats.sequential.passing_mean`, `failing_mean`). The last look is left out: a run that reaches it is held to
    min_score by its mean score. A look before 3 repetitions spends no α: `early_looks` names it."""
    if card.sequential is None or card.is_ab or card.gate is None:
        return []
    from benchcard.stats.sequential import boundaries, failing_mean, passing_mean

    gate, per_repetition = card.gate, len(card.fixture_ids())
    plan = card_design(card.sequential, card.gate_alpha, False, rules, probe=True)
    bound = plan.gate_bound
    return [(k, r * per_repetition, z, passing_mean(gate, r * per_repetition, z, bound),
             failing_mean(gate, r * per_repetition, z, bound))
            for k, (r, z) in enumerate(zip(card.sequential.looks[:-1], boundaries(plan).efficacy, strict=False), 1)
            if math.isfinite(z)]


def undecidable_probe_looks(card: Card, rules: Rules | None = None) -> str | None:
    """A sequential probe's looks before the last at which its gate can be neither passed nor failed: with n
    cells at the look's boundary z, even a mean of 1 has a lower bound (`stats.sequential.gate_bounds`, by the
    bound its seal records) below `min_score` and a mean of 0 an upper bound at or above it, so the look can never
    stop the run (it costs a scoring pass and nothing else). None when every look can decide."""
    dead = [k for k, _, _, passing, failing in _probe_looks(card, rules) if passing is None and failing is None]
    if not dead:
        return None
    assert card.gate is not None and card.sequential is not None
    looks = card.sequential.looks
    which = f"look {dead[0]}" if len(dead) == 1 else f"looks {', '.join(map(str, dead))}"
    kept = [r for k, r in enumerate(looks, 1) if k not in dead]
    fix = f"drop {'it' if len(dead) == 1 else 'them'}: looks: {kept}" if len(kept) >= 2 else "drop the sequential block"
    return (f"{which} can neither pass nor fail gate min_score {card.gate:g} at {'its' if len(dead) == 1 else 'their'} "
            f"boundary, even with every cell passing or failing: it can never stop the run ({fix})")


def probe_looks_that_cannot_pass(card: Card, rules: Rules | None = None) -> str | None:
    """A sequential probe's looks before the last that can fail its gate but never pass it: too few cells for a
    lower bound at the look's boundary (`stats.sequential.gate_bounds`, by the bound its seal records) to reach
    `min_score` even with every cell passing, while a low mean
    can fall below it. Such a look stops a model under the gate early and never one over it, which a card may
    mean (a cheap early stop) or not (a gate of 0.8 looked at after 10 cells): said, not refused. Each look is
    named with the verdict's words for it ("pass out of reach at 10 cells", `rows.gate_side`) and the fewest
    cells at which a pass becomes possible at its boundary. None when every such look can pass."""
    from benchcard.stats.sequential import fewest_cells_to_pass

    one_sided = [(k, n, z) for k, n, z, passing, failing in _probe_looks(card, rules)
                 if passing is None and failing is not None]
    if not one_sided:
        return None
    assert card.gate is not None and card.sequential is not None
    bound = card_design(card.sequential, card.gate_alpha, False, rules, probe=True).gate_bound
    needs = [fewest_cells_to_pass(card.gate, z, bound) for _, _, z in one_sided]
    named = len(one_sided) > 1
    parts = [(f"look {k}: " if named else "") + gate_side("pass", None, "≥", n)
             + ("" if need is None else f", a pass possible from {need:,} cells at its boundary")
             for (k, n, _), need in zip(one_sided, needs, strict=True)]
    if None in needs:  # a gate of 1: no finite count's lower bound reaches 1
        parts.append("no count's lower bound reaches 1: only the last look, held to the mean score, can pass")
    which = f"look {one_sided[0][0]}" if len(one_sided) == 1 else \
        f"looks {', '.join(str(k) for k, _, _ in one_sided)}"
    return (f"{which} can only fail gate min_score {card.gate:g}, never pass ({'; '.join(parts)}): "
            f"{'it stops' if len(one_sided) == 1 else 'they stop'} a model under the gate early, never one over it")


def _blocking_field(card: Card, rules: Rules | None = None) -> tuple[str, ...]:
    """The field a dead design's line points at, in `cannot_win`'s order: a clause the plainest effect breaks; the
    sequential block when the fixed design is reliable but its looks are not, or else a guard's margin; the
    fixtures when the sign-flip cannot reach α/V; min_effect when the plainest effect's gap cannot clear it; else
    the repetitions."""
    assert card.win is not None
    v = max(len(card.variant_names()) - 1, 1)
    n, r, effect = len(card.fixture_ids()), card.repetitions, plain_min_effect(card)
    one = _one_fixture_gap(card)
    if one is not None:
        return ("win", "all", str(one[0]), "fixture")
    against = _against_the_effect(card)
    if against is not None:
        return ("win", "all", str(against[0]))
    if reach.reliable(n, r, v, card.win.alpha, effect):
        if _sequential_cannot_win(card, n, v, effect, rules):
            return ("sequential", "spending")
        ceiling = _ceiling_cannot_win(card, n, r, v, effect, "")
        if ceiling is not None:
            return ("win", "all", str(ceiling[0]))
    if 2 / 2 ** n > card.win.alpha / v:
        return ("fixtures",)
    if r > 1 and effect >= reach.PLAIN_GAP:
        return ("win", "min_effect")
    return ("repetitions",)


def plain_min_effect(card: Card) -> float:
    """The card's min_effect where the plainest effect's scale applies (a first clause on a fraction metric);
    a count metric's gaps are on another scale, and its min_effect is not held against the design."""
    assert card.win is not None
    first = card.win.clauses[0]
    return card.win.min_effect if metric_range(first.metric)[1] == 1.0 else 0.0


def cannot_win(card: Card, rules: Rules | None = None) -> str | None:
    """Why this ab card's design cannot show a win reliably, with the smallest change that can; None when it
    can (a treatment right every time against a baseline right about half the time wins ≥ 95 % of runs). A
    sequential card's looks are judged with its seal's rule parameters `rules` (None: this benchcard's)."""
    if not card.is_ab or card.win is None:
        return None
    alpha, n, r = card.win.alpha, len(card.fixture_ids()), card.repetitions
    v = max(len(card.variant_names()) - 1, 1)
    effect = plain_min_effect(card)
    at = f" at Holm's α/{v} = {alpha / v:.3g}" if v > 1 else f" at α = {alpha:g}"
    against = _one_fixture_gap(card) or _against_the_effect(card)
    if against is not None:
        return (f"{n} fixtures × {r} repetition{'s' if r != 1 else ''} with {v} variant(s) can never win{at}: "
                f"{against[1]}")
    if reach.reliable(n, r, v, alpha, effect):
        ceiling = _ceiling_cannot_win(card, n, r, v, effect, at)
        return _sequential_cannot_win(card, n, v, effect, rules) or (ceiling[1] if ceiling else None)
    level = alpha / v
    never = []
    if 2 / 2 ** n > level:
        never.append(f"the exact sign-flip p is at least {2 / 2 ** n:.4g} > {level:.3g}")
    if r == 1:
        never.append("one repetition cannot measure the run-to-run spread")
    if effect > 1:
        never.append(f"min_effect {effect:g} is beyond any gap a score in [0, 1] can take")
    why = (f"can never win{at}: {' and '.join(never)}" if never else
           f"cannot show a win reliably{at}: a treatment right every time against a baseline right about half the "
           f"time {reach.share_text(n, r, v, alpha, effect)} ({reach.RELIABLE:.0%} needed)")
    if effect > 0 and not never:
        plain = (f", more than the plainest effect's gap of about {reach.PLAIN_GAP:g}" if effect >= reach.PLAIN_GAP
                 else "")
        why += f" with min_effect {effect:g}{plain}"
    change = reach.smallest_change(n, r, v, alpha, effect).text(n, r, v)
    return f"{n} fixtures × {r} repetition{'s' if r != 1 else ''} with {v} variant(s) {why}; {change}"


def plain_rule(card: Card) -> tuple[str | None, float | None]:
    """What the rule beyond its first clause holds the plainest effect to, for `plan`'s figure of the most a
    design can show: why no design can win (a clause it breaks whatever the data), else the margin of a guard
    against its own direction that its gap must be shown within (None: neither)."""
    broken = _one_fixture_gap(card) or _against_the_effect(card)
    if broken is not None:
        return broken[1], None
    assert card.win is not None
    guard = "not_rises" if card.win.clauses[0].test == "rises" else "not_falls"
    margins = [float(c.margin) for _, c in _rule_on_first_metric(card) if c.test == guard and c.margin is not None]
    return None, min(margins) if margins else None


def _rule_on_first_metric(card: Card) -> list[tuple[int, Clause]]:
    """The clauses after the first on the first clause's metric over every fixture (or, for `holds`, on one),
    when that metric is a score in [0, 1]: those the plainest effect can be held to."""
    assert card.win is not None
    first = card.win.clauses[0]
    if first.fixture is not None or metric_range(first.metric)[1] != 1.0:
        return []
    return [(k, c) for k, c in enumerate(card.win.clauses) if k > 0 and c.metric == first.metric
            and (c.fixture is None) == (c.test != "holds")]


def _one_fixture_gap(card: Card) -> tuple[int, str] | None:
    """A gap clause (rises, falls or a guard) on one fixture: its interval needs the run-to-run spread, measured
    across fixtures, so over one it is infinite and the clause never holds, whatever the data."""
    assert card.win is not None
    for k, clause in enumerate(card.win.clauses):
        if clause.fixture is not None and clause.test != "holds":
            return k, (f"clause {k + 1} ({clause.text}) is a gap over one fixture, whose run-to-run spread "
                       "cannot be measured (that takes two fixtures), so it never holds; drop its fixture"
                       + (", or make it test: holds" if k > 0 else ""))
    return None


def _against_the_effect(card: Card) -> tuple[int, str] | None:
    """A clause on the first clause's metric that a treatment right every time breaks whatever the data: the
    opposite test (`falls` beside `rises`), or `holds` on a value other than the one it scores on every cell."""
    assert card.win is not None
    first = card.win.clauses[0]
    up = first.test == "rises"
    for k, clause in _rule_on_first_metric(card):
        said = f"clause {k + 1} ({clause.text})"
        if clause.test in ("rises", "falls") and clause.test != first.test:
            return k, (f"{said} asks the opposite of clause 1 ({first.text}), so no effect can win; "
                       f"drop clause {k + 1}")
        if clause.test == "holds" and abs(clause.equals - (1.0 if up else 0.0)) > 1e-9:
            best = 1 if up else 0
            return k, (f"{said} fails for a treatment that scores {best} on every cell, the effect clause 1 "
                       f"seeks; drop clause {k + 1}, or hold it at equals: {best}")
    return None


def _ceiling_cannot_win(card: Card, n: int, r: int, v: int, effect: float, at: str) -> tuple[int, str] | None:
    """A guard against the effect's own direction on its metric (`not_rises` with a margin beside `rises`):
    the plainest effect's gap of about 0.5 must also be shown below the margin. Why it is not reliably, with the
    smallest margin that is (in hundredths, up to 1); None when it is."""
    assert card.win is not None
    guard = "not_rises" if card.win.clauses[0].test == "rises" else "not_falls"
    guards = [(k, c) for k, c in _rule_on_first_metric(card) if c.test == guard and c.margin is not None]
    if not guards:
        return None
    k, clause = min(guards, key=lambda kc: float(kc[1].margin or 0.0))
    margin, alpha = float(clause.margin or 0.0), card.win.alpha

    def ok(m: float) -> bool:
        return reach.reliable(n, r, v, alpha, effect, m)

    if ok(margin):
        return None
    low = max(math.floor(margin * 100), 0)  # hundredths: the least margin up to 1 that is reliable (bisection)
    hundredths = reach.fewest(low, min(low + 1, 100), 100, lambda m: ok(m / 100)) if low < 100 else None
    wider = None if hundredths is None else hundredths / 100
    change = (f"use a margin of at least {wider:.2f} on clause {k + 1}, or drop it" if wider is not None else
              f"drop clause {k + 1}")
    return k, (f"{n} fixtures × {r} repetition{'s' if r != 1 else ''} with {v} variant(s) cannot show a win "
               f"reliably{at}: clause {k + 1} ({clause.text}) needs the gap shown within {margin:g}, and a "
            f"treatment right every time against a baseline right about half the time (a gap of about "
               f"{reach.PLAIN_GAP:g}) {reach.share_text(n, r, v, alpha, effect, margin)} "
               f"({reach.RELIABLE:.0%} needed); {change}")


def _sequential_cannot_win(card: Card, n: int, v: int, effect: float, rules: Rules | None = None) -> str | None:
    """A sequential card judged at its looks (each decided at a nominal level below α) with its seal's rule
    parameters `rules` (None: this benchcard's): why the plainest effect does not win reliably there, with the
    smallest change that does; None when it does."""
    seq, win = card.sequential, card.win
    if seq is None or win is None or len(seq.looks) < 2:
        return None
    plan = card_design(seq, win.alpha, seq.futility, rules)
    args = (n, plan, min_effect_or_margin(card), v, effect)
    if reach.sequential_reliable(*args):
        return None
    at = f" at Holm's α/{v} = {win.alpha / v:.3g}" if v > 1 else f" at α = {win.alpha:g}"
    spends = spending_text(plan.spending, plan.gamma if plan.spending == "hsd" else None)
    return (f"{n} fixtures with looks after repetitions {', '.join(map(str, seq.looks))} ({spends} "
            f"spending) cannot show a win reliably{at}: a treatment right every time against a baseline right "
            f"about half the time {reach.sequential_share_text(*args)} ({reach.RELIABLE:.0%} needed); "
            f"{reach.sequential_change(*args)}")


def min_effect_or_margin(card: Card) -> float:
    """The effect a sequential card's futility test is run against: its min_effect, else its equivalence margin."""
    assert card.win is not None
    return card.win.min_effect or card.win.equivalence_margin or 0.0


def _truncation_warnings(card: Card, project: Project, where: str) -> list[str]:
    """Runs of this version that had cells cut off at the card's current max_tokens."""
    max_tokens = card.params.get("max_tokens")
    out = []
    folder = project.results_dir / card.id / f"v{card.version}"
    for manifest_path in sorted(folder.glob("*/manifest.json")) if folder.is_dir() else []:
        manifest = manifest_or_none(manifest_path)
        if manifest is None or manifest.counts is None:
            continue
        truncated = manifest.counts.truncated
        if truncated <= 0 or manifest.params.get("max_tokens") != max_tokens:
            continue
        total = manifest.cells
        of = f" of {total}" if total is not None else ""
        out.append(f"{where}: field 'params.max_tokens': run {manifest_path.parent.name} had {truncated}{of} "
                   f"cell(s) cut off at max_tokens {max_tokens}; they count against allow_failed and are bounded "
                   "at the worst case by the verdict — raise max_tokens in a new version")
    return out

