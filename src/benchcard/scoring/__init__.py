"""Stage 0, blind scoring: exact, rules (JavaScript regex semantics) and fields; sees an output, a fixture and a key.

May import `benchcard._util` and `errors` only: a scorer can never learn the variant, the model or the run.
"""
