"""Answer keys: which key files a card's scorer reads, reading them, and the key files it would ignore.

Every scorer that compares an output against an answer takes that answer per fixture from
`keys/<id>/<fixture>.json` (a probe's one fixture is named after the card). `fields` reads the extraction key
of the design; a `judge` whose prompt shows `{{key}}` reads any JSON object;
`exact` with `expected_from_key: <field>` and `rules` whose patterns hold `{{key.<field>}}` read a
small key, `{"fixture": "<fixture>", "<field>": "answer"}` (or a list of accepted answers). A key file the
scorer never reads is refused by `check`: it would be sealed and published while deciding nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from benchcard._util.names import folded
from benchcard._util.safeio import listing
from benchcard.errors import CardError
from benchcard.records.answerkey import AnswerKey, key_path, names_in, read_key_file
from benchcard.scoring.fields import FieldsSpec
from benchcard.scoring.judge.spec import JudgeSpec
from benchcard.scoring.scorers import ExactSpec, RulesSpec, ScoringSpec

NOTE_FIELD = "note"
"""A key may carry a note for people; no scorer reads it."""


def key_fields(spec: ScoringSpec) -> tuple[str, ...]:
    """The fields of a small key that an `exact` or `rules` scorer reads (none for `fields`, whose key differs)."""
    if isinstance(spec, ExactSpec) and spec.expected_from_key:
        return (spec.expected_from_key,)
    if isinstance(spec, RulesSpec):
        return tuple(dict.fromkeys(f for rule in spec.rules for f in rule.key_fields))
    return ()


def needs_key(spec: ScoringSpec) -> bool:
    """Whether every fixture must have a key file for this scorer."""
    return (isinstance(spec, FieldsSpec) or (isinstance(spec, JudgeSpec) and spec.uses_key)
            or bool(key_fields(spec)))


def describe(spec: ScoringSpec) -> str:
    """How the scorer uses keys, in a few words, for errors."""
    if isinstance(spec, FieldsSpec):
        return "fields scoring"
    if isinstance(spec, JudgeSpec):
        return "judge scoring" + (" (its prompt shows {{key}})" if spec.uses_key else " (its prompt has no {{key}})")
    if isinstance(spec, ExactSpec):
        return "exact scoring" + (f" with expected_from_key: {spec.expected_from_key}" if spec.expected_from_key
                                  else " with one `expected` answer")
    fields = key_fields(spec)
    return "rules scoring" + (f" (patterns name key.{', key.'.join(fields)})" if fields
                              else " (no pattern names {{key.<field>}})")


def load_keys(spec: ScoringSpec, keys_dir: Path, fixture_ids: Iterable[str],
              shown: Callable[[Path], str] = str) -> dict[str, AnswerKey]:
    """Every fixture's answer key, validated; a missing key names the file that should hold it, as `shown` writes
    it (the card's loader: relative to the project, as its other errors)."""
    if not needs_key(spec):
        return {}
    if isinstance(spec, JudgeSpec):
        from benchcard.scoring.judge.keys import load_judge_keys

        return load_judge_keys(keys_dir, {f: keys_dir for f in fixture_ids}, shown)
    from benchcard.scoring.fields import load_key

    names = names_in(keys_dir)

    keys: dict[str, AnswerKey] = {}
    for fixture in sorted(fixture_ids):
        path = key_path(keys_dir, fixture, names, shown, f"{describe(spec)} reads one per fixture")
        if isinstance(spec, FieldsSpec):
            keys[fixture] = load_key(path, spec, shown(path))
        else:
            keys[fixture] = load_small_key(path, key_fields(spec), shown(path))
    return keys


def load_small_key(path: Path, fields: tuple[str, ...], shown: str | None = None) -> AnswerKey:
    """Read `{"fixture": ..., "<field>": "answer" | ["answer", ...]}`; every error names the file, line and field."""
    key = read_key_file(path, shown)
    data = key.body
    if data.get("fixture") != path.stem:
        raise key.not_its_fixture(path.stem)
    unknown = sorted(set(data) - {"fixture", NOTE_FIELD, *fields})
    if unknown:
        raise key.fail(unknown[0], f"the scorer never reads it (it reads {', '.join(fields)}); remove it, or keep "
                                   f"prose under {NOTE_FIELD!r}")
    for field in fields:
        value = data.get(field)
        ok = isinstance(value, str) or (isinstance(value, list) and bool(value)
                                        and all(isinstance(v, str) for v in value))
        if not ok:
            got = "missing" if field not in data else f"got {value!r}"
            raise key.fail(field, f"expected the answer as text, or a list of accepted answers; {got}")
    return key


def ignored_keys(spec: ScoringSpec, keys_dir: Path, fixture_ids: Iterable[str], shown: str) -> list[Path]:
    """Key files in the card's key folder (`shown`) that this scorer would never read (seals are not keys); a
    folder that cannot be listed is a CardError: the seal lists it."""
    try:
        if not keys_dir.is_dir():
            return []
    except OSError:  # a folder above it that may not be opened: the key readers name it
        return []
    wanted = set(fixture_ids) if needs_key(spec) else set()
    names = listing(keys_dir, shown, CardError)
    # a key named but for its case or Unicode form, where its own name is not there, `key_path` names as such
    misnamed = {folded(f"{fixture}.json") for fixture in wanted if f"{fixture}.json" not in names}
    return sorted(keys_dir / name for name in names
                  if name.endswith(".json") and not name.endswith(".seal.json") and name[:-5] not in wanted
                  and folded(name) not in misnamed)
