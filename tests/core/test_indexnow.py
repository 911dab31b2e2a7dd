"""core/indexnow: the IDX rules of spec/DISCOVERY.md §3.4, pure."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from sitemapkit.core.finding import Finding
from sitemapkit.core.indexnow import (
    MAX_URLS_PER_REQUEST,
    check_host,
    check_key,
    check_key_location,
    interpret,
    iter_batches,
    key_file_url,
    request_body,
    retry_delay,
    url_problem,
)
from sitemapkit.errors import InputError

HOST = "www.example.com"
KEY = "26ecd1ada8034912a62634cc4e3ddd7e"


# IDX001
@pytest.mark.parametrize("key", ["a" * 8, "A-b-3" * 25 + "xyz", KEY, "--------"])
def test_valid_keys(key: str) -> None:
    assert check_key(key) == key


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("a" * 7, "7 characters long"),
        ("a" * 129, "129 characters long"),
        ("abc_defgh", "'_'"),
        ("abcdefgh ", "' '"),
        ("schlüssel1", "'ü'"),
        ("", "0 characters"),
    ],
)
def test_invalid_keys(key: str, why: str) -> None:
    with pytest.raises(InputError, match="IDX001") as info:
        check_key(key)
    assert why in str(info.value)
    assert info.value.hint and "a-z" in info.value.hint


def test_hosts() -> None:
    assert check_host("WWW.Example.COM") == HOST
    assert check_host("bücher.example") == "xn--bcher-kva.example"
    assert check_host("127.0.0.1") == "127.0.0.1"
    for bad in ("https://www.example.com", "www.example.com/", "example.com:8080", "", "a b"):
        with pytest.raises(InputError):
            check_host(bad)


# IDX002
def test_key_location() -> None:
    assert check_key_location(f"https://{HOST}/keys/{KEY}.txt", HOST) == (
        f"https://{HOST}/keys/{KEY}.txt"
    )
    assert check_key_location("http://WWW.example.com/k.txt", HOST) == f"http://{HOST}/k.txt"
    with pytest.raises(InputError, match=r"not on 'www\.example\.com'"):
        check_key_location("https://cdn.example.com/k.txt", HOST)
    with pytest.raises(InputError, match=r"\.txt file"):
        check_key_location(f"https://{HOST}/k.html", HOST)
    with pytest.raises(InputError, match="IDX002"):
        check_key_location("/k.txt", HOST)
    with pytest.raises(InputError, match="IDX002"):
        check_key_location(f"ftp://{HOST}/k.txt", HOST)


def test_key_file_url() -> None:
    assert key_file_url(HOST, KEY) == f"https://{HOST}/{KEY}.txt"
    assert key_file_url(HOST, KEY, f"https://{HOST}/a/k.txt") == f"https://{HOST}/a/k.txt"


# IDX004
def test_url_problems() -> None:
    assert url_problem(f"https://{HOST}/a?b=1", HOST) is None
    assert url_problem("http://WWW.EXAMPLE.COM:8080/a", HOST) is None  # http/https may mix
    assert "not on" in (url_problem("https://example.com/a", HOST) or "")
    assert "not an absolute URL" in (url_problem("/a", HOST) or "")
    loc = f"https://{HOST}/catalog/k.txt"
    assert url_problem(f"https://{HOST}/catalog/item/1", HOST, loc) is None
    problem = url_problem(f"https://{HOST}/other/1", HOST, loc)
    assert problem is not None and "outside '/catalog/'" in problem
    assert url_problem(f"https://{HOST}/catalog/../other", HOST, loc) is not None


# IDX003, IDX005
def test_batches_of_at_most_10000() -> None:
    urls = [f"https://{HOST}/p/{i}" for i in range(2 * MAX_URLS_PER_REQUEST + 1)]
    batches = list(iter_batches(urls, host=HOST))
    assert [len(b) for b in batches] == [10_000, 10_000, 1]
    assert [u for b in batches for u in b] == urls
    assert [len(b) for b in iter_batches(urls[:7], host=HOST, size=3)] == [3, 3, 1]
    assert list(iter_batches([], host=HOST)) == []
    with pytest.raises(ValueError):
        list(iter_batches(urls, host=HOST, size=10_001))


def test_bad_and_repeated_urls_are_left_out_with_findings() -> None:
    findings: list[Finding] = []
    urls = [
        f"https://{HOST}/a",
        "  ",
        "https://evil.example/x",
        f"https://{HOST}/ä b",
        f"https://{HOST}/a",
        f"https://{HOST}/%C3%A4%20b",
    ]
    (batch,) = iter_batches(urls, host=HOST, findings=findings)
    assert batch == [f"https://{HOST}/a", f"https://{HOST}/%C3%A4%20b"]
    assert [(f.rule, f.severity, f.where) for f in findings] == [
        ("IDX004", "error", "URL #3"),
        ("IDX005", "warning", "URL #5"),
        ("IDX005", "warning", "URL #6"),
    ]
    # a repeat in a later batch is sent again: only one batch is checked at a time
    a, b = f"https://{HOST}/a", f"https://{HOST}/b"
    assert list(iter_batches([a, b, a], host=HOST, size=2)) == [[a, b], [a]]


def test_request_body() -> None:
    body = json.loads(request_body(HOST, KEY, ["https://www.example.com/ü"]))
    assert body == {"host": HOST, "key": KEY, "urlList": ["https://www.example.com/ü"]}
    loc = f"https://{HOST}/k.txt"
    body = json.loads(request_body(HOST, KEY, [f"https://{HOST}/"], loc))
    assert list(body) == ["host", "key", "keyLocation", "urlList"]
    assert body["keyLocation"] == loc


# IDX006
@pytest.mark.parametrize(
    ("status", "verdict", "words"),
    [
        (200, "ok", "URLs received"),
        (202, "ok", "validate the key"),
        (400, "fail", "could not read the request"),
        (403, "fail", "key is not valid"),
        (422, "fail", "do not belong to host 'www.example.com'"),
        (429, "retry", "rate limited"),
        (500, "retry", "server error"),
        (503, "retry", "server error"),
        (404, "fail", "does not define"),
        (301, "fail", "does not define"),
    ],
)
def test_interpret(status: int, verdict: str, words: str) -> None:
    out = interpret(status, host=HOST, key_file=f"https://{HOST}/{KEY}.txt")
    assert out.status == status and out.verdict == verdict
    assert words in out.message and out.message.startswith(str(status))
    if status == 403:
        assert f"https://{HOST}/{KEY}.txt" in out.message


def test_retry_delay() -> None:
    now = dt.datetime(2024, 5, 1, 12, 0, 0, tzinfo=dt.UTC)
    assert [retry_delay(n, backoff=0.5, now=now) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 4.0]
    assert retry_delay(3, "10", now=now) == 10.0
    assert retry_delay(1, " 0 ", now=now) == 0.0
    assert retry_delay(1, "Wed, 01 May 2024 12:01:00 GMT", now=now) == 60.0
    assert retry_delay(1, "Wed, 01 May 2024 11:00:00 GMT", now=now) == 0.0  # in the past
    assert retry_delay(2, "soon", backoff=1.0, now=now) == 2.0  # unreadable: backoff
    assert retry_delay(2, "-5", backoff=1.0, now=now) == 2.0
