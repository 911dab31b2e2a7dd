"""The one loopback HTTP/1.1 test server on 127.0.0.1 for every HTTP test (no mocks of httpx).

Routes map a path (with its query) to a :class:`Reply`, to a function of the request
(method, headers, how many times the path was requested) returning one, or to a
:class:`Handle` (a function of the whole :class:`Request`, body included). Paths with no
route are served from the folder given to :meth:`Site.static`, or answer 404. The server
logs every request, counts them per method and path (and the connections they came
over), and measures how many were in flight at once. Its loop polls every 20 ms, so
closing it takes no longer than that.

Hostile answers, for the drills: a head or a body trickled one byte at a time
(``Reply.head_trickle``, ``Reply.trickle``), a body generated for as long as the client reads
(``Reply.stream``: no Content-Length, the connection closes at its end), and the documents
such servers serve (:func:`endless_gzip`, :func:`robots`, :func:`sitemap_index`).
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import mimetypes
import socket
import struct
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import unquote


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # before the status line
    ranges: bool = False  # answer a Range request with 206 and the slice
    reset: bool = False  # close with RST instead of answering
    cut: int | None = None  # send this many body bytes, then RST
    stall: float = 0.0  # after `cut` bytes, wait instead of resetting
    head_trickle: float = 0.0  # seconds between the bytes of the status line and headers
    trickle: float = 0.0  # seconds between the bytes of the body
    stream: Callable[[], Iterable[bytes]] | None = None  # the body, made while it is sent


@dataclass
class Request:
    """One request as the server saw it (header names in lower case)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() on arrival
    count: int  # how many times this path was requested, this one included
    peer: int = 0  # the client's port: one per connection

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Handle:
    """A route that sees the whole request, its body included."""

    answer: Callable[[Request], Reply]


Route = Reply | Handle | Callable[[str, dict[str, str], int], Reply]


def html(head: str = "", status: int = 200, **headers: str) -> Reply:
    """An HTML page with ``head`` inside its ``<head>``."""
    body = f"<!doctype html><html><head><title>t</title>{head}</head><body>hi</body></html>"
    all_headers = {"Content-Type": "text/html; charset=utf-8"}
    all_headers.update({k.replace("_", "-"): v for k, v in headers.items()})
    return Reply(status, body.encode(), all_headers)


_METHODS = ("GET", "HEAD", "POST")  # the methods the handler serves


class Site:
    """Routes by path; logs and counts requests and the largest number in flight at once.

    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: Counter[tuple[str, str]] = Counter()
        self.log: list[Request] = []
        self.active = 0
        #: Set by close(): a handler that waits (a delay, a stall, a trickle) stops waiting.
        self.closing = threading.Event()
        self._handlers: set[threading.Thread] = set()
        self.max_active = 0
        self.root: Path | None = None
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # as real servers do: no 40 ms wait per answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def handle(self) -> None:
                # counted while it runs, so that close() waits for it (no thread of a
                # test's server outlives it: a live thread makes the writer's fork unsafe)
                me = threading.current_thread()
                with site._lock:
                    site._handlers.add(me)
                try:
                    super().handle()
                finally:
                    with site._lock:
                        site._handlers.discard(me)

            def do_GET(self) -> None:
                site.serve(self, "GET")

            def do_HEAD(self) -> None:
                site.serve(self, "HEAD")

            def do_POST(self) -> None:
                site.serve(self, "POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.server.handle_error = lambda request, address: None  # type: ignore[method-assign]
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def __enter__(self) -> Site:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def url(self, path: str) -> str:
        return self.base + path

    def static(self, root: Path) -> Site:
        """Serve the files under ``root`` at the paths no route claims (GET and HEAD)."""
        self.root = root
        return self

    def __setitem__(self, path: str, route: Route | bytes) -> None:
        self.routes[path] = Reply(body=route) if isinstance(route, bytes) else route

    @property
    def requests(self) -> int:
        return sum(self.hits.values())

    def count(self, path: str) -> int:
        """How many times ``path`` was requested, by any method."""
        # by the methods served, not a scan of every path: a drill requests 100,000
        return sum(self.hits[(method, path)] for method in _METHODS)

    def paths(self) -> set[str]:
        """Every path requested (any method), robots.txt left out."""
        return {p for _, p in self.hits if p != "/robots.txt"}

    @property
    def connections(self) -> int:
        """How many connections the requests came over (the clients' ports)."""
        return len({r.peer for r in self.log})

    def times(self, path: str) -> list[float]:
        """When each request of ``path`` arrived (time.monotonic())."""
        return [r.at for r in self.log if r.path == path]

    def serve(self, h: BaseHTTPRequestHandler, method: str) -> None:
        headers = {k.lower(): v for k, v in h.headers.items()}
        body = h.rfile.read(int(headers.get("content-length", "0") or 0))
        with self._lock:
            self.hits[(method, h.path)] += 1
            count = self.count(h.path)
            peer = h.client_address[1]
            request = Request(method, h.path, headers, body, time.monotonic(), count, peer)
            self.log.append(request)
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            reply = self._reply(request)
            if reply.delay:
                self.closing.wait(reply.delay)
        finally:
            # out of flight before the answer goes out: a client that waits for it to send
            # the next request never sees the two overlap
            with self._lock:
                self.active -= 1
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._answer(h, request, reply)

    def _reply(self, r: Request) -> Reply:
        route = self.routes.get(r.path)
        if isinstance(route, Handle):
            return route.answer(r)
        if callable(route):
            return route(r.method, r.headers, r.count)
        if route is not None:
            return route
        if self.root is not None and r.method in ("GET", "HEAD"):
            return _file(self.root, r.path)
        return Reply(404, b"not found")

    def _answer(self, h: BaseHTTPRequestHandler, r: Request, reply: Reply) -> None:
        if reply.reset:
            _reset(h)
            return
        body = reply.body
        status = reply.status
        extra = dict(reply.headers)
        wanted = r.headers.get("range", "")
        if reply.ranges and status == 200 and wanted.startswith("bytes=0-"):
            end = min(int(wanted[len("bytes=0-") :]), len(body) - 1)
            extra["Content-Range"] = f"bytes 0-{end}/{len(body)}"
            body = body[: end + 1]
            status = 206
        if reply.head_trickle:
            _send_slowly(h, _head(h, status, extra, body, reply), reply.head_trickle, self.closing)
        else:
            h.send_response(status)
            for k, v in extra.items():
                h.send_header(k, v)
            if "Content-Length" not in extra and reply.stream is None:
                h.send_header("Content-Length", str(len(body)))
            if reply.stream is not None:
                h.send_header("Connection", "close")
            h.end_headers()
        if r.method == "HEAD":
            return
        if reply.stream is not None:
            h.close_connection = True
            for chunk in reply.stream():
                h.wfile.write(chunk)
            return
        if reply.trickle:
            _send_slowly(h, body, reply.trickle, self.closing)
            return
        if reply.cut is None:
            h.wfile.write(body)
            return
        h.wfile.write(body[: reply.cut])
        h.wfile.flush()
        if reply.stall:
            self.closing.wait(reply.stall)
        _reset(h)

    def close(self) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()
        with self._lock:
            handlers = list(self._handlers)
        for t in handlers:  # woken by closing; a client still reading is cut by its timeout
            t.join(timeout=10)


def _file(root: Path, path: str) -> Reply:
    """A file under ``root``, typed as http.server's static handler types it; a folder's
    URL (ending in ``/``) answers with its ``index.html``; the path is percent-decoded."""
    target = (root / unquote(path.split("?", 1)[0]).lstrip("/")).resolve()
    if target.is_dir() and path.split("?", 1)[0].endswith("/"):
        target = target / "index.html"  # a folder's URL, as static servers answer it
    if not target.is_relative_to(root.resolve()) or not target.is_file():
        return Reply(404, b"not found")
    kind = "application/gzip" if target.suffix == ".gz" else mimetypes.guess_type(target)[0]
    modified = email.utils.formatdate(target.stat().st_mtime, usegmt=True)
    return Reply(
        200,
        target.read_bytes(),
        {"Content-Type": kind or "application/octet-stream", "Last-Modified": modified},
    )


def _head(
    h: BaseHTTPRequestHandler, status: int, extra: dict[str, str], body: bytes, reply: Reply
) -> bytes:
    """The status line and headers as bytes, for sending them slowly."""
    lines = [f"HTTP/1.1 {status} {h.responses.get(status, ('',))[0]}"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    if "Content-Length" not in extra and reply.stream is None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _send_slowly(
    h: BaseHTTPRequestHandler, data: bytes, pause: float, closing: threading.Event
) -> None:
    """``data`` one byte at a time, ``pause`` seconds apart (each byte flushed), until the
    site closes."""
    for i in range(len(data)):
        h.wfile.write(data[i : i + 1])
        h.wfile.flush()
        if closing.wait(pause):
            return


def _reset(h: BaseHTTPRequestHandler) -> None:
    """Close the connection with a TCP RST (SO_LINGER 0), as a crashing peer does."""
    h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    h.close_connection = True
    h.rfile.close()
    h.wfile.close()  # the socket's own file objects hold it open until closed
    h.connection.close()


# -- what hostile servers serve ---------------------------------------------------------------

_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def robots(*sitemaps: str) -> bytes:
    """A robots.txt that lists ``sitemaps`` (one ``Sitemap:`` line each)."""
    return ("User-agent: *\nAllow: /\n" + "".join(f"Sitemap: {u}\n" for u in sitemaps)).encode()


def sitemap_index(locs: Iterable[str]) -> bytes:
    """A ``<sitemapindex>`` listing ``locs``, in order."""
    body = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    head = f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="{_NS}">'
    return f"{head}{body}</sitemapindex>".encode()


def endless_gzip(base: str, *, per_chunk: int = 2_000) -> Callable[[], Iterator[bytes]]:
    """An endless gzip stream of a ``<urlset>`` of distinct URLs below ``base`` (a stream
    for :attr:`Reply.stream`): it never ends; the client must stop reading it."""

    def chunks() -> Iterator[bytes]:
        z = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        yield z.compress(f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{_NS}">'.encode())
        n = 0
        while True:
            rows = "".join(f"<url><loc>{base}{i}</loc></url>" for i in range(n, n + per_chunk))
            n += per_chunk
            yield z.compress(rows.encode()) + z.flush(zlib.Z_SYNC_FLUSH)

    return chunks


# -- real image files, written byte by byte (no imaging library) ------------------------------


def png(width: int, height: int) -> bytes:
    """A black-and-white PNG (1-bit greyscale, all black)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + b"\x00" * ((width + 7) // 8)  # filter type 0, then the packed pixels
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(row * height, 9))
        + chunk(b"IEND", b"")
    )


def gif(width: int, height: int) -> bytes:
    """A GIF89a whose logical screen is ``width``×``height`` with one black 1×1 frame."""
    screen = struct.pack("<HHBBB", width, height, 0x80, 0, 0)  # global table of 2 colours
    palette = b"\x00\x00\x00\xff\xff\xff"
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0)
    # LZW, minimum code size 2: clear (4), pixel 0, end (5), packed LSB first in 3 bits.
    data = b"\x02" + bytes([2, 0x44, 0x01]) + b"\x00"
    return b"GIF89a" + screen + palette + frame + data + b"\x3b"


def jpeg(width: int, height: int) -> bytes:
    """A baseline greyscale JPEG, mid grey: every 8×8 block is "DC unchanged, end of block"
    (two 1-bit Huffman codes), with an Exif-sized APP1 segment before the frame header."""

    def segment(marker: int, data: bytes) -> bytes:
        return bytes([0xFF, marker]) + struct.pack(">H", len(data) + 2) + data

    blocks = ((width + 7) // 8) * ((height + 7) // 8)
    bits = 2 * blocks
    scan = b"\x00" * (bits // 8) + (bytes([(1 << (8 - bits % 8)) - 1]) if bits % 8 else b"")
    one_code = bytes([1] + [0] * 15)  # one code of length 1
    return (
        b"\xff\xd8"
        + segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
        + segment(0xE1, b"Exif\x00\x00" + b"\x00" * 20_000)
        + segment(0xDB, b"\x00" + b"\x01" * 64)
        + segment(0xC0, struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00")
        + segment(0xC4, b"\x00" + one_code + b"\x00")  # DC table 0: category 0
        + segment(0xC4, b"\x10" + one_code + b"\x00")  # AC table 0: end of block
        + segment(0xDA, b"\x01\x01\x00\x00\x3f\x00")
        + scan
        + b"\xff\xd9"
    )


def _riff(*chunks: bytes) -> bytes:
    body = b"WEBP" + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _chunk(kind: bytes, data: bytes) -> bytes:
    return kind + struct.pack("<I", len(data)) + data + (b"\x00" if len(data) % 2 else b"")


def _vp8l(width: int, height: int) -> bytes:
    """A lossless WebP bitstream of one opaque black colour: five one-symbol prefix codes,
    so the pixels take no bits at all."""
    fields = [
        (width - 1, 14), (height - 1, 14), (0, 1), (0, 3),  # size, alpha hint, version
        (0, 1), (0, 1), (0, 1),  # no transform, no colour cache, no meta prefix codes
        (1, 1), (0, 1), (0, 1), (0, 1),  # green: simple code, 1 symbol, 1-bit symbol 0
        (1, 1), (0, 1), (0, 1), (0, 1),  # red 0
        (1, 1), (0, 1), (0, 1), (0, 1),  # blue 0
        (1, 1), (0, 1), (1, 1), (255, 8),  # alpha: 8-bit symbol 255
        (1, 1), (0, 1), (0, 1), (0, 1),  # distance 0
    ]  # fmt: skip
    value = shift = 0
    for v, n in fields:
        value |= v << shift
        shift += n
    return b"\x2f" + value.to_bytes((shift + 7) // 8, "little")


def webp(width: int, height: int) -> bytes:
    """A lossless (VP8L) WebP."""
    return _riff(_chunk(b"VP8L", _vp8l(width, height)))


def webp_extended(width: int, height: int) -> bytes:
    """An extended-format (VP8X) WebP around the same lossless image."""
    canvas = struct.pack("<I", 0)[:1] + b"\x00\x00\x00"
    canvas += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return _riff(_chunk(b"VP8X", canvas), _chunk(b"VP8L", _vp8l(width, height)))


def webp_lossy_header(width: int, height: int) -> bytes:
    """The header of a lossy (VP8) WebP key frame (the frame data itself is left out)."""
    frame = b"\x10\x02\x00" + b"\x9d\x01\x2a" + struct.pack("<HH", width, height)
    return _riff(_chunk(b"VP8 ", frame + b"\x00" * 16))
