"""Endpoint URLs: validated before anything is planned, and stripped of credentials before anything is stored.

`http://user:secret@host/v1` is a common way to reach a proxy. The user and password are treated like an API
key: kept in memory only, sent as an `Authorization: Basic` header, and removed from every URL that is
written (manifest, sealed requests, judge requests, batch journal, pages, `curl`); a user name that is a token
(`https://TOKEN@host`) is a secret as a password is (`secret_user`).

There is one path: a `ProviderConfig` splits them off its `base_url` when it is made (`split_credentials`), so
no URL any writer can reach still carries them; only `ProviderConfig.credentials` (never printed) holds them.
A key in the query (`?key=…`, Gemini's habit) is refused before anything is planned, saying where the key goes
instead; an error line quotes a URL only as `shown_url` writes it, without a password, a query or a fragment.
"""

from __future__ import annotations

import base64
import ipaddress
import re
import socket
import urllib.parse

from benchcard._util.yamlread import read_as
from benchcard.errors import ProviderError

_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
#: Query parameters that carry a key or a token (Gemini's `?key=`, Azure's `?api-key=` and `?code=`, `?token=`),
#: compared in lower case with `-` read as `_`.
SECRET_PARAMS = frozenset({"key", "api_key", "apikey", "x_api_key", "token", "access_token", "auth", "auth_token",
                           "code", "password", "secret", "sig", "signature"})


def check_url(url: object, where: str, key_env: str | None = None) -> str:
    """An absolute http(s) URL with a host, without spaces or control characters, a query or a fragment, or an
    '@' after its host (a password holding '/', '?' or '#' would be read as host, port and path, query or
    fragment, and stored); trailing `/` dropped. A query carrying a key is refused saying where the key goes
    (`key_env`, the provider's `api_key_env`, when it names one); no line quotes the URL but as `shown_url` writes
    it."""
    if not isinstance(url, str) or not url:
        got = "''" if url == "" else f"{read_as(url)} (not shown: a URL may hold a password; quote a URL YAML reads so)"
        raise ProviderError(f"{where}: expected an http(s) URL such as https://host/v1, got {got}")
    if not any(c in url for c in ":/"):  # no part of a URL: most often a key pasted in the URL's place
        raise ProviderError(f"{where}: expected an http(s) URL such as https://host/v1, got text of {len(url)} "
                            "character(s) without a ':' or '/', not quoted since it may be a key pasted in the "
                            "URL's place")
    if _UNSAFE.search(url):
        raise ProviderError(f"{where}: expected a URL without spaces or control characters, got {shown_url(url)!r}")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in range
    except ValueError as exc:
        raise ProviderError(f"{where}: not a valid URL ({_unparsed(exc)}): {shown_url(url)!r}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ProviderError(f"{where}: expected an http:// or https:// URL with a host, got {shown_url(url)!r}")
    if "@" in parts.path + parts.query + parts.fragment:  # `alice:2024/pw@host`: the host `alice`, the path `/pw@…`
        raise ProviderError(f"{where}: expected no '@' after the URL's host: a password holding '/', '?' or '#' ends "
                            "the host there, and what follows would be stored with the URL; write them as %2F, %3F "
                            "and %23 (an '@' of the path as %40)")
    secret = next((name for name, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
                   if name.lower().replace("-", "_") in SECRET_PARAMS), None)
    if secret is not None:
        env = f"${key_env} (the provider's api_key_env)" if key_env else "the variable the provider's api_key_env names"
        raise ProviderError(f"{where}: the URL carries a key in its query (?{secret}=…), which would be stored with "
                            f"the URL: put the key in {env}, sent as a header and never stored, and give the URL "
                            "without its query")
    if parts.query or parts.fragment:
        raise ProviderError(f"{where}: expected a base URL without ?query or #fragment")
    return url.rstrip("/")


def _unparsed(exc: ValueError) -> str:
    """Why the parser refused a URL, in words of benchcard's: its own quote the port (perhaps a password written
    without its '@') or the whole `user:password@host` (a character NFKC reads as '/')."""
    said = str(exc).lower()
    if "port" in said:
        return "its port is not a number from 0 to 65535"
    if "nfkc" in said:
        return "its host or password holds a character that reads as '/', '?', '#', '@' or ':' once normalized (NFKC)"
    if "ipv6" in said or "ipv4" in said:
        return "its host in brackets is not an IP address"
    return "the URL parser refused it"


def shown_url(url: str) -> str:
    """A URL as a line may quote it: without `user:password@`, and its query and fragment written `?…` and `#…`,
    since either may carry a key. Read by hand, not parsed, so that a URL no parser reads is shown safely too."""
    end = min([i for i in (url.find("?"), url.find("#")) if i >= 0] or [len(url)])
    rest = {"?": "?…", "#": "#…"}.get(url[end:end + 1], "")
    head = url[:end]
    start = head.find("//") + 2 if "//" in head else 0
    stop = head.find("/", start)
    stop = len(head) if stop < 0 else stop
    authority = head[start:stop].rpartition("@")[2]
    host, colon, port = authority.rpartition(":")
    if colon and "]" not in port and not (port.isascii() and port.isdigit()):  # not a port: a password, perhaps
        at = head.rfind("@")
        if at > stop:  # a password holding '/' (base64 does) ended the authority early: its '@' is in the "path"
            return shown_url(head[:start] + head[at + 1:]) + rest
        authority = f"{host}:…"  # written without its '@'
    return head[:start] + authority + head[stop:] + rest


def strip_credentials(url: str) -> str:
    """The URL as it may be stored or shown: any `user:password@` removed."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit(parts._replace(netloc=host))


def credentials(url: str | None) -> tuple[str, str] | None:
    """The (user, password) written in a URL, percent-decoded, or None."""
    if not url:
        return None
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return None
    return urllib.parse.unquote(parts.username or ""), urllib.parse.unquote(parts.password or "")


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """The URL as it may be stored, and the (user, password) it carried (None when it carried none)."""
    return strip_credentials(url), credentials(url)


def basic_auth(creds: tuple[str, str] | None) -> str | None:
    """The `Authorization` header value for a URL's credentials, or None when it has none."""
    if creds is None:
        return None
    token = base64.b64encode(f"{creds[0]}:{creds[1]}".encode()).decode("ascii")
    return f"Basic {token}"


#: A plain account name, as a proxy's user is: a letter first, then up to 31 letters, digits, `.`, `_` or `-`.
_ACCOUNT = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,31}")
#: Under this many characters a user name cannot be told from a model's own words (a key's least length).
_SHORTEST_SECRET = 8


def secret_user(user: str) -> bool:
    """Whether a URL's user name is a secret as a password is: a token given as the user (`https://TOKEN@host`,
    no password) is no plain short account name, which has fewer than 4 digits; a name under 8 characters is
    one (it could not be kept out of a reply without cutting words out of it)."""
    return len(user) >= _SHORTEST_SECRET and not (_ACCOUNT.fullmatch(user) and sum(c.isdigit() for c in user) < 4)


def secrets_of(creds: tuple[str, str] | None) -> tuple[str, ...]:
    """What of a URL's credentials must never be stored, kept out of a reply like a key: the password, a user
    name that is a token (`secret_user`), and the `Basic` token that carries them (a server echoing the
    request's headers sends that back)."""
    if creds is None:
        return ()
    secrets = tuple(s for s in (creds[0] if secret_user(creds[0]) else "", creds[1]) if s)
    header = basic_auth(creds)
    assert header is not None
    return (*secrets, header.removeprefix("Basic ")) if secrets else ()


#: The names that are this machine's own by their name alone, never looked up (nss-myhostname(8)): another alias a
#: hosts file gives 127.0.0.1 (`localhost4`, `ip6-localhost`, a machine's own name) is a name like any other, sent to
#: the proxy unless $NO_PROXY lists it.
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain")
_UNDER_LOOPBACK_NAMES = tuple(f".{name}" for name in _LOOPBACK_NAMES)


def is_loopback(host: str) -> bool:
    """Whether a URL's host is this machine's own: `localhost` and any name under it (`app.localhost`, RFC 6761),
    `localhost.localdomain` and any name under it (which a Red Hat hosts file gives 127.0.0.1 and ::1, and
    systemd's resolver answers with them whatever the hosts file says, as it answers `localhost`), an address of
    127.0.0.0/8 (Linux answers all of it on `lo`; also in a form only the resolver reads as one, `0x7f.1`, which
    httpx and aiohttp take for a name; `127.1` and `2130706433` aiohttp refuses outright), `::1` (bracketed or
    not) or an IPv4 loopback written as IPv6 (`::ffff:127.0.0.2`). A proxy could not reach such a server, so no
    call to it is proxied."""
    name = host.strip("[]").rstrip(".").lower()
    if name in _LOOPBACK_NAMES or name.endswith(_UNDER_LOOPBACK_NAMES):
        return True
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(name)
    except ValueError:
        try:  # inet_aton reads what getaddrinfo takes for an IPv4 address, short and numeric forms included
            address = ipaddress.IPv4Address(socket.inet_aton(name))
        except OSError:
            return False
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return (mapped or address).is_loopback
