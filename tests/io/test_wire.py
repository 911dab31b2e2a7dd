"""io/fetch/wire.py, the runner's own HTTP/1.1 client, against the loopback server.

Every document read over the wire must give what httpx gives (records, kinds, sizes,
findings, errors), connections must be kept and shared as the politeness limits say, and
the framings of RFC 9112 (Content-Length, chunked, to the end of the connection) must be
read; what the wire does not send (proxies, URLs to encode) goes through httpx.
"""

from __future__ import annotations

import asyncio
import gzip
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sitemapkit.core.discovery import SitemapTree
from sitemapkit.io.fetch import aiter_records
from sitemapkit.io.fetch import runner as runner_module
from sitemapkit.io.fetch.wire import Wire

from ..site import Reply, Site
from .test_fetch import by_url, crawl, index, urlset

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def chunked(*pieces: bytes) -> Reply:
    """An answer in ``Transfer-Encoding: chunked``, one chunk a piece (with extensions
    and a trailer field, which a reader must skip)."""

    def chunks() -> Iterator[bytes]:
        for i, piece in enumerate(pieces):
            yield f"{len(piece):x}{';ext=1' if i == 0 else ''}\r\n".encode() + piece + b"\r\n"
        yield b"0\r\nX-Trailer: yes\r\n\r\n"

    return Reply(headers={"Transfer-Encoding": "chunked"}, stream=chunks)


def to_the_end(body: bytes) -> Reply:
    """An answer with neither Content-Length nor chunks: the body ends with the connection."""
    return Reply(stream=lambda: iter([body[:100], body[100:]]))


def statuses(tree: SitemapTree) -> dict[str, tuple[Any, ...]]:
    return {
        s.url: (s.status, s.kind, s.entries, s.bytes, s.findings, repr(s.error))
        for s in tree.sitemaps
    }


def both(target: str, **kwargs: Any) -> tuple[Any, Any]:
    """The same crawl over the wire and through an httpx client of the caller."""

    async def through_httpx() -> tuple[list[tuple[str, str]], SitemapTree]:
        async with httpx.AsyncClient() as client:
            options = {"workers": 0, "retries": 0, "client": client, **kwargs}
            async with aiter_records(target, **options) as stream:
                pairs = [(r.loc, src) async for r, src in stream]
            return pairs, stream.tree

    return crawl(target, **kwargs), asyncio.run(through_httpx())


def test_every_framing_reads_as_through_httpx(site: Site) -> None:
    bad = f'<?xml version="1.0"?><urlset xmlns="{NS}"><url><loc>/rel</loc>'
    bad += "<lastmod>yesterday</lastmod></url><url><loc>https://e.com/ok</loc></url></urlset>"
    big = urlset(*(f"https://e.com/big/{i}" for i in range(3000)))
    site["/robots.txt"] = b"".join(
        f"Sitemap: {site.url(p)}\n".encode()
        for p in ("/plain.xml", "/gz.xml", "/chunked.xml", "/end.xml", "/bad.xml", "/i.xml")
    )
    site["/plain.xml"] = urlset("https://e.com/a", "https://e.com/b")
    site["/gz.xml"] = Reply(body=gzip.compress(big), headers={"Content-Encoding": "gzip"})
    site["/chunked.xml"] = chunked(big[:5000], big[5000:])
    site["/end.xml"] = to_the_end(urlset("https://e.com/end"))
    site["/bad.xml"] = bad.encode()
    site["/i.xml"] = index(site.url("/gone.xml"), site.url("/moved.xml"))
    site["/moved.xml"] = Reply(301, headers={"Location": "/plain.xml?again"})
    site["/plain.xml?again"] = urlset("https://e.com/c")
    (wire_pairs, wire_tree), (httpx_pairs, httpx_tree) = both(site.url("/"))
    assert wire_pairs == httpx_pairs
    assert len(wire_pairs) == 2 + 3000 + 3000 + 1 + 2 + 1
    assert statuses(wire_tree) == statuses(httpx_tree)
    assert by_url(wire_tree)[site.url("/gone.xml")].status == 404
    assert {f.rule for f in by_url(wire_tree)[site.url("/bad.xml")].findings} >= {"SM201"}


def test_small_documents_parsed_here_give_what_a_worker_gives(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bodies of at most 32 KiB are parsed in this process; with that threshold at 0 the
    same documents go through a worker process: the same records, kinds and findings."""
    docs = {
        "/a.xml": urlset("https://e.com/a", "https://e.com/a?x=1&amp;y=2"),
        "/b.xml": (
            f'<?xml version="1.0"?><urlset xmlns="{NS}" '
            'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
            "<url><loc>https://e.com/b</loc><lastmod>2024-13-01</lastmod><priority>2</priority>"
            "<image:image><image:loc>https://e.com/b.jpg</image:loc></image:image></url>"
            "<url><loc>ftp://e.com/c</loc></url></urlset>"
        ).encode(),
        "/c.txt": b"https://e.com/t1\nnot a url\nhttps://e.com/t2\n",
        "/d.xml": b'<?xml version="1.0"?><urlset xmlns="' + NS.encode() + b'"><url><loc>x',
    }
    for path, body in docs.items():
        site[path] = body
    site["/i.xml"] = index(*(site.url(p) for p in docs))

    def read(workers: int) -> tuple[list[Any], dict[str, tuple[Any, ...]]]:
        async def main() -> tuple[list[Any], SitemapTree]:
            async with aiter_records(site.url("/i.xml"), workers=workers, retries=0) as stream:
                records = [(r, src) async for r, src in stream]
            return records, stream.tree

        records, tree = asyncio.run(main())
        return sorted(records, key=repr), statuses(tree)

    here = read(workers=1)  # every body is small: none goes to the worker
    monkeypatch.setattr(runner_module, "_SMALL", 0)
    remote = read(workers=1)
    assert here == remote
    assert len(here[0]) == 5 and any(f for *_, f, _e in here[1].values() if f)


def test_connections_are_kept_and_limited_per_host(site: Site) -> None:
    for i in range(60):
        site[f"/s{i}.xml"] = urlset(f"https://e.com/{i}")
    site["/robots.txt"] = b"".join(
        f"Sitemap: {site.url(f'/s{i}.xml')}\n".encode() for i in range(60)
    )
    pairs, tree = crawl(site.url("/"), per_host=2)
    assert len(pairs) == 60 and tree.ok
    assert site.requests == 61 and 1 <= site.connections <= 2 and site.max_active <= 2
    site.log.clear()
    pairs, _ = crawl(site.url("/"), per_host=1)
    assert len(pairs) == 60 and site.connections == 1  # one connection, kept alive


def test_a_connection_the_server_closes_is_not_used_again(site: Site) -> None:
    site["/a.xml"] = Reply(body=urlset("https://e.com/a"), headers={"Connection": "close"})
    site["/b.xml"] = urlset("https://e.com/b")
    site["/i.xml"] = index(site.url("/a.xml"), site.url("/b.xml"))
    pairs, tree = crawl(site.url("/i.xml"), per_host=1, concurrency=1)
    assert [loc for loc, _ in pairs] == ["https://e.com/a", "https://e.com/b"] and tree.ok
    assert site.connections == 2  # /i.xml and /a.xml on one, /b.xml on a new one


def test_a_broken_chunked_body_is_a_fetch_error(site: Site) -> None:
    def chunks() -> Iterator[bytes]:
        yield b"zz\r\nnot hex\r\n"

    site["/c.xml"] = Reply(headers={"Transfer-Encoding": "chunked"}, stream=chunks)
    _, tree = crawl(site.url("/c.xml"))
    (status,) = tree.sitemaps
    assert "Connection failed: RemoteProtocolError: Not a chunk size: b'zz'" in str(status.error)


def test_a_body_shorter_than_its_length_is_a_fetch_error(site: Site) -> None:
    site["/short.xml"] = Reply(
        body=b"<?xml", headers={"Content-Length": "400", "Connection": "close"}
    )
    _, tree = crawl(site.url("/short.xml"))
    (status,) = tree.sitemaps
    assert "Server disconnected after 5 of the 400 bytes of the body" in str(status.error)


def test_what_the_wire_does_not_send_goes_through_httpx(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = Wire(headers={}, timeout=5, max_idle=2)
    assert wire.handles("http://127.0.0.1:8/a.xml?x=1")
    assert wire.handles("https://example.com/")
    for url in (
        "ftp://example.com/a.xml",
        "http://user:pw@example.com/a.xml",
        "http://example.com/a b.xml",
        "http://example.com/caf\u00e9.xml",
        "http://example.com:port/a.xml",
    ):
        assert not wire.handles(url), url
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    assert not Wire(headers={}, timeout=5, max_idle=2).handles("http://example.com/")
    monkeypatch.delenv("HTTP_PROXY")
    site["/caf%C3%A9.xml"] = urlset("https://e.com/cafe")  # httpx encodes the IRI
    pairs, tree = crawl(site.url("/caf\u00e9.xml"))
    assert pairs == [("https://e.com/cafe", site.url("/caf\u00e9.xml"))] and tree.ok


def test_idle_connections_are_bounded_across_origins() -> None:
    async def main(a: Site, b: Site) -> int:
        wire = Wire(headers={"User-Agent": "t"}, timeout=5, max_idle=1)
        try:
            for url in (a.url("/x"), b.url("/x"), a.url("/x"), a.url("/x")):
                response = await wire.get(url, {})
                assert b"".join([p async for p in response.aiter_raw()]) == b"ok"
                await response.aclose()
            return wire.connections
        finally:
            await wire.aclose()

    with Site() as a, Site() as b:
        a["/x"] = b"ok"
        b["/x"] = b"ok"
        # one idle connection kept: b's pushed a's out, a's third request opened anew,
        # its fourth reused that one
        assert asyncio.run(main(a, b)) == 3
        assert a.connections == 2 and b.connections == 1
        assert all(r.headers["user-agent"] == "t" for r in a.log)


def test_https_over_the_wire_reads_as_through_httpx(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loopback server behind TLS (a certificate for 127.0.0.1 made by openssl and
    trusted through SSL_CERT_FILE, as httpx's context reads it): the same records, over
    one kept connection."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    make = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1"
    make += " -addext subjectAltName=IP:127.0.0.1"
    subprocess.run([*make.split(), "-keyout", key, "-out", cert], check=True, capture_output=True)
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_side.load_cert_chain(cert, key)
    site.server.socket = server_side.wrap_socket(site.server.socket, server_side=True)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    base = site.base.replace("http://", "https://")
    site["/i.xml"] = index(*(f"{base}/s{i}.xml" for i in range(5)))
    for i in range(5):
        site[f"/s{i}.xml"] = urlset(f"https://e.com/{i}")
    pairs, tree = crawl(f"{base}/i.xml", per_host=1)
    assert [loc for loc, _ in pairs] == [f"https://e.com/{i}" for i in range(5)] and tree.ok
    assert site.connections == 1

    async def through_httpx() -> list[tuple[str, str]]:
        context = ssl.create_default_context(cafile=str(cert))
        async with (
            httpx.AsyncClient(verify=context) as client,
            aiter_records(f"{base}/i.xml", workers=0, client=client) as stream,
        ):
            return [(r.loc, src) async for r, src in stream]

    assert asyncio.run(through_httpx()) == pairs
