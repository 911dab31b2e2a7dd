"""validation: ``validate()``, the front door — arguments checked, the driver set up and run.

**Targets** are those ``read`` takes (:mod:`sitemapkit.io.target` decides): a file (a
sitemap, or a robots.txt by its name, URL or content), a folder (its robots.txt, else its
sitemap files, indexes first), a sitemap URL, a robots.txt URL or a site (its robots.txt,
else the known paths: :mod:`.site`). A robots.txt's ``Sitemap:`` lines are checked (RB003-
RB011 of ``spec/DISCOVERY.md``, selected and ignored by id like the others), then the
sitemaps it lists. A local index finds its children beside it: by their URLs under its own
(``published_at``), else by file name, validated at the URLs it lists, and one note names
the rules that needed its own URL (SM504, SM505). A target that leads to no sitemap is
unreadable, with an SM012 finding that says what was tried.

**Online.** Offline (the default) nothing but URL targets is fetched: a local file never
is. ``online=True`` checks the URL of every sitemap of the set as a crawler meets it
(SM012): a local file's published copy must answer 200 within 5 redirects (status only:
the local bytes are what is validated), no sitemap may be disallowed by robots.txt for
``robots_agent`` or need a login. ``check_urls=True`` (implies ``online``) requests every
``<loc>``, hreflang alternate and video URL of the set too, HEAD first (SM217, HRE908,
VID718, VID719), while the document is read: ``concurrency`` requests at once (4 per
host), ``timeout`` seconds each, at most ``check_limit`` URLs (the rest is noted as not
checked); ``progress(done, queued)`` is called after each check. See
:mod:`sitemapkit.io.urlcheck` for the requests made and their bounds. Online findings are
warnings.

**Memory.** Each document is read whole (at most ``max_bytes`` after decompression, the
reader's budget), and the XSD and structural checks hold its parsed tree, about 6-10
times its size; documents over ``tree_max_bytes`` skip those checks (noted in the
report). Across a set, the duplicate and hreflang checks keep about 100 bytes per URL (up
to 5,000,000 URLs). The reader and the tree pass each keep at most 10,000 findings of a
rule per document and count the rest, so that a hostile document cannot fill the memory
with findings (``report.omitted``).

**Tuning.** ``tuning`` (a :class:`~sitemapkit.validation.driver.Tuning`) moves the
internal thresholds: findings kept per pass, sizes from which a document is checked piece
by piece, in the tree process, or after the reader. For tests and benchmarks: the
findings do not depend on them, but for the counts a pass keeps and the columns of schema
findings (not placed in pieces).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..core.parse import DEFAULT_MAX_BYTES
from ..core.rules import RULES, expand_ids
from ..lint.checks import Context
from ..lint.report import ValidationReport
from .document import Doc, documents
from .driver import Budget, Tuning, Validator
from .fetcher import Fetcher, HttpFetcher
from .online import Online

__all__ = ["ValidationReport", "validate"]


def validate(
    target: str | Path | Sequence[str | Path],
    *,
    published_at: str | Sequence[str] | None = None,
    allow_hosts: Iterable[str] = (),
    strict: bool = False,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    now: dt.datetime | None = None,
    follow: bool = True,
    fetcher: Fetcher | None = None,
    max_sitemaps: int = 10_000,
    max_bytes: int = DEFAULT_MAX_BYTES,
    tree_max_bytes: int = DEFAULT_MAX_BYTES,
    excerpts: bool = False,
    online: bool = False,
    check_urls: bool = False,
    robots_agent: str = "Googlebot",
    concurrency: int = 8,
    timeout: float = 10.0,
    check_limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_document: Callable[[str, int, int], None] | None = None,
    max_findings: int | None = 1_000,
    tuning: Tuning | None = None,
) -> ValidationReport:
    """Validate sitemaps, robots.txt files, folders and sites, and their indexes' children.

    ``target`` is a path, a URL, or a list of them, validated as one set (set-level rules:
    nested indexes, cycles, duplicates across files, hreflang reciprocity): the targets
    :func:`~sitemapkit.read` takes (see **Targets** in :mod:`sitemapkit.validation.api`).
    ``published_at`` is the URL a local file (or folder) is (or will be) published at:
    the location rules need it, and a local index finds its children beside it by it.
    ``allow_hosts`` waives the location rules for other hosts (SM214). ``select`` and
    ``ignore`` take rule ids or prefixes (``SM2``); SM404 runs only when selected.
    ``now`` (aware) is the time the date heuristics compare with (default: the current
    time, read once). URLs are fetched with ``fetcher`` (default: an :class:`HttpFetcher`
    with ``timeout`` per request, whose client and connection pool the online checks
    share; a fetcher given is not closed and the online checks then have a client of their
    own, unless it is an :class:`HttpFetcher`); ``follow=False`` validates the targets only.
    ``excerpts`` keeps each finding's source line for the text report. ``max_findings``
    caps the findings listed per rule and document (``None`` or 0: all); the others are
    counted in ``report.omitted`` and noted. The online checks (``online``,
    ``check_urls`` and their options), the memory bounds (``max_bytes``,
    ``tree_max_bytes``) and ``tuning`` are described in :mod:`sitemapkit.validation.api`.
    ``on_document(name, done, entries)`` is called as each document starts, with the
    documents done and the entries read so far (a progress line for large sets).

    Never raises for bad input: what is wrong is in the report (``findings``,
    ``unreadable``, ``not_checked``). Raises ``ValueError`` for bad arguments.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "sitemap.xml")
    >>> _ = open(path, "w").write('<?xml version="1.0" encoding="UTF-8"?>\\n'
    ...     '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\\n'
    ...     '<url><loc>https://example.com/shop/a</loc><lastmod>2024/05/01</lastmod></url>\\n'
    ...     '</urlset>\\n')
    >>> report = validate(path, published_at="https://example.com/sitemap.xml")
    >>> [(f.rule, f.line) for f in report.findings]
    [('SM301', 3)]
    """
    active = _active(select, ignore)
    docs = _documents(target, published_at)
    hosts = tuple(h.strip() for h in allow_hosts if h.strip())
    ctx = Context(now=_now(now), allow=hosts, strict=strict)
    needed = online or check_urls or any(d.path is None for d in docs)
    with _fetching(fetcher, needed, timeout, concurrency) as fetcher:
        checker = None
        if online or check_urls:
            options = (robots_agent, concurrency, timeout, check_limit)
            checker = _checker(check_urls, active, progress, *options, fetcher)
        most = max_findings or 0
        budget = Budget(follow, max_sitemaps, max_bytes, tree_max_bytes, most, excerpts=excerpts)
        validator = Validator(
            ctx, budget, fetcher=fetcher, online=checker, active=active, tuning=tuning
        )
        validator.on_document, validator.agent = on_document, robots_agent
        report = validator.run(docs)
    report.findings = [f for f in report.findings if f.rule in active]
    return report


def _documents(
    target: str | Path | Sequence[str | Path], published_at: str | Sequence[str] | None
) -> list[Doc]:
    """The documents of ``validate()``'s targets, each with its published URL;
    ``ValueError`` for the first that cannot be validated."""
    targets: list[str | Path] = [target] if isinstance(target, (str, Path)) else list(target)
    urls = [published_at] if isinstance(published_at, str) else list(published_at or ())
    docs, problems = documents(targets, urls)
    if problems:
        raise ValueError(problems[0])
    return docs


@contextmanager
def _fetching(
    fetcher: Fetcher | None, needed: bool, timeout: float, concurrency: int
) -> Iterator[Fetcher | None]:
    """The fetcher of a validation: the one given (never closed here), else, when
    ``needed``, an :class:`HttpFetcher` of its own, closed when the validation ends."""
    if fetcher is not None or not needed:
        yield fetcher
        return
    own = HttpFetcher(timeout=timeout, concurrency=concurrency)
    try:
        yield own
    finally:
        own.close()


def _active(select: Iterable[str] | None, ignore: Iterable[str]) -> set[str]:
    """The rules a validation reports: those selected (default: the default ones), less
    those ignored; ``ValueError`` for an unknown id. The robots.txt rules (``RB…``) are
    in the catalogue, selected and ignored by id or prefix as the others."""
    selected = None if select is None else expand_ids(select)
    ignored = expand_ids(ignore)
    return {
        rid
        for rid, rule in RULES.items()
        if rid not in ignored and (rid in selected if selected is not None else rule.default)
    }


def _checker(
    check_urls: bool,
    active: set[str],
    progress: Callable[[int, int], None] | None,
    robots_agent: str,
    concurrency: int,
    timeout: float,
    check_limit: int | None,
    fetcher: Fetcher | None,
) -> Online:
    """The online checks; they share the client of an :class:`HttpFetcher`."""
    from ..io.urlcheck import CheckOptions  # when used: httpx costs startup time

    options = CheckOptions(
        robots_agent=robots_agent, concurrency=concurrency, timeout=timeout, check_limit=check_limit
    )
    runner = fetcher.url_checker(options) if isinstance(fetcher, HttpFetcher) else None
    return Online(options, check_urls=check_urls, active=active, progress=progress, runner=runner)


def _now(now: dt.datetime | None) -> dt.datetime:
    if now is None:
        return dt.datetime.now(dt.UTC)
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return now
