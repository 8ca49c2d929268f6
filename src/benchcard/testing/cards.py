"""Cards shipped for tests and benchmarks: small sealed experiments against the fake server.

`COLOUR_AB` is a two-arm card (a word of politeness before the fixture) scored by one rule; fill its
`provider`, `effort`, `max_tokens` and `reps` with `str.format`. Fixtures are `fixtures/colour-ab/*.txt`.
"""

from __future__ import annotations

COLOUR_AB = """\
id: colour-ab
version: 1
kind: ab
title: Does saying please change the colour named?
question: Does saying please change the answer?
variable: One word of politeness before the fixture.
rig: {{provider: {provider}, model: test/model, effort: {effort}}}
params: {{max_tokens: {max_tokens}, temperature: 0.7}}
prompt:
  system: Answer with one word.
  user: |-
    Name the colour.
    {{{{variant}}}}<item>{{{{fixture}}}}</item>
variants: {{baseline: "", A: "Please.\\n"}}
baseline: baseline
fixtures: fixtures/colour-ab/*.txt
repetitions: {reps}
scoring:
  method: rules
  rules:
    - {{id: says_red, must_match: /^\\s*red\\s*$/i, why: The only right answer.}}
win:
  all:
    - {{metric: score, test: rises}}
  equivalence_margin: 0.05
  accept_cannot_win: true  # a test card: six fixtures cannot win reliably
examples:
  - {{label: Correct, output: red, expect: pass}}
  - {{label: Rejected — explained, output: "red, because", expect: fail}}
history:
  - {{version: 1, note: Initial version.}}
"""
