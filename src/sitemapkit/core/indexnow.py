"""core: the IndexNow protocol's rules, IDX001–IDX006 of ``spec/DISCOVERY.md`` §3. Pure.

Key and key-location checks, the URL checks against ``host`` and the key's scope, batching
into POST bodies of at most 10,000 URLs, the meaning of each response status and the wait
before a retry. The HTTP client that sends the batches lives in :mod:`sitemapkit.io.indexnow`.

IndexNow (https://www.indexnow.org/documentation) notifies Bing, Yandex, Naver, Seznam, Yep
and the other participating engines (not Google) that URLs were added, updated or deleted;
one submission is shared with all of them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final, Literal

from ..errors import InputError
from .finding import Finding
from .retry import retry_after as read_retry_after
from .urls import Origin, iri_to_uri, validate_loc

__all__ = [
    "DEFAULT_ENDPOINT",
    "MAX_URLS_PER_REQUEST",
    "Outcome",
    "check_host",
    "check_key",
    "check_key_location",
    "interpret",
    "iter_batches",
    "key_file_url",
    "request_body",
    "retry_delay",
    "url_problem",
]

#: The shared endpoint; "submitting to one search engine shares the URLs with all".
DEFAULT_ENDPOINT: Final = "https://api.indexnow.org/indexnow"
#: indexnow.org: "You can submit up to 10,000 URLs per post" (IDX003).
MAX_URLS_PER_REQUEST: Final = 10_000
#: indexnow.org: the key has "a minimum of 8 and a maximum of 128 hexadecimal characters.
#: The key can contain only the following characters: lowercase characters (a-z),
#: uppercase characters (A-Z), numbers (0-9), and dashes (-)" (IDX001).
_KEY: Final = re.compile(r"[A-Za-z0-9-]{8,128}")
_HOST: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*")

Verdict = Literal["ok", "retry", "fail"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a response status means for the client (IDX006).

    ``verdict``: ``"ok"`` (received), ``"fail"`` (permanent: fix the request before trying
    again) or ``"retry"`` (temporary: wait and send the same batch again).
    """

    status: int
    verdict: Verdict
    message: str


def check_key(key: str) -> str:
    """The key, or :class:`InputError` (IDX001: ``[A-Za-z0-9-]{8,128}``).

    >>> check_key("26ecd1ada8034912a62634cc4e3ddd7e")
    '26ecd1ada8034912a62634cc4e3ddd7e'
    """
    if _KEY.fullmatch(key) is None:
        bad = sorted({c for c in key if not (c.isascii() and (c.isalnum() or c == "-"))})
        why = (
            f"it holds {''.join(bad)!r}"
            if bad
            else f"it is {len(key)} characters long, not 8 to 128"
        )
        raise InputError(
            f"IDX001: IndexNow key {key!r} is not valid: {why}",
            field="key",
            hint="use 8 to 128 characters from a-z, A-Z, 0-9 and '-', e.g. 32 hex digits",
        )
    return key


def check_host(host: str) -> str:
    """The host name in lower case (IDNA-encoded), or :class:`InputError`.

    >>> check_host("WWW.Example.com")
    'www.example.com'
    """
    text = host.strip()
    if "/" in text or ":" in text or "@" in text or not text:
        raise InputError(
            f"host {host!r} is not a host name",
            field="host",
            hint="give the host name only, e.g. 'www.example.com' (no scheme, port or path)",
        )
    try:
        name = Origin.of(iri_to_uri(f"https://{text}/")).host
    except ValueError as exc:
        raise InputError(f"host {host!r} is not a host name: {exc}", field="host") from None
    if _HOST.fullmatch(name) is None:
        raise InputError(f"host {host!r} is not a host name", field="host")
    return name


def check_key_location(url: str, host: str) -> str:
    """The key file URL as an RFC 3986 URI, or :class:`InputError` (IDX002).

    indexnow.org: the key file may be placed elsewhere "on the same host" and announced
    with ``keyLocation``; it is a ``.txt`` file holding the key.
    """
    try:
        uri = validate_loc(iri_to_uri(url), "keyLocation")
    except ValueError as exc:
        raise InputError(f"IDX002: {exc}", field="key-location") from None
    o = Origin.of(uri)
    if o.host != host:
        raise InputError(
            f"IDX002: keyLocation {uri!r} is on host {o.host!r}, not on {host!r}",
            field="key-location",
            hint="the key file must be on the host whose URLs are submitted",
        )
    if not o.path.endswith(".txt") or "?" in uri or "#" in uri:
        raise InputError(
            f"IDX002: keyLocation {uri!r} does not name a .txt file",
            field="key-location",
            hint="publish the key in a UTF-8 text file such as /<key>.txt",
        )
    return uri


def key_file_url(host: str, key: str, key_location: str | None = None) -> str:
    """Where the engines look for the key: ``keyLocation``, else ``https://<host>/<key>.txt``."""
    return key_location if key_location is not None else f"https://{host}/{key}.txt"


def _scope(key_location: str | None) -> str:
    """The path prefix a key covers: the key file's folder (Yandex: a key at
    ``/catalog/key.txt`` is "valid for … https://example.com/catalog/" only)."""
    if key_location is None:
        return "/"
    path = Origin.of(key_location).path
    return path[: path.rfind("/") + 1]


def url_problem(url: str, host: str, key_location: str | None = None) -> str | None:
    """Why ``url`` may not be submitted for ``host`` (IDX004), or ``None``.

    indexnow.org: "the URLs must belong to the host"; with a ``keyLocation`` in a folder
    they must lie in that folder.
    """
    try:
        uri = validate_loc(iri_to_uri(url), "URL")
    except ValueError as exc:
        return str(exc)
    o = Origin.of(uri)
    if o.host != host:
        return f"URL {uri!r} is on host {o.host!r}, not on {host!r}"
    scope = _scope(key_location)
    if not o.path.startswith(scope):
        return f"URL {uri!r} is outside {scope!r}, the folder of the key file {key_location!r}"
    return None


def iter_batches(
    urls: Iterable[str],
    *,
    host: str,
    key_location: str | None = None,
    size: int = MAX_URLS_PER_REQUEST,
    findings: list[Finding] | None = None,
) -> Iterator[list[str]]:
    """Group ``urls`` into batches of at most ``size`` for one POST each (IDX003).

    Blank entries are skipped. A URL that fails :func:`url_problem` is left out with an
    IDX004 error finding (the engine would answer 422 for the whole batch); a repeat
    within one batch is left out with an IDX005 warning. URLs are sent in RFC 3986 form.

    >>> list(iter_batches(["https://a.example/1", "https://a.example/2",
    ...                    "https://a.example/1"], host="a.example", size=2))
    [['https://a.example/1', 'https://a.example/2'], ['https://a.example/1']]
    """
    if not 1 <= size <= MAX_URLS_PER_REQUEST:
        raise ValueError(f"size must be 1..{MAX_URLS_PER_REQUEST:,}, not {size}")
    out = findings if findings is not None else []
    batch: list[str] = []
    seen: set[str] = set()
    for n, raw in enumerate(urls, 1):
        text = raw.strip()
        if not text:
            continue
        problem = url_problem(text, host, key_location)
        if problem is not None:
            out.append(Finding("IDX004", "error", f"{problem}; not submitted", f"URL #{n}"))
            continue
        uri = iri_to_uri(text)
        if uri in seen:
            out.append(Finding("IDX005", "warning", f"{uri!r} is repeated; sent once", f"URL #{n}"))
            continue
        seen.add(uri)
        batch.append(uri)
        if len(batch) == size:
            yield batch
            batch, seen = [], set()
    if batch:
        yield batch


def request_body(host: str, key: str, urls: list[str], key_location: str | None = None) -> bytes:
    """The JSON body of a batch POST (UTF-8; ``keyLocation`` only when given).

    >>> request_body("a.example", "0123456789abcdef", ["https://a.example/"])
    b'{"host":"a.example","key":"0123456789abcdef","urlList":["https://a.example/"]}'
    """
    body: dict[str, object] = {"host": host, "key": key}
    if key_location is not None:
        body["keyLocation"] = key_location
    body["urlList"] = urls
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def interpret(status: int, *, host: str = "", key_file: str = "") -> Outcome:
    """The meaning of an IndexNow response status (indexnow.org "Response format", IDX006)."""
    if status == 200:
        return Outcome(status, "ok", "200 OK: URLs received")
    if status == 202:
        return Outcome(
            status, "ok", "202 Accepted: URLs received; the engine has yet to validate the key"
        )
    if status == 400:
        return Outcome(status, "fail", "400 Bad Request: the engine could not read the request")
    if status == 403:
        where = f" at {key_file}" if key_file else ""
        return Outcome(
            status,
            "fail",
            f"403 Forbidden: the key is not valid; the key file{where} was not found or does "
            "not hold the key",
        )
    if status == 422:
        return Outcome(
            status,
            "fail",
            f"422 Unprocessable Entity: URLs that do not belong to host {host!r}, or a key "
            "that does not match the protocol's format",
        )
    if status == 429:
        return Outcome(status, "retry", "429 Too Many Requests: rate limited as potential spam")
    if 500 <= status <= 599:
        return Outcome(status, "retry", f"{status}: server error at the engine")
    return Outcome(status, "fail", f"{status}: an answer the IndexNow protocol does not define")


def retry_delay(
    attempt: int,
    retry_after: str | None = None,
    *,
    backoff: float = 1.0,
    now: dt.datetime,
) -> float:
    """Seconds to wait before retry number ``attempt`` (1, 2, …).

    A ``Retry-After`` header (read by :func:`sitemapkit.core.retry.retry_after`, against
    ``now``, which must be aware) wins; otherwise the wait doubles each time:
    ``backoff`` × 2^(attempt-1).

    >>> t = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.UTC)
    >>> retry_delay(3, backoff=0.5, now=t), retry_delay(1, "7", now=t)
    (2.0, 7.0)
    >>> retry_delay(1, "Wed, 01 May 2024 12:00:30 GMT", now=t)
    30.0
    """
    wait = read_retry_after(retry_after, now=now)
    if wait is not None:
        return wait
    return float(backoff * 2 ** (attempt - 1))
