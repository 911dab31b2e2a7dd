"""``sitemapkit submit indexnow`` against a real IndexNow-speaking server on 127.0.0.1.

The server checks every request as an engine would (method, path, content type, JSON shape,
key format, URLs on ``host``) and answers per key: 200, 202, 400, 403, 422, 429, 503.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

import sitemapkit as sk

from ..conftest import cli
from ..site import Handle, Reply, Request, Site

OK = "0123456789abcdef0123456789abcdef"
PENDING = "pending-key-0001"
FORBIDDEN = "forbidden-key-01"
UNPROCESSABLE = "schema-mismatch1"
BAD_REQUEST = "bad-request-key1"
RATE_LIMITED = "rate-limited-001"
FLAKY = "flaky-server-001"
BUSY = "busy-for-an-hour"
_KEY = re.compile(r"[A-Za-z0-9-]{8,128}")


class Engine:
    """An IndexNow engine on the shared test server: what it saw, and the files it serves."""

    host = "127.0.0.1"

    def __init__(self, site: Site) -> None:
        self.site = site
        self.url = site.base
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()
        site["/indexnow"] = Handle(self.answer)

    @property
    def requests(self) -> list[Request]:
        return self.site.log

    @property
    def posts(self) -> list[Any]:
        return [r.json() for r in self.requests if r.method == "POST"]

    def answer(self, r: Request) -> Reply:
        """Check the request as an engine would, then answer as its key says."""
        if r.method != "POST":
            return Reply(404, b"not found")
        if r.headers.get("content-type") != "application/json; charset=utf-8":
            return Reply(400, b"content type")
        try:
            doc = json.loads(r.body.decode("utf-8"))
        except ValueError:
            return Reply(400, b"json")
        urls = doc.get("urlList") if isinstance(doc, dict) else None
        if (
            not isinstance(doc.get("host"), str)
            or not isinstance(doc.get("key"), str)
            or not isinstance(urls, list)
            or not 1 <= len(urls) <= 10_000
            or not all(isinstance(u, str) for u in urls)
            or not isinstance(doc.get("keyLocation", ""), str)
            or set(doc) - {"host", "key", "keyLocation", "urlList"}
        ):
            return Reply(400, b"shape")
        key, host = doc["key"], doc["host"]
        if not _KEY.fullmatch(key) or any(urlsplit(u).hostname != host for u in urls):
            return Reply(422)
        with self.lock:
            self.seen[key] += 1
            n = self.seen[key]
        status = _ANSWERS.get(key, 200)
        if key == RATE_LIMITED and n == 1:
            return Reply(429, headers={"Retry-After": "1"})
        if key == FLAKY and n <= 2:
            return Reply(503)
        if key == BUSY:
            return Reply(429, headers={"Retry-After": "3600"})
        return Reply(status)


#: Keys whose every submission gets the same answer.
_ANSWERS = {PENDING: 202, FORBIDDEN: 403, UNPROCESSABLE: 422, BAD_REQUEST: 400}


@pytest.fixture
def engine() -> Iterator[Engine]:
    with Site() as site:
        yield Engine(site)


def run(
    engine: Engine,
    key: str,
    args: list[str],
    *,
    input: str | None = None,
    endpoint: str | None = None,
) -> tuple[int, str, str]:
    """``submit indexnow`` with ``key`` to the engine (or ``endpoint``), short backoffs,
    then ``args``."""
    argv = [
        "submit",
        "indexnow",
        "--key",
        key,
        "--host",
        engine.host,
        "--endpoint",
        endpoint or engine.url + "/indexnow",
        "--backoff",
        "0.05",
        *args,
    ]
    return cli(argv, input=input)


def page(engine: Engine, path: str) -> str:
    return f"{engine.url}/{path}"


def test_submits_urls_as_one_json_post(engine: Engine) -> None:
    urls = [page(engine, "a"), page(engine, "b?x=1&y=2"), page(engine, "a"), page(engine, "ü")]
    code, _, err = run(engine, OK, urls)
    assert code == 0, err
    (req,) = engine.requests
    assert (req.method, req.path) == ("POST", "/indexnow")
    assert req.headers["content-type"] == "application/json; charset=utf-8"
    assert req.headers["user-agent"].startswith("sitemapkit/")
    assert req.json() == {
        "host": "127.0.0.1",
        "key": OK,
        "urlList": [page(engine, "a"), page(engine, "b?x=1&y=2"), page(engine, "%C3%BC")],
    }
    assert "batch 1: 3 URLs: 200 OK: URLs received" in err
    assert "IDX005 warning" in err  # the repeat
    assert "3 URLs received by" in err


def test_stdin_is_split_into_batches_of_10000(engine: Engine) -> None:
    lines = "".join(f"{page(engine, f'p/{i}')}\n" for i in range(20_001))
    code, _, err = run(engine, PENDING, ["-"], input="# comment\n\n" + lines)
    assert code == 0, err
    assert [len(p["urlList"]) for p in engine.posts] == [10_000, 10_000, 1]
    assert engine.posts[2]["urlList"] == [page(engine, "p/20000")]
    assert err.count("202 Accepted") == 3
    assert "20,001 URLs received" in err


@pytest.mark.parametrize(
    ("key", "words"),
    [
        (FORBIDDEN, "403 Forbidden: the key is not valid"),
        (UNPROCESSABLE, "422 Unprocessable Entity"),
        (BAD_REQUEST, "400 Bad Request"),
    ],
)
def test_a_rejection_stops_and_exits_1(engine: Engine, key: str, words: str) -> None:
    urls = [page(engine, f"p/{i}") for i in range(5)]
    code, _, err = run(engine, key, ["--batch-size", "2", *urls])
    assert code == 1
    assert len(engine.requests) == 1  # the other two batches were not sent
    assert f"batch 1: 2 URLs: {words}" in err
    assert "0 URLs received" in err and "in 0 of 1 batches" in err


def test_429_waits_for_retry_after(engine: Engine) -> None:
    start = time.monotonic()
    code, _, err = run(engine, RATE_LIMITED, [page(engine, "a")])
    assert code == 0, err
    assert time.monotonic() - start >= 0.95  # Retry-After: 1, not the 0.05 s backoff
    assert len(engine.posts) == 2 and engine.posts[0] == engine.posts[1]
    assert "200 OK: URLs received (after 2 attempts)" in err


def test_5xx_is_retried_with_backoff(engine: Engine) -> None:
    code, _, err = run(engine, FLAKY, [page(engine, "a")])
    assert code == 0, err
    assert len(engine.posts) == 3
    assert "(after 3 attempts)" in err
    engine.seen.clear()
    code, _, err = run(engine, FLAKY, ["--retries", "1", page(engine, "a")])
    assert code == 3
    assert "503: server error at the engine; gave up after 2 attempts" in err


def test_a_long_retry_after_gives_up_at_once(engine: Engine) -> None:
    code, _, err = run(engine, BUSY, [page(engine, "a")])
    assert code == 3
    assert len(engine.posts) == 1
    assert "asks to wait 3600 s" in err and "try again later" in err


def test_unreachable_endpoint_exits_3(engine: Engine) -> None:
    with socket.socket() as closed:  # a port nothing listens on once this is closed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}/indexnow"
    args = ["--retries", "1", "--backoff", "0", page(engine, "a")]
    code, _, err = run(engine, OK, args, endpoint=endpoint)
    assert code == 3
    assert "no answer from" in err and "gave up after 2 attempts" in err


def test_check_key_fetches_the_key_file_first(engine: Engine) -> None:
    loc = page(engine, "keys/k.txt")
    engine.site["/keys/k.txt"] = b"\xef\xbb\xbf" + OK.encode() + b"\r\n"
    code, _, err = run(engine, OK, ["--check-key", "--key-location", loc, page(engine, "keys/a")])
    assert code == 0, err
    assert [(r.method, r.path) for r in engine.requests] == [
        ("GET", "/keys/k.txt"),
        ("POST", "/indexnow"),
    ]
    assert engine.posts[0]["keyLocation"] == loc

    engine.requests.clear()
    engine.site["/keys/k.txt"] = b"some-other-key"
    code, _, err = run(engine, OK, ["--check-key", "--key-location", loc, page(engine, "keys/a")])
    assert code == 1
    assert "holds 'some-other-key', not the key" in err and "403" in err
    assert [r.method for r in engine.requests] == ["GET"]  # nothing submitted

    engine.requests.clear()
    code, _, err = run(
        engine, OK, ["--check-key", "--key-location", page(engine, "gone.txt"), page(engine, "a")]
    )
    assert code == 1 and "answered 404, not 200" in err
    assert [r.method for r in engine.requests] == ["GET"]


def test_key_location_scope_leaves_out_other_folders(engine: Engine) -> None:
    loc = page(engine, "catalog/k.txt")
    urls = [page(engine, "catalog/1"), page(engine, "blog/2"), "https://other.example/x"]
    code, _, err = run(engine, OK, ["--key-location", loc, *urls])
    assert code == 1  # received, but two URLs were left out
    assert engine.posts == [
        {"host": "127.0.0.1", "key": OK, "keyLocation": loc, "urlList": [urls[0]]}
    ]
    assert err.count("IDX004 error") == 2
    assert "outside '/catalog/'" in err and "not on '127.0.0.1'" in err


def test_invalid_options_send_nothing(engine: Engine) -> None:
    code, _, err = run(engine, "short", [page(engine, "a")])
    assert code == 1 and "IDX001" in err
    code, _, err = run(
        engine, OK, ["--key-location", "https://elsewhere.example/k.txt", page(engine, "a")]
    )
    assert code == 1 and "IDX002" in err
    code, _, err = run(engine, OK, [])
    assert code == 2 and "no URLs" in err
    code, _, err = run(engine, OK, ["--from-diff", "a", "b", page(engine, "a")])
    assert code == 2 and "only one of them" in err
    assert engine.requests == []


def test_from_diff_submits_added_changed_and_removed(engine: Engine, tmp_path: Path) -> None:
    old = tmp_path / "old.xml"
    new = tmp_path / "new.xml"
    old.write_bytes(
        sk.dumps(
            [
                sk.Url(page(engine, "same")),
                sk.Url(page(engine, "gone")),
                sk.Url(page(engine, "edit"), lastmod="2024-05-01"),
            ]
        )
    )
    new.write_bytes(
        sk.dumps(
            [
                sk.Url(page(engine, "same")),
                sk.Url(page(engine, "new")),
                sk.Url(page(engine, "edit"), lastmod="2024-06-01"),
            ]
        )
    )
    code, _, err = run(engine, OK, ["--from-diff", str(old), str(new)])
    assert code == 0, err
    assert [p["urlList"] for p in engine.posts] == [
        [page(engine, "edit"), page(engine, "gone"), page(engine, "new")]
    ]
    engine.requests.clear()
    code, _, err = run(engine, OK, ["--from-diff", str(old), str(old)])
    assert code == 0 and "nothing to submit" in err and engine.requests == []


def test_dry_run_prints_the_bodies(engine: Engine) -> None:
    urls = [page(engine, f"p/{i}") for i in range(3)]
    code, out, _ = run(engine, OK, ["--dry-run", "--batch-size", "2", *urls])
    assert code == 0
    assert [json.loads(line)["urlList"] for line in out.splitlines()] == [urls[:2], urls[2:]]
    assert engine.requests == []


def test_help_says_no_ping() -> None:
    _, out, _ = cli(["submit", "--help"])
    assert "indexnow" in out and "ping" not in out.lower()


def test_endpoint_must_be_http(engine: Engine) -> None:
    code, _, err = run(engine, OK, [page(engine, "a")], endpoint="ftp://x/indexnow")
    assert code == 2
    assert "not an http(s) URL" in err
