"""Links a card puts on its page are read as a browser reads them: only http(s), mailto and same-site paths."""

from __future__ import annotations

import html.parser
import json
import re
from pathlib import Path

import jinja2
import pytest

import benchcard.publish
from benchcard._util.text import terminal_text
from benchcard.publish._render import environment
from benchcard.publish.build import build_site
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import bc
from ..helpers_project import AB_CARD, make_ab_project
from ..helpers_run import ab_project, only_run

HOSTILE = ["java\tscript:alert(1)", "java\nscript:alert(2)", "\x01javascript:alert(3)", " JaVaScRiPt:alert(4)",
           "//evil.example/x", "\\\\evil.example/x", "/\\evil.example/x", "data:text/html,<script>alert(5)</script>",
           "vbscript:msgbox(6)", "java\rscript:alert(7)", "\x00javascript:alert(8)"]
GOOD = ["https://example.org/paper", "notes/method.html", "mailto:team@example.org"]


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [v or "" for k, v in attrs if k == "href"]


class _Pres(html.parser.HTMLParser):
    """The text of each `<pre class="output">` of a page, as a browser reads it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.outputs: list[str] = []
        self._in = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "pre" and ("class", "output") in attrs:
            self._in = True
            self.outputs.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in = self._in and tag != "pre"

    def handle_data(self, data: str) -> None:
        if self._in:
            self.outputs[-1] += data


def _as_a_browser_reads(href: str) -> str:
    return re.sub(r"[\t\n\r]", "", href.strip("".join(map(chr, range(0x21)))))


def test_no_link_on_a_page_runs_script_or_leaves_for_another_host(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    sources = [{"title": f"source {i}", "url": u} for i, u in enumerate(HOSTILE + GOOD)]
    (root / "cards" / "tiny-ab.yaml").write_text(AB_CARD + "page: {sources: " + json.dumps(sources) + "}\n",
                                                 encoding="utf-8")
    result = bc(root, "site", "--out", str(tmp_path / "site"))
    assert result.exit_code == 0, result.output
    parser = _Links()
    parser.feed((tmp_path / "site" / "cards" / "tiny-ab" / "index.html").read_text(encoding="utf-8"))
    hrefs = [_as_a_browser_reads(h) for h in parser.hrefs]
    for href in hrefs:
        scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", href)
        assert scheme is None or scheme.group(1).lower() in ("http", "https", "mailto"), href
        assert not re.match(r"^[/\\]{2}", href), href
    for url in GOOD:
        assert url in hrefs
    assert "source 0" in (tmp_path / "site" / "cards" / "tiny-ab" / "index.html").read_text(encoding="utf-8")


def test_text_that_could_reorder_its_line_is_isolated_and_plain_text_is_not() -> None:
    page = environment().from_string(
        '<title>{{ t|isolated_text }}</title><a href="{{ (t)|plain }}">{{ t }}</a> · {{ u }} {{ n }}')
    assert page.render(t="Win\u202e <for> B", u="plain", n=3) == (
        '<title>\u2068Win\u202e &lt;for&gt; B\u2069</title><a href="Win\u202e &lt;for&gt; B">'
        "<bdi>Win\u202e &lt;for&gt; B</bdi></a> · plain 3")
    plain_page = page.render(t="Win for B", u="plain", n=3)
    assert plain_page == '<title>Win for B</title><a href="Win for B">Win for B</a> · plain 3'


def test_an_emoji_s_joiners_and_tags_are_shown_as_they_are_on_a_page_as_on_a_terminal() -> None:
    """A page neither escapes nor isolates a joiner or a tag (neither can reorder a line), so an emoji reads as on
    the terminal (`terminal_text` keeps the ones inside an emoji); an override beside it is still isolated."""
    emoji = "👩\u200d💻 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    page = environment().from_string("{{ t }} · {{ u }}")
    assert page.render(t=emoji, u=f"{emoji}\u202e") == f"{emoji} · <bdi>{emoji}\u202e</bdi>"
    assert terminal_text(emoji) == emoji


def test_a_reply_in_a_pre_is_shown_character_for_character(tmp_path: Path, server: FakeServer, key: str) -> None:
    """A <pre> is a block of its own, so a right-to-left reply holding a stray U+2069 cannot reorder the page
    around it: it is shown as the model wrote it, with no isolate added to what a reader copies."""
    reply = "\u2069\u05e9\u05dc\u05d5\u05dd red"
    server.configure({"default_reply": reply})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=1, repetitions=1)
    ran = bc(project.root, "run", "colour-ab")
    assert ran.exit_code == 0, ran.output
    build_site(project, tmp_path / "site")
    page = next((tmp_path / "site").rglob(f"{only_run(project, 'colour-ab').name}/index.html"))
    parser = _Pres()
    parser.feed(page.read_text(encoding="utf-8"))
    assert parser.outputs and set(parser.outputs) == {reply}, parser.outputs


def test_each_item_of_a_list_on_a_page_is_isolated_on_its_own() -> None:
    """A right-to-left name in a list reorders only itself: `<bdi>` around the whole list ("Δ is שלום, abc")
    showed it as "abc ,שלום", the list reversed, and an override in one rig line ran over the next."""
    rendered = environment().from_string('{{ xs|joined(", ") }}').render(xs=["\u05e9\u05dc\u05d5\u05dd", "a<b", 3])
    assert rendered == "<bdi>\u05e9\u05dc\u05d5\u05dd</bdi>, a&lt;b, 3"
    pages = list((Path(benchcard.publish.__file__).parent / "templates").glob("*.html"))
    assert pages and not [p.name for p in pages if "|join(" in p.read_text(encoding="utf-8")]  # every list so


def test_each_build_reuses_the_templates_compiled_code_and_a_changed_template_is_compiled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every build makes its own environment; the templates' code is compiled once a process (a second
    environment compiles none and runs the same code), and code is reused only for the very same source."""
    from benchcard.publish import _render

    first = environment()
    names = first.list_templates()
    assert names
    compiled = {name: first.get_template(name).root_render_func.__code__ for name in names}

    def no_compile(*args: object) -> None:
        raise AssertionError(f"compiled again: {args[-1]}")

    with monkeypatch.context() as patched:
        patched.setattr(jinja2.Environment, "_compile", no_compile)
        second = environment()
        assert {name: second.get_template(name).root_render_func.__code__ for name in names} == compiled
    kept = _render._KeptBytecode()
    made = [jinja2.Environment(loader=jinja2.DictLoader({"page": text}), bytecode_cache=kept)
            for text in ("one {{ x }}", "two {{ x }}")]
    assert [env.get_template("page").render(x=1) for env in made] == ["one 1", "two 1"]


def test_a_page_shows_an_output_whole_up_to_its_limit_and_says_how_much_it_cut() -> None:
    from benchcard.publish._render import PAGE_OUTPUT_CHARS, page_output

    whole = "é" * PAGE_OUTPUT_CHARS
    assert page_output(whole) == (whole, 0)
    assert page_output(whole + "🙂z") == (whole, 2)
    assert page_output("") == ("", 0)


def test_each_part_of_a_rig_line_is_isolated_on_its_own() -> None:
    """An override in a model's name stays in the model's `<bdi>`, the provider beside it outside; a plain rig
    line is shown as it is, and a list of rig lines isolates each part of each."""
    env = environment()
    line = "evil\u202emodel · effort high · Claude API"
    assert env.from_string("{{ x|rig }}").render(x=line) == "<bdi>evil\u202emodel</bdi> · effort high · Claude API"
    assert env.from_string("{{ x|rig }}").render(x="m · Claude API") == "m · Claude API"
    assert env.from_string('{{ xs|rigs("; ") }}').render(xs=[line, "\u05e9 · p"]) == (
        "<bdi>evil\u202emodel</bdi> · effort high · Claude API; <bdi>\u05e9</bdi> · p")
