"""Where a project's cards, fixtures, keys and results live, the rule that no path may leave it, and its
`benchcard.yaml` (providers and prices) typed once: `Project.config()`, every value checked when it is read."""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Literal, cast

from benchcard._util.names import name_clash, shown
from benchcard._util.safeio import given, read_regular_text
from benchcard._util.urls import check_url, credentials
from benchcard._util.yamlread import MAX_YAML_BYTES, load_yaml, read_as
from benchcard.errors import BenchcardError, CardError, ProjectError, ProviderError, RunError


@dataclass(frozen=True)
class Project:
    """A benchcard project: a folder with cards/, fixtures/, keys/ and results/."""

    root: Path

    @classmethod
    def find(cls, start: Path | None = None) -> Project:
        """The nearest folder at or above `start` that has a cards/ folder, else `start` itself."""
        here = (start or Path.cwd()).resolve()
        for folder in (here, *here.parents):
            if (folder / "cards").is_dir():
                return cls(folder)
        return cls(here)

    @classmethod
    def of(cls, given: ProjectLike | None = None) -> Project:
        """The project a Python caller means: a `Project` as it is; a folder (`str` or any path) as the nearest
        project at or above it, as `-C DIR` would (a folder that does not exist is refused, naming it); None as
        the nearest project above the current folder. The one coercion every public function uses."""
        if isinstance(given, Project):
            return given
        if given is None:
            return cls.find()
        if not isinstance(given, str | os.PathLike):
            raise ProjectError(f"project={given!r}: expected a Project, a folder (str or Path) or None")
        if given == "":  # Path("") is the current folder: `-C ""` is refused for the same reason
            raise ProjectError("project='': empty (a variable set but empty?); give a folder, or None for the "
                               "project around the current folder")
        folder = Path(given)
        if not folder.is_dir():
            raise ProjectError(f"project={os.fspath(given)}: no such folder")
        return cls.find(folder)

    @classmethod
    def require(cls, given: Path | None = None, tell: Callable[[str], None] | None = None) -> Project:
        """The project a command works in: `-C DIR`, else the nearest folder at or above the current one with a
        cards/ folder. Anywhere else there is nothing to work on, and the error says where it looked. Found by
        that search inside another project (`enclosing_project`), `tell` is given one line naming both, so the
        user knows which ledger the command reads and writes."""
        if given is not None:
            root = given.resolve()
            if not root.is_dir():
                raise ProjectError(f"-C {given}: no such folder")
            if not (root / "cards").is_dir():
                raise ProjectError(f"-C {given}: not a benchcard project (no cards/ folder in {root})")
            return cls(root)
        project = cls.find()
        if not project.cards_dir.is_dir():
            raise ProjectError(f"no benchcard project here: no cards/ folder in {project.root} or any folder above "
                               "it; run from a project folder, or name one with -C DIR")
        project.tell_enclosing(tell)
        return project

    def tell_enclosing(self, tell: Callable[[str], None] | None) -> None:
        """When this project lies inside another (`enclosing_project`), one line to `tell` naming both."""
        outer = enclosing_project(self.root) if tell is not None and self.cards_dir.is_dir() else None
        if tell is not None and outer is not None:
            tell(f"note: using the benchcard project in {self.root} (the nearest), which lies inside the "
                 f"project in {outer} with a ledger of its own; -C {shlex.quote(str(outer))} uses that one")

    @property
    def cards_dir(self) -> Path:
        return self.root / "cards"

    @property
    def results_dir(self) -> Path:
        return self.root / "results"

    @property
    def ledger_path(self) -> Path:
        return self.results_dir / "ledger.jsonl"

    def card_path(self, card_id: str) -> Path:
        return self.cards_dir / f"{card_id}.yaml"

    def keys_dir(self, card_id: str) -> Path:
        return self.root / "keys" / card_id

    def seal_path(self, card_id: str, version: int) -> Path:
        return self.keys_dir(card_id) / f"v{version}.seal.json"

    def run_dir(self, card_id: str, version: int, run_id: str) -> Path:
        return self.results_dir / card_id / f"v{version}" / run_id

    def inside(self, relative: str, *, source: str, field: str) -> Path:
        """Resolve a path written in a card; refuse one that leaves the project (absolute, `..`, a link out)."""
        if Path(relative).is_absolute():
            raise CardError(f"{source}: field '{field}': path '{relative}' must be relative to the project")
        resolved = Path(os.path.realpath(self.root / relative))  # a link in a loop: where it ends, for its reader
        root = self.root.resolve()
        if resolved != root and root not in resolved.parents:
            raise CardError(f"{source}: field '{field}': path '{relative}' leaves the project")
        return resolved

    def run_inside(self, folder: Path, name: str) -> Path:
        """A run folder named on the command line, resolved; one outside this project's results/ is refused, so
        that no command judges, resumes or grades another project's run into this project's ledger."""
        resolved = folder.resolve()
        results = self.results_dir.resolve()
        if results not in resolved.parents:
            raise RunError(f"{name}: the run is outside this project's {self.relative(self.results_dir)}/ "
                           f"({self.root}); use `benchcard -C <its project>`")
        return resolved

    def refuse_protected(self, path: Path, shown: str, *, folder: bool = False, allow: Path | None = None) -> None:
        """The one check of every output path a user names (`export --out`, `blind-sheet --out`, `site --out`,
        `compare --out`): nothing is written over, or created in, what the project owns — the ledger and
        anything under results/ (run folders, sealed files), cards/, fixtures/ or keys/ (keys and seals), or
        benchcard.yaml — not even with --force. A folder (`folder`) may not be the project itself nor hold it.
        `allow` is a folder under results/ that a command fills itself (compare's `results/_compare/`): a new
        path inside it is taken. Links are followed to where they point."""
        target = path.resolve()
        root = self.root.resolve()
        where = None
        if folder and (target == root or target in root.parents):
            where = "the project folder" if target == root else "a folder holding the project"
        elif target == (root / "benchcard.yaml").resolve():
            where = "the project's benchcard.yaml"
        elif target == self.ledger_path.resolve():
            where = "the ledger"
        for owned in (self.results_dir, self.cards_dir, self.root / "fixtures", self.root / "keys"):
            real = owned.resolve()
            if where is None and (target == real or real in target.parents):
                allowed = allow is not None and allow.resolve() in target.parents and not os.path.lexists(target)
                where = None if allowed else f"under {self.relative(owned)}/"
        if where is not None:
            raise RunError(f"{shown}: that is {where}, part of the project's own records; benchcard never "
                           "writes over it or adds to it. Choose a path outside results/, cards/, fixtures/ "
                           "and keys/")

    def config(self) -> ProjectConfig:
        """The project's `benchcard.yaml`, read and checked whole now (an empty config when there is none)."""
        return read_config(self.root / CONFIG_FILE)

    def relative(self, path: Path) -> str:
        """A path as the user should see it: relative to the project when it is inside."""
        try:
            return str(Path(os.path.realpath(path)).relative_to(self.root.resolve()))  # a link in a loop too
        except ValueError:
            return str(path)

    def named_within(self, message: str) -> str:
        """A message with each path into results/ named from the project's root (`results/…/manifest.json`), the
        way every error names a run's files: a reader handed a run folder names it as given, which is absolute.
        Only a path that starts at the root is renamed (after a space, a quote or a bracket, or at the message's
        start); any other path in the project (its cards folder, named to say which project) is left as it is."""
        for root in sorted({str(self.root), os.path.realpath(self.root)}, key=len, reverse=True):
            if Path(root).parent == Path(root):  # a project at / would rename every absolute path
                continue
            inside = re.escape(root.rstrip(os.sep) + os.sep) + f"(?={re.escape(self.results_dir.name + os.sep)})"
            message = re.sub(r"(?<![^\s(\"'`=,])" + inside, "", message)
        return message

    def recorded(self, path: Path) -> str:
        """A path in the project as a record names it (a verdict's and a ledger row's `evidence`, a replication's
        link): from the project's root, `/` between its parts on every system, and through the project's own
        results/ where that folder is a link to another disk (as `relative` names it, by where the link leads, a
        run was entered as `/…/disk/<card>/v1/<run>`, a path of this machine no clone of the project has). A path
        outside the project is named as given."""
        real = Path(os.path.realpath(path))
        for folder, named in ((self.results_dir, (self.results_dir.name,)), (self.root, ())):
            try:
                inside = real.relative_to(os.path.realpath(folder))
            except ValueError:
                continue
            return PurePosixPath(*named, *inside.parts).as_posix()
        return str(path)

    def relative_link(self, path: Path) -> str:
        """`relative`, the last part as written: a link is named itself, never where it leads (or fails to)."""
        return str(Path(self.relative(path.parent)) / path.name)


#: A version as `Project.run_dir` (`v3/`) and `Project.seal_path` (`v3.seal.json`) name it: ASCII digits without a
#: leading zero, at most nine. str.isdigit() and \d also take '²' and '١', int() reads `v1_0` as 10, and `v01` as 1
#: would be a second folder of v1.
_VERSION_NAME = re.compile(r"v(0|[1-9][0-9]{0,8})")


def version_named(name: str) -> int | None:
    """The version a version folder's name, or a seal file's name without `.seal.json`, is (`v3`: 3): the one
    reading of a name `run_dir` and `seal_path` write, for the commands, the seals and the site alike; None for any
    other name, which is no version's."""
    match = _VERSION_NAME.fullmatch(name)
    return int(match.group(1)) if match else None


def enclosing_project(folder: Path) -> Path | None:
    """The nearest folder above `folder` that is a benchcard project (a benchcard.yaml, or a card in its cards/
    folder): a project inside it keeps cards, results and a ledger of its own beside that one's, so `init`
    refuses to make one there unless told, and a command found there says so. A cards/ folder alone is not one:
    a home folder often holds one (scans, notes), and every project below it was refused and noted."""
    for above in folder.resolve().parents:
        if (above / CONFIG_FILE).is_file() or _holds_a_card(above / "cards"):
            return above
    return None


def _holds_a_card(cards: Path) -> bool:
    try:
        return cards.is_dir() and any(p.suffix == ".yaml" and p.is_file() for p in cards.iterdir())
    except OSError:  # unreadable: nothing known to be a project there
        return False


ProjectLike = Project | str | os.PathLike[str]
"""What every public function takes where it takes a project (`Project.of` turns it into one)."""


def given_name(given: object, argument: str, error: type[BenchcardError] = RunError) -> str:
    """A card or run a Python caller named (an id, a prefix, a path: `str` or a path object), as text; anything
    else is one line naming the argument, instead of a TypeError from deep inside `os` or `pathlib`."""
    name = os.fspath(given) if isinstance(given, str | os.PathLike) else None
    if not isinstance(name, str):
        raise error(f"{argument}={given!r}: expected an id or a path (str or Path)")
    if not name:  # never the run the current folder is, or a prefix every run has
        raise error(f"{argument}='': empty (a variable set but empty?); give an id or a path")
    return name


# ------------------------------------------------------------------------------------------- benchcard.yaml

CONFIG_FILE = "benchcard.yaml"
CONFIG_FIELDS = ("providers", "prices")
#: A price's fields (USD per million tokens, but `batch_discount`): a misspelt one would price its tokens in full.
PRICE_FIELDS = ("input", "output", "batch_discount", "cached_input", "cache_write", "cache_write_1h")
#: The optional per-token prices of a prompt cache, each in USD per million tokens like `input`.
CACHE_PRICES = ("cached_input", "cache_write", "cache_write_1h")
ProviderType = Literal["openai", "anthropic", "local"]
PROVIDER_TYPES: tuple[ProviderType, ...] = ("openai", "anthropic", "local")
BUILTIN_NAMES = ("openai", "openrouter", "anthropic", "local")  # as `run.providers.BUILTIN` declares them
PROVIDER_FIELDS = ("type", "base_url", "api_key_env", "requests_per_minute", "headers", "base_urls", "pool",
                   "batch_limits")
POOL_KEYS: dict[str, float | int] = {"fail_after": 3, "out_for_s": 10.0}
#: The smallest `batch_limits.bytes` taken: a batch file must hold its wrapper and at least one whole request.
MIN_BATCH_BYTES = 1024
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name (RFC 9110 token)
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@dataclass(frozen=True)
class ProviderField:
    """Where a provider's setting is written: the file and the provider's name, kept apart so that a line is built
    from them and never read back out of one (a file in a folder named `it's` or a name holding `: field` was
    cut at the wrong quote)."""

    source: str
    provider: str

    def at(self, sub: str = "") -> str:
        """`<file>: field 'providers.<name>.<sub>'`, the provider itself when `sub` is empty."""
        return f"{self.source}: field '{self.path(sub)}'"

    def path(self, sub: str = "") -> str:
        """`providers.<name>.<sub>`: the field's path in the file."""
        return f"providers.{self.provider}" + (f".{sub}" if sub else "")


@dataclass(frozen=True)
class Endpoint:
    """One server of a pool (`base_urls` in benchcard.yaml): its URL, calls in flight at most, requests per
    minute at most (None: the run's --concurrency and no limit)."""

    url: str
    concurrency: int | None = None
    requests_per_minute: float | None = None


@dataclass(frozen=True)
class Price:
    """USD per million tokens, as the user configured it; benchcard itself knows no prices. Also the price block
    of `plan --json`, which names the unit and leaves out `batch_discount` (`planning.result.Plan.fields`).

    The prompt cache's prices are optional, as the vendors quote them per model (docs/prices.md): `cached_input`
    for input tokens read from the cache (OpenAI's cached input, Anthropic's cache hits), `cache_write` and
    `cache_write_1h` for Anthropic's 5-minute and 1-hour cache writes. None: not given, and then a cached token is
    priced at `input` (the cost an upper bound, said so), and a cache write leaves the cost unknown
    (`run.providers.cost_of`)."""

    unit: ClassVar[str] = "USD per 1M tokens"
    input: float
    output: float
    batch_discount: float | None = None  # share taken off in a vendor's batch API (0.5: half price); None: unknown
    cached_input: float | None = None  # an input token read from the prompt cache; None: not given
    cache_write: float | None = None  # an input token written to Anthropic's 5-minute cache; None: not given
    cache_write_1h: float | None = None  # one written to its 1-hour cache; None: not given


@dataclass(frozen=True)
class ProviderSettings:
    """One provider as `benchcard.yaml` declares it under `providers:`, checked: the run turns it into a
    `run.providers.ProviderConfig` (`base_url` as written, `user:password@` still in it)."""

    type: ProviderType
    base_url: str | None = None  # the pool's first server when `endpoints` is a pool
    api_key_env: str | None = None
    requests_per_minute: float | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    endpoints: tuple[Endpoint, ...] = ()  # `base_urls`: a pool of servers of one model
    pool: Mapping[str, float] = field(default_factory=dict)  # fail_after, out_for_s (only with a pool)
    batch_limits: Mapping[str, int] = field(default_factory=dict)  # requests, bytes: lower than the vendor's


@dataclass(frozen=True)
class ProjectConfig:
    """A project's `benchcard.yaml`: the providers it declares and the prices it gives, by name and model."""

    providers: Mapping[str, ProviderSettings] = field(default_factory=dict)
    prices: Mapping[str, Price] = field(default_factory=dict)


def read_config(path: Path) -> ProjectConfig:
    """`benchcard.yaml` read and checked whole: an unknown field, at the top or in a provider, is refused as a
    card's is (a misspelt `price:` would otherwise leave every cost unknown); each error is one line naming the
    file, the field and what was expected."""
    if not given(path, CONFIG_FILE, ProviderError):
        return ProjectConfig()
    text = read_regular_text(path, CONFIG_FILE, ProviderError, max_bytes=MAX_YAML_BYTES)
    data = load_yaml(text, CONFIG_FILE, ProviderError, may_hold_secret)[0]
    if data is None:
        return ProjectConfig()
    return parse_config(data)


#: A provider's fields that may hold a secret: a header's value (`Authorization: Bearer sk-…`), a URL's password, and
#: the key itself pasted where its variable's name goes. No error line says their values back.
SECRET_FIELDS = ("headers", "base_url", "base_urls", "api_key_env")


def may_hold_secret(path: tuple[str, ...]) -> bool:
    """Whether the field at `path` in benchcard.yaml (`("providers", "p", "headers", "Authorization")`), or a part
    of it, may hold a secret: an error line names such a field and what was read, never the value."""
    return len(path) >= 3 and path[0] == "providers" and path[2] in SECRET_FIELDS


def parse_config(data: object, source: str = CONFIG_FILE) -> ProjectConfig:
    """A parsed `benchcard.yaml` (the YAML's value) as a `ProjectConfig`; see `read_config`."""
    if not isinstance(data, Mapping):
        raise ProviderError(f"{source}: expected a mapping with providers and prices")
    unknown = sorted(str(k) for k in data if k not in CONFIG_FIELDS)
    if unknown:
        raise ProviderError(f"{source}: {_unknown_field(unknown[0], '')}: unknown field; expected providers or "
                            "prices")
    raw = data.get("providers")
    providers: dict[str, ProviderSettings] = {}
    if raw is not None:
        if not isinstance(raw, Mapping):
            raise ProviderError(f"{source}: field 'providers': expected a mapping of provider name to settings")
        _check_provider_names([str(n) for n in raw], source)
        providers = {str(name): provider_settings(str(name), entry, source) for name, entry in raw.items()}
    return ProjectConfig(providers, price_table(data.get("prices"), source))


def provider_settings(name: str, entry: object, source: str = CONFIG_FILE) -> ProviderSettings:
    """One provider's settings, each of them, as a run would read them; each line names `source` and the field."""
    at = ProviderField(source, name)
    if not isinstance(entry, Mapping):
        raise ProviderError(f"{at.at()}: expected a mapping with type, base_url, api_key_env, ...")
    unknown = sorted(str(k) for k in entry if k not in PROVIDER_FIELDS)
    if unknown:
        raise ProviderError(f"{source}: {_unknown_field(unknown[0], at.path())}: not a provider setting; expected "
                            "one of " + ", ".join(PROVIDER_FIELDS))
    type_ = entry.get("type")
    if type_ not in PROVIDER_TYPES:
        raise ProviderError(f"{at.at('type')}: expected openai, anthropic or local, got {type_!r}")
    key_env = entry.get("api_key_env") if isinstance(entry.get("api_key_env"), str) else None
    raw_url = entry.get("base_url")
    base_url = None if raw_url is None else check_url(raw_url, at.at("base_url"), key_env)
    if entry.get("api_key_env") is not None:
        check_env_name(entry["api_key_env"], at.at("api_key_env"))  # so that key_env is all it can be
    rpm = entry.get("requests_per_minute")
    if rpm is not None and (isinstance(rpm, bool) or not isinstance(rpm, int | float) or not math.isfinite(rpm)
                            or rpm <= 0):
        raise ProviderError(f"{at.at('requests_per_minute')}: expected a number > 0, got {rpm!r} "
                            "(leave it out for no limit)")
    check_headers(entry.get("headers"), at)
    check_auth(type_, entry.get("base_url"), key_env, at.at("base_url"))
    pool = parse_endpoints(name, entry, key_env, source)
    if not pool and entry.get("pool") is not None:
        raise ProviderError(f"{at.at('pool')}: pool settings need a pool of servers (base_urls)")
    settings = parse_pool(name, entry, source)
    return ProviderSettings(
        type=cast(ProviderType, type_),
        base_url=pool[0].url if pool else base_url,
        api_key_env=key_env,
        requests_per_minute=rpm,
        headers=dict(entry.get("headers") or {}),
        endpoints=pool,
        pool=settings if pool else {},
        batch_limits=parse_batch_limits(name, entry, source),
    )


def _unknown_field(key: str, parent: str) -> str:
    """`field '<parent>.<key>'` (`parent`, a field's path, empty at the top level) for a key no setting has, or,
    when it is no name (`Authorization:Bearer sk-…`, a header written without the space after its colon, is one key
    holding its value), the key's length and not the key itself."""
    if _TOKEN.fullmatch(key):
        return f"field '{parent + '.' if parent else ''}{key}'"
    return (f"field '{parent or '(top level)'}': a key of {len(key)} character(s) that is no name (not shown: it may "
            "hold a secret, such as a header written without the space after its colon)")


def _check_provider_names(names: list[str], source: str) -> None:
    """A provider's name is read on every page and in every rig line: it reads as itself, and no two names (the
    built-in ones included) look alike (`_util/names.py`)."""
    clash = name_clash([*BUILTIN_NAMES, *names])
    if clash is None:
        return
    name, other, problem = clash
    if other:
        raise ProviderError(f"{source}: field 'providers': provider names {shown(name)} and {shown(other)} "
                            f"{problem}; give them names that look different")
    raise ProviderError(f"{source}: field 'providers': provider name {shown(name)} {problem}")


def check_env_name(name: object, where: str) -> str:
    """An environment variable's name: letters, digits and `_`, not starting with a digit (so that a shell
    command built around `$NAME` can run nothing else). Text that is not one is never quoted: it is most often
    the key itself, pasted in place of its variable's name."""
    if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
        got = (f"text of {len(name)} character(s) that is not one, quoted nowhere since it may be the key itself "
               "(only the name of the variable that holds the key goes here)") if isinstance(name, str) else (
            f"{read_as(name)} (not shown: it may be the key itself; quote a name YAML reads so)")
        raise ProviderError(f"{where}: expected an environment variable name ([A-Za-z_][A-Za-z0-9_]*), got {got}")
    if keylike_name(name):
        raise ProviderError(f"{where}: expected the name of the variable that holds the key, got {len(name)} "
                            "characters mixing lower and upper case and digits as a key does (`hf_…`, `gsk_…`), "
                            "quoted nowhere since it may be the key itself; name its variable (OPENAI_API_KEY)")
    return name


def keylike_name(name: str) -> bool:
    """A variable's name that reads as a key (24 characters or more, lower and upper case and digits mixed): a key
    of only letters, digits and `_` (Hugging Face's `hf_…`, Groq's `gsk_…`) pasted in place of its variable's name
    would be printed by every line naming the variable (`… is not set`, `curl`'s `$NAME`)."""
    return (len(name) >= 24 and any(c.islower() for c in name) and any(c.isupper() for c in name)
            and sum(c.isdigit() for c in name) >= 2)


def check_headers(headers: object, at: ProviderField) -> None:
    """Extra headers: names that are HTTP tokens, values one line of text each."""
    if headers is None:
        return
    if not isinstance(headers, Mapping):
        raise ProviderError(f"{at.at('headers')}: expected a mapping of header name to text")
    for key, value in headers.items():
        if not isinstance(key, str) or not _TOKEN.fullmatch(key):  # `{Authorization:Bearer sk-…}` is one key
            raise ProviderError(f"{at.at('headers')}: expected a header name (letters, digits, -), got "
                                f"{read_as(key) if not isinstance(key, str) else f'text of {len(key)} character(s)'} "
                                "that is not one (not shown: it may hold the header's value, a secret; write "
                                "`Name: value`, a space after the colon)")
        if not isinstance(value, str) or _CONTROL.search(value):
            raise ProviderError(f"{at.at(f'headers.{key}')}: expected one line of text, got {read_as(value)} (not "
                                "shown: a header may hold a secret); quote it"
                                if not isinstance(value, str) else
                                f"{at.at(f'headers.{key}')}: expected one line of text without control characters")


def check_auth(type_: object, base_url: object, key_env: object, where: str) -> None:
    """Credentials in a base URL are sent as `Authorization: Basic`; an OpenAI-type key is sent in that same
    header, so the two together cannot both reach the server."""
    if isinstance(base_url, str) and credentials(base_url) is not None and type_ == "openai" and key_env:
        raise ProviderError(f"{where}: the URL's user:password and the key in ${key_env} would both be the "
                            "Authorization header; keep one (api_key_env: null in benchcard.yaml for a proxy "
                            "that takes a password)")


def _pool_url(value: Any, where: str, key_env: str | None) -> str:
    url = check_url(value, where, key_env)
    if credentials(url) is not None:  # each output records its server's URL: a password there would be stored
        raise ProviderError(f"{where}: a pool URL may not carry user:password; use one base_url for a server "
                            "behind a password")
    return url


#: The most calls in flight, of a run (`--concurrency`) or of one server of a pool: each holds a socket and a
#: worker, and no provider's rate limit lets more through (a billion once started a billion workers).
MAX_CONCURRENCY = 1024


def _positive(value: Any, where: str, *, integer: bool, most: int | None = None) -> Any:
    if value is None:
        return None
    ok = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok or not math.isfinite(value) or value <= 0:
        kind = "an integer" if integer else "a number"
        raise ProviderError(f"{where}: expected {kind} > 0, got {value!r}")
    if most is not None and value > most:
        raise ProviderError(f"{where}: expected at most {most:,} calls in flight (each holds a socket; no "
                            f"provider's rate limit lets more through), got {value:,}")
    return value


def parse_endpoints(name: str, declared: Mapping[str, Any], key_env: str | None,
                    source: str = CONFIG_FILE) -> tuple[Endpoint, ...]:
    """The pool of `providers.<name>.base_urls`, or () when the provider names one `base_url`; `key_env`, the
    provider's checked `api_key_env`, is where a line refusing a URL that carries a key says the key goes.

        providers:
          vllm:
            type: openai
            base_urls:
              - http://gpu1:8000/v1
              - {url: http://gpu2:8000/v1, concurrency: 32, requests_per_minute: 600}
            pool: {fail_after: 3, out_for_s: 10}

    Each server serves the same model (checked at the start of a run, `run/_pool.py`).
    """
    raw = declared.get("base_urls")
    if raw is None:
        return ()
    at = ProviderField(source, name)
    if declared.get("base_url") is not None:
        raise ProviderError(f"{at.at('base_urls')}: give base_url or base_urls, not both")
    if not isinstance(raw, list) or not raw:
        raise ProviderError(f"{at.at('base_urls')}: expected a non-empty list of URLs or "
                            "{url, concurrency, requests_per_minute}")
    endpoints: list[Endpoint] = []
    for i, entry in enumerate(raw):
        where, item = at.at(f"base_urls[{i}]"), f"base_urls[{i}]"
        if isinstance(entry, str):
            endpoints.append(Endpoint(_pool_url(entry, where, key_env)))
            continue
        if not isinstance(entry, Mapping):
            raise ProviderError(f"{where}: expected a URL or {{url, concurrency, requests_per_minute}}, got "
                                f"{read_as(entry)} (not shown: a URL may hold a password; quote a URL YAML reads so)")
        unknown = sorted(set(entry) - {"url", "concurrency", "requests_per_minute"})
        if unknown:
            raise ProviderError(f"{where}: unknown key {unknown[0]!r}; expected url, concurrency, "
                                "requests_per_minute")
        endpoints.append(Endpoint(_pool_url(entry.get("url"), at.at(f"{item}.url"), key_env),
                                  _positive(entry.get("concurrency"), at.at(f"{item}.concurrency"), integer=True,
                                            most=MAX_CONCURRENCY),
                                  _positive(entry.get("requests_per_minute"), at.at(f"{item}.requests_per_minute"),
                                            integer=False)))
    _check_pool(at, endpoints)
    return tuple(endpoints)


def _check_pool(at: ProviderField, endpoints: Sequence[Endpoint]) -> None:
    """No server twice, and no more calls in flight over the pool than a run may keep: its workers are started at
    once (a server stating no concurrency takes --concurrency, at least 1; the run checks it at that figure)."""
    urls = [e.url for e in endpoints]
    for url in urls:
        if urls.count(url) > 1:
            raise ProviderError(f"{at.at('base_urls')}: {url} is listed twice")
    least = pool_concurrency(endpoints, 1)
    if least > MAX_CONCURRENCY:
        raise ProviderError(f"{at.at('base_urls')}: {len(endpoints):,} servers take {least:,} calls in flight "
                            f"together{' at the least' if any(e.concurrency is None for e in endpoints) else ''}, "
                            f"more than the {MAX_CONCURRENCY:,} a run may keep (each holds a socket and a worker); "
                            "give the servers lower concurrencies, or fewer servers")


def pool_concurrency(endpoints: Sequence[Endpoint], concurrency: int) -> int:
    """Calls in flight at most over a pool: each server's own concurrency, else `concurrency` (the run's) each."""
    return sum(e.concurrency or concurrency for e in endpoints)


def parse_pool(name: str, declared: Mapping[str, Any], source: str = CONFIG_FILE) -> dict[str, float]:
    """`pool: {fail_after, out_for_s}`: failures in a row that take a server out, and for how long at first."""
    at = ProviderField(source, name)
    raw = declared.get("pool") or {}
    if not isinstance(raw, Mapping):
        raise ProviderError(f"{at.at('pool')}: expected {{fail_after: N, out_for_s: seconds}}")
    unknown = sorted(set(raw) - set(POOL_KEYS))
    if unknown:
        raise ProviderError(f"{at.at('pool')}: unknown key {unknown[0]!r}; expected fail_after, out_for_s")
    return {key: float(_positive(raw.get(key, default), at.at(f"pool.{key}"), integer=key == "fail_after"))
            for key, default in POOL_KEYS.items()}


def parse_batch_limits(name: str, declared: Mapping[str, Any], source: str = CONFIG_FILE) -> dict[str, int]:
    """`batch_limits: {requests: N, bytes: N}`: smaller batches than the vendor allows (an organisation's quota)."""
    at = ProviderField(source, name)
    raw = declared.get("batch_limits") or {}
    if not isinstance(raw, Mapping) or set(raw) - {"requests", "bytes"}:
        raise ProviderError(f"{at.at('batch_limits')}: expected {{requests: N, bytes: N}}")
    limits = {k: int(_positive(v, at.at(f"batch_limits.{k}"), integer=True)) for k, v in raw.items()}
    if limits.get("bytes", MIN_BATCH_BYTES) < MIN_BATCH_BYTES:
        raise ProviderError(f"{at.at('batch_limits.bytes')}: expected an integer >= {MIN_BATCH_BYTES} (a "
                            f"batch file must hold at least one whole request), got {limits['bytes']}")
    return limits


def price_table(raw: object, source: str = CONFIG_FILE) -> dict[str, Price]:
    """`prices: {<model>: {input: USD per 1M tokens, output: USD per 1M tokens}}` from `benchcard.yaml`, each model
    with an optional `batch_discount` and prompt-cache prices (`CACHE_PRICES`)."""
    raw = raw or {}
    if not isinstance(raw, Mapping):
        raise ProviderError(f"{source}: field 'prices': expected a mapping of model to {{input, output}}")
    table: dict[str, Price] = {}
    for model, entry in raw.items():
        if not isinstance(entry, Mapping):
            raise ProviderError(f"{source}: field 'prices.{model}': expected {{input: USD, output: USD}} "
                                "per million tokens")
        if unknown := sorted(str(k) for k in entry if k not in PRICE_FIELDS):
            raise ProviderError(f"{source}: field 'prices.{model}.{unknown[0]}': unknown field; expected "
                                f"{', '.join(PRICE_FIELDS[:-1])} or {PRICE_FIELDS[-1]}")
        values = [_usd(entry.get(side), f"{source}: field 'prices.{model}.{side}'") for side in ("input", "output")]
        cache = {name: None if entry.get(name) is None else
                 _usd(entry[name], f"{source}: field 'prices.{model}.{name}'") for name in CACHE_PRICES}
        discount = entry.get("batch_discount")
        if discount is not None and (isinstance(discount, bool) or not isinstance(discount, int | float)
                                     or not 0 <= discount < 1):
            raise ProviderError(f"{source}: field 'prices.{model}.batch_discount': expected the share taken off "
                                f"in a batch, a number in [0, 1) such as 0.5, got {discount!r}")
        table[str(model)] = Price(values[0], values[1], None if discount is None else float(discount), **cache)
    return table


def _usd(value: object, where: str) -> float:
    """A price in USD per million tokens: a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ProviderError(f"{where}: expected USD per million tokens (a number >= 0), got {value!r}")
    return float(value)
