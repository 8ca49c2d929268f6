"""A proxy benchcard's client cannot speak to (socks5://, often in $ALL_PROXY), refused before the first call.

aiohttp, under every call benchcard makes, speaks HTTP to any proxy: a SOCKS server would get an HTTP request line
and each call a garbled error, so a run sent every cell, recorded each as failed, and its stop line blamed the
endpoint. The client routes such a proxy to `Unusable`, which sends nothing; a provider made on that client asks
`refusal` first (`providers.base.HttpProvider`), so the run, `check --live`, the judge and a batch stop at once in
one line naming the variable to change. httpx's socks extra would not help: it is httpx's own transport's, not
aiohttp's.
"""

from __future__ import annotations

import os

import httpx

#: The kinds of proxy aiohttp can use.
USABLE = ("http", "https")


class Unusable(httpx.AsyncBaseTransport):
    """The route to a proxy of another kind: nothing is ever sent; a call that reaches it anyway says why."""

    def __init__(self, url: httpx.URL) -> None:
        self.url = url

    def said(self, called: httpx.URL) -> str:
        """One line: the variable, the proxy (scheme, host and port: never its user or password), what to set."""
        variable = _variable(called.scheme)
        return (f"{variable}={self.url.scheme}://{self.url.host}:{self.url.port}: benchcard's client can use only an "
                f"http:// (or https://) proxy, not a {self.url.scheme}:// one; set {variable} to an http:// proxy, "
                f"unset it, or list {called.host} in NO_PROXY")

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise httpx.ProxyError(self.said(request.url), request=request)


def refusal(client: httpx.AsyncClient, url: httpx.URL) -> str | None:
    """Why `client` cannot call `url` (its route is a proxy it cannot use), or None when it can. httpx's own choice
    of route (`_transport_for_url`: the mounts $*_PROXY and $NO_PROXY made, and benchcard's loopback rule) is asked,
    so the refusal and the calls agree on every host."""
    route = client._transport_for_url(url)
    return route.said(url) if isinstance(route, Unusable) else None


def _variable(scheme: str) -> str:
    """The variable a proxy for a `scheme` URL came from, as urllib reads them (lowercase first; the scheme's own
    before ALL_PROXY, as httpx's mounts rank them)."""
    for kind in (scheme, "all"):
        for name in (f"{kind}_proxy", f"{kind.upper()}_PROXY"):
            if os.environ.get(name):
                return name
    return "ALL_PROXY"
