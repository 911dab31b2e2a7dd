"""io.fetch: plain HTTP/1.1 GETs over asyncio streams, for the runner's own crawls.

A crawl of many small sitemaps spends most of its time in the HTTP client, not in the
network: httpx, httpcore, h11 and anyio cost about 1 ms of CPU per request on the 2-core
machine of issue #15, asyncio's streams with this module's framing about 0.07 ms. So the
runner sends the requests it can through :class:`Wire` and everything else through
httpx, which stays the client of record (a caller's own ``client``, proxies, unusual URLs).

What :class:`Wire` does: ``GET`` with the crawl's headers over ``http`` or ``https``
(httpx's SSL context: certifi, or ``SSL_CERT_FILE``/``SSL_CERT_DIR``), HTTP/1.1 with
keep-alive, connections kept per origin while idle (at most ``max_idle`` of them, none
longer than :data:`KEEPALIVE` seconds, none the server closed meanwhile). A failure is
never retried here, as httpx does not: the runner counts its tries. Bodies are framed as
RFC 9112 §6.3 says (no body for 1xx, 204 and 304; ``Transfer-Encoding: chunked``;
``Content-Length``; else to the end of the connection) and handed out raw, in pieces of
at most :data:`PIECE` bytes, as an ``httpx.Response`` whose stream this is: the runner
reads both clients' answers the same way. Failures are httpx's exceptions
(``ConnectError``, ``ConnectTimeout``, ``ReadError``, ``ReadTimeout``, ``WriteError``,
``RemoteProtocolError``), so the runner handles them once. The ``timeout`` bounds the
connection, the request's writing and each read, as httpx's does.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import urllib.request
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Final
from urllib.parse import urlsplit

import httpx

from ..http import new_client

__all__ = ["KEEPALIVE", "PIECE", "Clients", "Wire"]

#: Seconds an idle connection is kept for the next request to its origin (httpx's default).
KEEPALIVE: Final = 5.0
#: The largest piece of a body handed out at once (and read at once from the socket).
PIECE: Final = 65_536
#: The status line and headers of one answer may take this many bytes (h11 allows 16 KiB).
HEAD_LIMIT: Final = 65_536
_PORTS: Final = {"http": 80, "https": 443}
#: A request-target sent as it is: printable ASCII without spaces. Anything else (an IRI,
#: a space) goes through httpx, which encodes it.
_TARGET: Final = re.compile(r"[!-~]*")
_HOST: Final = re.compile(r"[A-Za-z0-9.\-_:\[\]]+")
_CHUNK_SIZE: Final = re.compile(rb"[0-9A-Fa-f]{1,16}")
_NO_BODY: Final = frozenset([204, 304])

Origin = tuple[str, str, int]


class _Connection:
    __slots__ = ("idle_since", "origin", "reader", "writer")

    def __init__(
        self, origin: Origin, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.origin = origin
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def usable(self) -> bool:
        return not self.reader.at_eof() and not self.writer.is_closing()

    def close(self) -> None:
        self.writer.close()


class Wire:
    """HTTP/1.1 ``GET`` requests over asyncio streams, connections kept alive per origin.

    ``headers`` go with every request (before the request's own); ``timeout`` bounds the
    connection, the writing and each read; at most ``max_idle`` idle connections are kept.

    >>> async def main():                                  # doctest: +SKIP
    ...     wire = Wire(headers={"User-Agent": "me"}, timeout=10, max_idle=8)
    ...     url = "http://127.0.0.1:8000/sitemap.xml"
    ...     if wire.handles(url):
    ...         response = await wire.get(url, {})
    ...         body = b"".join([piece async for piece in response.aiter_raw()])
    ...         await response.aclose()
    ...     await wire.aclose()
    """

    def __init__(self, *, headers: dict[str, str], timeout: float, max_idle: int) -> None:
        self.headers = headers
        self.timeout = timeout
        self.max_idle = max_idle
        self.connections = 0  # opened so far (a test counts them)
        self._idle: OrderedDict[_Connection, None] = OrderedDict()  # oldest first
        self._ssl: ssl.SSLContext | None = None
        self._split: tuple[str, tuple[Origin, str, str] | None] = ("", None)
        # Proxies from the environment are httpx's to honour (trust_env): with any set,
        # every request goes through httpx.
        proxies = urllib.request.getproxies_environment()
        self._direct = not any(proxies.get(k) for k in ("http", "https", "all"))

    def handles(self, url: str) -> bool:
        """Whether ``url`` is sent here: http(s), no user info, an ASCII host and target
        that need no encoding, and no proxy configured."""
        if not self._direct:
            return False
        self._split = (url, _split(url))  # for the get() that follows
        return self._split[1] is not None

    async def get(self, url: str, headers: dict[str, str]) -> httpx.Response:
        """Send ``GET url`` (one :meth:`handles`); the answer's head read, its body to be
        streamed (``aiter_raw``) and the response closed (``aclose``), which keeps the
        connection when it can."""
        split = self._split[1] if self._split[0] == url else _split(url)
        if split is None:
            raise httpx.UnsupportedProtocol(f"Not a URL this client sends: {url!r}")
        origin, target, host = split
        lines = [f"GET {target} HTTP/1.1", f"Host: {host}"]
        lines += [f"{k}: {v}" for k, v in {**self.headers, **headers}.items()]
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        conn = self._take(origin) or await self._connect(origin)
        try:
            return await self._exchange(conn, request)
        except BaseException:
            conn.close()
            raise

    async def aclose(self) -> None:
        """Close every idle connection (those of open responses close with them)."""
        for conn in self._idle:
            conn.close()
        self._idle.clear()

    # -- connections ------------------------------------------------------------------

    def _take(self, origin: Origin) -> _Connection | None:
        now = asyncio.get_running_loop().time()
        found = None
        for conn in list(self._idle):
            if conn.idle_since + KEEPALIVE < now or not conn.usable():
                del self._idle[conn]
                conn.close()
            elif found is None and conn.origin == origin:
                del self._idle[conn]
                found = conn
        return found

    def release(self, conn: _Connection) -> None:
        """Keep ``conn`` for the next request to its origin (a body read to its end)."""
        if not conn.usable():
            conn.close()
            return
        conn.idle_since = asyncio.get_running_loop().time()
        self._idle[conn] = None
        while len(self._idle) > self.max_idle:
            oldest, _ = self._idle.popitem(last=False)
            oldest.close()

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:  # loading the certificates takes a while: only for https
            self._ssl = httpx.create_ssl_context(trust_env=True)
            self._ssl.set_alpn_protocols(["http/1.1"])
        return self._ssl

    async def _connect(self, origin: Origin) -> _Connection:
        scheme, host, port = origin
        context = self._context() if scheme == "https" else None
        try:
            async with asyncio.timeout(self.timeout):
                reader, writer = await asyncio.open_connection(
                    host,
                    port,
                    ssl=context,
                    server_hostname=host if context is not None else None,
                    limit=HEAD_LIMIT,
                )
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"No connection within {self.timeout:g} s") from exc
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        self.connections += 1
        return _Connection(origin, reader, writer)

    # -- one exchange -----------------------------------------------------------------

    async def _exchange(self, conn: _Connection, request: bytes) -> httpx.Response:
        writer = conn.writer
        try:
            writer.write(request)
            if writer.transport.get_write_buffer_size():  # not all sent at once: wait
                async with asyncio.timeout(self.timeout):
                    await writer.drain()
        except TimeoutError as exc:
            raise httpx.WriteTimeout(f"Not sent within {self.timeout:g} s") from exc
        except OSError as exc:
            raise httpx.WriteError(str(exc) or type(exc).__name__) from exc
        while True:
            head = await self._head(conn)
            version, status, pairs = _parse_head(head)
            if not 100 <= status < 200:
                break  # 1xx answers are interim: the final one follows
        body = _Body(self, conn, status, version, pairs)
        return httpx.Response(status, headers=pairs, stream=body)

    async def _head(self, conn: _Connection) -> bytes:
        try:
            async with asyncio.timeout(self.timeout):
                return await conn.reader.readuntil(b"\r\n\r\n")
        except TimeoutError as exc:
            raise httpx.ReadTimeout(f"No answer within {self.timeout:g} s") from exc
        except asyncio.IncompleteReadError as exc:
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a complete response head"
            ) from exc
        except asyncio.LimitOverrunError as exc:
            raise httpx.RemoteProtocolError(
                f"The response head is longer than {HEAD_LIMIT:,} bytes"
            ) from exc
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc

    async def read(self, conn: _Connection, size: int) -> bytes:
        """Up to ``size`` bytes (``b""`` at the end of the connection), within ``timeout``."""
        try:
            async with asyncio.timeout(self.timeout):
                return await conn.reader.read(size)
        except TimeoutError as exc:
            raise httpx.ReadTimeout(f"No data within {self.timeout:g} s") from exc
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc

    async def line(self, conn: _Connection) -> bytes:
        """One CRLF-ended line of chunked framing, without its CRLF."""
        try:
            async with asyncio.timeout(self.timeout):
                return (await conn.reader.readuntil(b"\r\n"))[:-2]
        except TimeoutError as exc:
            raise httpx.ReadTimeout(f"No data within {self.timeout:g} s") from exc
        except asyncio.IncompleteReadError as exc:
            raise httpx.RemoteProtocolError("Server disconnected inside a chunked body") from exc
        except asyncio.LimitOverrunError as exc:
            raise httpx.RemoteProtocolError("A chunk's size line is too long") from exc
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc


class Clients:
    """The clients of one crawl: the wire for what it sends, httpx for the rest.

    ``client``: the caller's httpx client, used for every request (as documented); else
    our own, made when first needed (building one loads the CA certificates, about 0.1 s:
    a crawl the wire alone reads never does) and closed by :meth:`aclose`.
    """

    def __init__(
        self,
        client: httpx.AsyncClient | None,
        *,
        headers: dict[str, str],
        timeout: float,
        concurrency: int,
    ) -> None:
        self._client = client
        self._own = client is None
        self._headers = headers
        self._timeout = timeout
        self._concurrency = concurrency
        self.wire = (
            Wire(headers=headers, timeout=timeout, max_idle=concurrency) if self._own else None
        )

    @property
    def http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = new_client(
                headers=self._headers, timeout=self._timeout, concurrency=self._concurrency
            )
        return self._client

    async def send(self, url: str, headers: dict[str, str], timeout: float) -> httpx.Response:
        """``GET url``, its body not read yet: over the wire when it can, else by httpx."""
        wire = self.wire
        if wire is not None and wire.handles(url):
            return await wire.get(url, headers)
        client = self.http
        request = client.build_request("GET", url, headers=headers, timeout=httpx.Timeout(timeout))
        return await client.send(request, stream=True, follow_redirects=False)

    async def aclose(self) -> None:
        try:
            if self.wire is not None:
                await self.wire.aclose()
        finally:
            if self._own and self._client is not None:
                await self._client.aclose()


def _split(url: str) -> tuple[Origin, str, str] | None:
    """The origin, request-target and ``Host`` of ``url``; ``None`` for a URL left to
    httpx (not http(s), user info, a port that is no number, characters to encode)."""
    if not url.isascii():
        return None
    parts = urlsplit(url)
    scheme = parts.scheme
    default = _PORTS.get(scheme)
    netloc = parts.netloc
    if default is None or not netloc or "@" in netloc or _HOST.fullmatch(netloc) is None:
        return None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if _TARGET.fullmatch(target) is None:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname or ""
    if not host:
        return None
    shown = f"[{host}]" if ":" in host else host
    if port is not None and port != default:
        shown += f":{port}"
    return (scheme, host, port or default), target, shown


def _parse_head(head: bytes) -> tuple[bytes, int, list[tuple[bytes, bytes]]]:
    """The HTTP version, status and header fields of one answer's head (CRLF CRLF ended)."""
    lines = head[:-4].split(b"\r\n")
    status_line = lines[0].split(b" ", 2)
    version = status_line[0]
    if (
        len(status_line) < 2
        or version not in (b"HTTP/1.1", b"HTTP/1.0")
        or len(status_line[1]) != 3
        or not status_line[1].isdigit()
    ):
        raise httpx.RemoteProtocolError(f"Not an HTTP/1.x status line: {lines[0][:80]!r}")
    pairs: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t") and pairs:  # obs-fold: a continuation (RFC 9112 §5.2)
            name, value = pairs[-1]
            pairs[-1] = (name, value + b" " + line.strip())
            continue
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip() or b" " in name:
            raise httpx.RemoteProtocolError(f"Not a header field: {line[:80]!r}")
        pairs.append((name, value.strip(b" \t")))
    return version, int(status_line[1]), pairs


class _Body(httpx.AsyncByteStream):
    """The body of one answer, read as its framing says; the connection goes back to the
    wire when the body was read to its end and the server keeps it open."""

    def __init__(
        self,
        wire: Wire,
        conn: _Connection,
        status: int,
        version: bytes,
        pairs: list[tuple[bytes, bytes]],
    ) -> None:
        self.wire = wire
        self.conn: _Connection | None = conn
        self.chunked = False
        self.length: int | None = None
        tokens: set[bytes] = set()
        codings: list[bytes] = []
        lengths: set[bytes] = set()
        for name, value in pairs:
            low = name.lower()
            if low == b"connection":
                tokens.update(t.strip().lower() for t in value.split(b","))
            elif low == b"transfer-encoding":
                codings += [t.strip().lower() for t in value.split(b",") if t.strip()]
            elif low == b"content-length":
                lengths.update(t.strip() for t in value.split(b","))
        self.keep = version == b"HTTP/1.1" and b"close" not in tokens
        if status in _NO_BODY:
            self.length = 0
        elif codings:
            self.chunked = codings[-1] == b"chunked"
            self.keep = self.keep and self.chunked  # else: to the end of the connection
        elif lengths:
            (value,) = lengths if len(lengths) == 1 else (b"",)
            if not value.isdigit():
                raise httpx.RemoteProtocolError(f"A bad Content-Length: {sorted(lengths)!r}")
            self.length = int(value)
        else:
            self.keep = False  # to the end of the connection
        self.done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn = self.conn
        if conn is None or self.done:
            return
        if self.chunked:
            async for piece in self._chunks(conn):
                yield piece
        elif self.length is not None:
            left = self.length
            while left:
                piece = await self.wire.read(conn, min(left, PIECE))
                if not piece:
                    raise httpx.RemoteProtocolError(
                        f"Server disconnected after {self.length - left:,} of the "
                        f"{self.length:,} bytes of the body"
                    )
                left -= len(piece)
                yield piece
        else:
            while piece := await self.wire.read(conn, PIECE):
                yield piece
        self.done = True

    async def _chunks(self, conn: _Connection) -> AsyncIterator[bytes]:
        wire = self.wire
        while True:
            size_line = (await wire.line(conn)).split(b";", 1)[0].strip()
            if _CHUNK_SIZE.fullmatch(size_line) is None:
                raise httpx.RemoteProtocolError(f"Not a chunk size: {size_line[:40]!r}")
            left = int(size_line, 16)
            if not left:
                while await wire.line(conn):
                    pass  # trailer fields, up to the empty line
                return
            while left:
                piece = await wire.read(conn, min(left, PIECE))
                if not piece:
                    raise httpx.RemoteProtocolError("Server disconnected inside a chunk")
                left -= len(piece)
                yield piece
            if await wire.line(conn):
                raise httpx.RemoteProtocolError("A chunk is longer than its size says")

    async def aclose(self) -> None:
        conn, self.conn = self.conn, None
        if conn is None:
            return
        if self.done and self.keep:
            self.wire.release(conn)
        else:
            conn.close()  # not read to its end, or the server closes it
