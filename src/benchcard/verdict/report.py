"""A verdict in words for the terminal: what `benchcard verdict` prints, built from verdict.json."""

from __future__ import annotations

from typing import Any

from benchcard.verdict.judgefigures import judge_lines


def num(x: Any, signed: bool = False) -> str:
    """A figure as the verdict prints it: three decimals, a true minus sign, n/a for a missing one."""
    if not isinstance(x, int | float) or isinstance(x, bool):
        return "n/a"
    return (f"{x:+.3f}" if signed else f"{x:.3f}").replace("-", "−")


def ci(pair: Any) -> str:
    return f"[{num(pair[0])}, {num(pair[1])}]" if isinstance(pair, list) else "n/a"


def pairing_text(g: dict[str, Any]) -> str | None:
    """"paired over 7 of 8 fixtures; r5 left out: no scored cell in A", or None for a verdict without it."""
    paired, total = g.get("paired", g.get("n_fixtures")), g.get("of")
    if paired is None:
        return None
    text = f"paired over {paired} fixtures" if total is None else f"paired over {paired} of {total} fixtures"
    left = g.get("left_out") or {}
    if left:
        text += "; " + ", ".join(f"{f} left out: {why}" for f, why in left.items())
    return text


def effect_lines(v: dict[str, Any]) -> list[str]:
    """The verdict's lead, in words: what each variant did to the first clause's metric, from which mean to
    which (over the paired fixtures only, so that the means and the gap agree), with its interval and which
    fixtures were paired, then whether every clause holds. The terminal and the page both show these lines."""
    if v.get("kind") != "ab":
        return []
    clauses = v.get("clauses") or []
    out = []
    for comp in v.get("comparisons") or []:
        variant = comp["variant"]
        mine = [c for c in clauses if c.get("variant") == variant]
        if not mine:
            continue
        metric = mine[0]["metric"]
        if mine[0].get("fixture"):
            metric = f"{metric} on {mine[0]['fixture']}"
        m = (v.get("metrics") or {}).get(metric) or {}
        g = (m.get("by_variant") or {}).get(variant) or m
        means = g.get("means") or m.get("means") or {}
        gap = g.get("gap")
        verb = "left" if not isinstance(gap, int | float) or gap == 0 else ("raised" if gap > 0 else "lowered")
        held = all(c.get("holds") for c in mine)
        pairing = pairing_text(g)
        out.append(f"{variant} {verb} {metric} from {num(means.get(v['baseline']))} to {num(means.get(variant))} "
                   f"({num(gap, True)}, {round(100 * v.get('confidence', 0.95))} % CI {ci(g.get('ci'))})"
                   + (f", {pairing}" if pairing else "")
                   + f"; {'every clause holds' if held else 'not every clause holds'} → {comp['outcome']}")
    return out


def verdict_lines(v: dict[str, Any]) -> list[str]:
    """The verdict as the terminal shows it, line by line (the CLI only prints them)."""

    def pval(x: Any) -> str:
        if not isinstance(x, int | float) or isinstance(x, bool):
            return "n/a"
        return "< 0.0001" if x < 0.0001 else f"{x:.4f}"

    lines = [f"{v['card']} v{v['version']} · run {v['run']} · {v['rig']}", *effect_lines(v),
             f"finding: {v['finding']} → {v['outcome']}", f"  {v['why']}"]
    counts = v.get("counts") or {}
    lines.append("cells: " + " · ".join(f"{n} {k}" for k, n in counts.items()))
    for note in v.get("notes") or []:
        lines.append(f"  note: {note}")
    if v["kind"] == "ab":
        for comp in v.get("comparisons") or []:
            lines.append(f"{comp['variant']} vs {v['baseline']}: {comp['finding']} → {comp['outcome']}")
            for c in v.get("clauses") or []:
                if c["variant"] == comp["variant"]:
                    lines.append(f"  {'holds' if c['holds'] else 'FAILS'}  {c['why']}")
        lines.append(f"metrics ({round(100 * v['confidence'])}% intervals; bootstrap: "
                     f"{v['bootstrap']['resamples']:,} fixture resamples seeded from the seal root):")
        for name, m in (v.get("metrics") or {}).items():
            means = " · ".join(f"{k} {num(x)}" for k, x in m["means"].items())
            per = m.get("by_variant") or {v["variants"][0]: m}
            for variant, g in per.items():
                lines.append(f"  {name} ({variant} − {v['baseline']}): means {means}; gap {num(g.get('gap'), True)} "
                             f"CI {ci(g.get('ci'))} bootstrap {ci(g.get('ci_bootstrap'))} p {pval(g.get('p'))} "
                             f"sign-flip p {pval(g.get('p_signflip'))}; noise floor "
                             f"{num(g.get('noise_floor', m.get('noise_floor')))} (the run-level part)")
    else:
        lines.append(f"score {num(v.get('score'))} · {v.get('passes')} pass · Wilson 95% {ci(v.get('score_ci'))}")
        lines.extend(f"  {line}" for line in v.get("rule_lines") or [])
    human = v.get("human")
    if human:
        kappa = human.get("kappa")
        lines.append(f"human grades: {human['graded']} graded · agreement {num(human['agreement'])} · Cohen's kappa "
                     f"{num(kappa) if kappa is not None else 'undefined (one category only)'} · "
                     f"{len(human['disagreements'])} disagreement(s)")
        for d in human["disagreements"]:
            note = f" — {d['note']}" if d.get("note") else ""
            lines.append(f"  {d['cell']} {d['fixture']} ({d['variant']}): auto {num(d['auto_score'])}, "
                         f"human {d['human_grade']}{note}")
    lines.extend(judge_lines(v))
    led = v.get("ledger") or {}
    if v.get("scratch"):
        lines.append("scratch: a trial verdict, not entered in the ledger")
    else:
        lines.append(f"ledger: seq {led.get('seq')} · {str(led.get('at', ''))[:19]}Z · "
                     f"{str(led.get('hash', ''))[:19]}…")
    return lines


def line_style(line: str) -> str:
    """The colour of one verdict line: a result green, a non-result yellow, a failed clause red, others plain."""
    if line.startswith("  FAILS"):
        return "red"
    if line.endswith("→ result"):
        return "bold green"
    if line.endswith("→ non-result"):
        return "yellow"
    return ""


def print_verdict(lines: list[str], console: Any = None) -> None:
    """Print the verdict's lines through rich, coloured by `line_style`. A default console writes to stdout and
    colours only on a terminal without NO_COLOR (FORCE_COLOR forces it); lines are never wrapped or re-marked."""
    from rich.console import Console
    from rich.text import Text

    console = console or Console(soft_wrap=True, highlight=False, emoji=False, markup=False)
    plain = console.no_color  # NO_COLOR: no bold either, so that nothing but the text reaches the terminal
    for line in lines:
        console.print(Text(line, style="" if plain else line_style(line)))
