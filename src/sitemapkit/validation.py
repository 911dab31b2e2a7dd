"""Validating sitemaps: files, build folders, URLs and whole sets, against every offline rule.

The edge that drives the pure validator (:mod:`sitemapkit.lint`): it reads files (or fetches
URLs through a pluggable :class:`Fetcher`), feeds each document to the reader and the
checks, runs the XSD and the structural checks on the parsed tree, places every finding on
its line, and walks sitemap indexes into their children.

Per document, two passes run side by side: the streaming reader with the entry checks (this
thread) and the tree pass, which parses the uncompressed document with libxml2, validates it
against the bundled schemas and runs the structural checks (a worker thread; libxml2 releases
the GIL). The tree holds one document at a time, about six times its uncompressed size
(≈ 300 MB for a 50 MiB file); documents over the reader's budget are read only up to it.
Across a set, duplicate and hreflang checks keep a few dozen bytes per URL.

A local build folder mirrors the site: a local index validated with its URL
(``published_at``) finds each child whose URL lies under the index's directory URL at the
matching path beside it; a child that is not there is noted as not checked.

Offline means no network: a local file is never fetched. With ``online=True`` the URL of
every sitemap of the set (a URL target, or a local file's published URL) is checked the
way a crawler meets it (SM012: status, robots.txt, login); with ``check_urls=True`` every
``<loc>``, hreflang alternate and video URL of the set too (SM217, HRE908, VID718,
VID719), through :mod:`sitemapkit.io.urlcheck` while the document is read: the records
stream from the reader to a bounded window of checks, and only the findings wait for the
document's end to get their lines.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email.utils
import os
import pickle
import re
import struct
import subprocess
import sys
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, Protocol, cast
from urllib.parse import unquote

from lxml import etree

from .core.finding import Finding, Severity
from .core.model import Url
from .core.parse import DEFAULT_MAX_BYTES, Record, SitemapParser
from .core.probe import Probe, Purpose, is_http
from .core.urls import Origin, iri_to_uri, unescape
from .errors import FetchError, LimitError, SitemapError
from .lint.checks import (
    Context,
    DocumentNode,
    FileChecks,
    Pending,
    SetChecks,
    check_compression,
    check_document,
    entry_anchors,
    may_have_padded_values,
    normalize,
    resolve_lines,
)
from .lint.online import Role, entry_problems, sitemap_problems
from .lint.report import ValidationReport, sort_findings
from .lint.rules import RULES, expand_ids
from .lint.schema import schema_findings

if TYPE_CHECKING:  # imported when used: httpx and the event loop cost startup time
    from .io.urlcheck import BlockingUrlChecker, CheckOptions, UrlChecker

__all__ = ["Fetched", "Fetcher", "HttpFetcher", "ValidationReport", "validate"]

_CHUNK: Final = 1 << 20
_SPACE: Final = b" \t\r\n"
_BOM: Final = b"\xef\xbb\xbf"
_UTF8_DECL: Final = re.compile(rb"encoding\s*=\s*[\"']utf-?8[\"']", re.IGNORECASE)
_LOGIN: Final = {
    401: " (login required: crawlers cannot log in; serve the sitemap without authentication)",
    403: " (forbidden: crawlers are refused or a login is required; serve it to everyone)",
}


@dataclass(frozen=True, slots=True)
class Fetched:
    """A fetched document: final URL (after redirects), status, body as served (a gzip file
    stays gzip; ``Content-Encoding`` removed) and its ``Last-Modified`` time, if any."""

    url: str
    status: int
    body: bytes
    modified: dt.datetime | None = None


class Fetcher(Protocol):
    """What the validator needs from the network: one URL's body, within a byte budget.

    Implementations raise :class:`~sitemapkit.errors.FetchError` when there is no answer
    at all (DNS, connection, timeout); an HTTP error status is an answer.
    """

    def fetch(self, url: str, *, max_bytes: int) -> Fetched: ...


class HttpFetcher:
    """A small synchronous :class:`Fetcher` on httpx: at most 5 redirects, a timeout, a
    byte budget on the decoded body. (The async runner of :mod:`sitemapkit.io.fetch` is the
    place for politeness, retries and caching; this is enough to validate a handful of URLs.)
    """

    def __init__(self, *, timeout: float = 30.0, user_agent: str | None = None) -> None:
        self.timeout = timeout
        self.user_agent = user_agent or "sitemapkit-validate"

    def fetch(self, url: str, *, max_bytes: int) -> Fetched:
        import httpx

        try:
            with (
                httpx.Client(
                    follow_redirects=True,
                    max_redirects=5,
                    timeout=self.timeout,
                    headers={"User-Agent": self.user_agent},
                ) as client,
                client.stream("GET", url) as response,
            ):
                parts: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    parts.append(chunk)
                    size += len(chunk)
                    if size > max_bytes:
                        break
                modified = None
                header = response.headers.get("last-modified")
                if header:
                    try:
                        modified = email.utils.parsedate_to_datetime(header)
                    except (TypeError, ValueError):
                        modified = None
                return Fetched(str(response.url), response.status_code, b"".join(parts), modified)
        except httpx.HTTPError as exc:
            raise FetchError(f"cannot fetch {url!r}: {exc}", where=url) from exc


@dataclass(slots=True)
class _Doc:
    """One document to validate: a local file or a URL, and what it is known as."""

    where: str
    url: str | None
    path: Path | None = None


@dataclass(slots=True)
class _Outcome:
    kind: str | None = None
    children: list[tuple[str, str | None, int | None]] = field(default_factory=list)


@dataclass(slots=True)
class _Scan:
    """The tree pass of one document: its tree, or (checked piece by piece) the
    ``(raw loc, line)`` anchors of its entries."""

    root: etree._Element | None
    kind: str | None
    findings: list[Finding]
    anchors: Iterable[tuple[str, int]] | None = None
    #: Findings per rule beyond _KEEP_PER_RULE, not in ``findings``.
    unlisted: dict[str, int] = field(default_factory=dict)


class _Validator:
    def __init__(
        self,
        *,
        ctx: Context,
        follow: bool,
        fetcher: Fetcher | None,
        max_sitemaps: int,
        excerpts: bool,
        max_bytes: int,
        tree_max_bytes: int,
        online: _Online | None = None,
        max_findings: int = 0,
        active: set[str] | None = None,
    ) -> None:
        self.ctx = ctx
        self.max_findings = max_findings
        self.active = active
        self.online = online
        self.tree_max_bytes = tree_max_bytes
        self.follow = follow
        self.fetcher = fetcher
        self.max_sitemaps = max_sitemaps
        self.want_excerpts = excerpts
        self.max_bytes = max_bytes
        self.report = ValidationReport()
        self.shared = SetChecks()
        self.visited: set[str] = set()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sitemapkit-tree")
        self.tree_process: _TreeProcess | None = None
        self.tree_process_failed = not _two_cores()

    # -- the set ------------------------------------------------------------------------

    def run(self, docs: list[_Doc]) -> ValidationReport:
        try:
            queue = list(docs)
            while queue:
                doc = queue.pop(0)
                key = self._key(doc)
                if key in self.visited:
                    continue
                if len(self.visited) >= self.max_sitemaps:
                    self.report.not_checked.append(
                        (
                            doc.url or doc.where,
                            f"the set has more than {self.max_sitemaps:,} sitemaps (max_sitemaps)",
                        )
                    )
                    continue
                self.visited.add(key)
                outcome = self._one(doc)
                if outcome is not None and outcome.kind == "sitemapindex" and self.follow:
                    queue[0:0] = self._children(doc, outcome)
        finally:
            self.pool.shutdown()
            if self.tree_process is not None:
                self.tree_process.close()
            if self.online is not None:
                self.online.close()
        report = self.report
        if self.online is not None:
            report.notes.extend(self.online.notes())
        report.findings.extend(self.shared.finish())
        report.notes.extend(self.shared.notes)
        report.findings = sort_findings(report.findings, report.files)
        return report

    def _key(self, doc: _Doc) -> str:
        if doc.path is not None:
            return "file:" + str(doc.path.resolve())
        return "url:" + normalize(doc.url or doc.where)

    def _children(self, doc: _Doc, outcome: _Outcome) -> list[_Doc]:
        out: list[_Doc] = []
        for child, _lastmod, _line in outcome.children:
            if doc.path is None:
                out.append(_Doc(child, child))
                continue
            local = _mirror(doc, child)
            if isinstance(local, Path):
                out.append(_Doc(_label(local), child, local))
            elif self.fetcher is not None:
                out.append(_Doc(child, child))
            elif not self._known(child):
                self.report.not_checked.append((child, local))
        return out

    def _known(self, url: str) -> bool:
        return "url:" + normalize(url) in self.visited

    # -- one document -------------------------------------------------------------------

    def _read(self, doc: _Doc) -> tuple[bytes, dt.datetime | None, str | None] | None:
        """(bytes, modified, URL) of a document, or None (reported) when it cannot be read."""
        if doc.path is not None:
            try:
                with doc.path.open("rb") as fh:
                    data = fh.read(self.max_bytes + 1)
                    modified = dt.datetime.fromtimestamp(doc.path.stat().st_mtime, dt.UTC)
            except OSError as exc:
                self.report.unreadable.append((doc.where, exc.strerror or str(exc)))
                return None
            return data, modified, doc.url
        if self.fetcher is None:
            self.report.unreadable.append(
                (doc.where, "validating a URL needs a fetcher; none was given")
            )
            return None
        assert doc.url is not None
        try:
            got = self.fetcher.fetch(doc.url, max_bytes=self.max_bytes)
        except FetchError as exc:
            self.report.unreadable.append((doc.where, exc.message))
            return None
        if got.status != 200:
            self.report.files.append(doc.where)
            self.report.findings.append(
                Finding(
                    "SM012",
                    _sev("SM012", self.ctx),
                    f"Fetching the sitemap answered HTTP {got.status}, not 200; it cannot be read"
                    + _LOGIN.get(got.status, ""),
                    doc.where,
                )
            )
            return None
        return got.body, got.modified, got.url

    def _one(self, doc: _Doc) -> _Outcome | None:
        online = self.online
        if online is not None and online.sitemaps and doc.url is not None and is_http(doc.url):
            self.report.findings.extend(online.sitemap(doc.url, doc.where, doc.path, self.ctx))
        read = self._read(doc)
        if read is None:
            return None
        data, modified, url = read
        if url is not None:
            doc.url = url
        where = doc.where
        report = self.report
        report.files.append(where)
        ctx = Context(
            url=doc.url,
            now=self.ctx.now,
            modified=modified,
            allow=self.ctx.allow,
            strict=self.ctx.strict,
            future_tolerance=self.ctx.future_tolerance,
        )
        plain = _gunzip(data, self.max_bytes)
        deferred = False
        if len(plain) <= self.tree_max_bytes and len(plain) >= _DEFER_FROM and _looks_plain(plain):
            deferred = True  # decided once the reader has seen the entries
            scan: Future[_Scan] = Future()
        elif len(plain) <= self.tree_max_bytes:
            scan = self.pool.submit(self._tree, plain, where, ctx)
        else:
            scan = Future()
            scan.set_result(_Scan(None, None, []))
            report.notes.append(
                f"{where}: the XSD and structural checks were skipped: the document is larger "
                f"than {self.tree_max_bytes:,} bytes (tree_max_bytes)"
            )
        # the reader's findings are deduped against the tree pass's, then capped (_cap)
        parser = SitemapParser(
            source=where,
            base_url=doc.url,
            max_bytes=self.max_bytes,
            max_findings=_KEEP_PER_RULE,
            summarize=False,
        )
        fc = FileChecks(where, ctx, self.shared)
        batches = self._feed(parser, fc, data, where)
        checked: list[Pending] = []
        if online is not None and online.roles:
            checked = online.entries(batches, fc, ctx)
        else:
            for _ in batches:
                pass
        fc.finish()
        if deferred:
            scan.set_result(
                _plain_pass(plain, where, ctx)
                if parser.scanned_all
                and not parser.scanned_padded
                and not parser.scanned_extensions
                else self._tree(plain, where, ctx)
            )
        tree = scan.result()
        kind = parser.kind or tree.kind
        own = _reader_findings(parser.findings, ctx)
        if kind == "text":
            own += check_document(None, plain, kind=kind, where=where, ctx=ctx)
        own += check_compression(data[:2], doc.url or where, where=where)
        own += _dedupe(tree.findings, own)
        own = _drop_misbound(own)
        wanted = [(p.loc, p.occurrence) for p in fc.pending]
        wanted += [(p.see[0], p.see[1]) for p in fc.pending if p.see is not None]
        wanted += [(a.loc, a.occurrence) for a in fc.alternates]
        wanted += [(c, occ) for c, _, occ in fc.children]
        wanted += [(p.loc, p.occurrence) for p in checked]
        lines = resolve_lines(
            wanted,
            root=tree.root,
            data=plain,
            kind=kind,
            base_url=doc.url,
            anchors=tree.anchors,
        )
        own += [p.finding(where, lines) for p in fc.pending]
        own += [p.finding(where, lines) for p in checked]
        own += fc.findings
        for a in fc.alternates:
            a.line = lines.get((a.loc, a.occurrence))
        children = [(c, lm, lines.get((c, occ))) for c, lm, occ in fc.children]
        self.shared.add_document(
            DocumentNode(where, normalize(doc.url) if doc.url else None, kind, children, fc.max_day)
        )
        if self.active is not None:
            own = [f for f in own if f.rule in self.active]
        # findings a pass did not keep: when both passes stopped keeping a rule, they are
        # taken to be the same ones (the kept ones were deduped)
        unlisted = dict(tree.unlisted)
        for rule, n in parser.unlisted.items():
            unlisted[rule] = max(n, unlisted.get(rule, 0))
        if self.active is not None:
            unlisted = {rule: n for rule, n in unlisted.items() if rule in self.active}
        if self.max_findings or unlisted:
            own = self._cap(own, where, unlisted)
        report.findings.extend(own)
        report.entries += parser.entries
        if self.want_excerpts:
            _excerpts(report, where, plain, own)
        return _Outcome(kind, children)

    def _cap(
        self, own: list[Finding], where: str, unlisted: dict[str, int] | None = None
    ) -> list[Finding]:
        """The first ``max_findings`` findings of each rule in this document (by line);
        the others, and the ``unlisted`` ones (not kept by a pass), are counted in
        ``report.omitted`` and noted."""
        cap = self.max_findings
        unlisted = unlisted or {}
        counts: dict[str, int] = {}
        kept: list[Finding] = []
        for f in sorted(own, key=lambda f: f.line or 0):
            n = counts[f.rule] = counts.get(f.rule, 0) + 1
            if not cap or n <= cap:
                kept.append(f)
        for rule in [*counts, *(r for r in unlisted if r not in counts)]:
            n = counts.get(rule, 0)
            omitted = (n - cap if cap and n > cap else 0) + unlisted.get(rule, 0)
            if not omitted:
                continue
            self.report.omitted[rule] = self.report.omitted.get(rule, 0) + omitted
            why = (
                f"at most {cap:,} per rule and document: max_findings, --max-findings"
                if cap and n > cap
                else f"each pass keeps at most {_KEEP_PER_RULE:,} per rule and document"
            )
            self.report.notes.append(
                f"{where}: {omitted:,} more {rule} findings are not listed ({why})"
            )
        return kept

    def _tree(self, plain: bytes, where: str, ctx: Context) -> _Scan:
        """The tree pass of a document: in the tree process when the document is large
        enough to be worth sending there (and one could be started), else here."""
        if len(plain) >= _REMOTE_FROM and not self.tree_process_failed:
            try:
                if self.tree_process is None:
                    self.tree_process = _TreeProcess()
                return self.tree_process.run(plain, where, ctx)
            except (OSError, EOFError, pickle.PickleError, struct.error):
                self.tree_process_failed = True  # it could not start or it died: go on here
        return _tree_pass(plain, where, ctx)

    def _feed(
        self, parser: SitemapParser, fc: FileChecks, data: bytes, where: str
    ) -> Iterator[list[Record]]:
        """Read the document into the entry checks, yielding each batch of records once
        it is checked (``fc.occurrences`` names its records)."""
        try:
            for i in range(0, len(data), _CHUNK):
                batch = parser.feed(data[i : i + _CHUNK])
                fc.add(batch)
                yield batch
            batch = parser.close()
            fc.add(batch)
            yield batch
        except LimitError as exc:
            self.report.notes.append(f"{where}: reading stopped: {exc.message}")
        except SitemapError:
            pass  # a fatal finding (HTML, unknown root, ZIP) ends the document; it is recorded


#: What an online check of an entry is about: its place in the document's jobs (to report
#: in document order whatever order the answers come in), the entry's loc, the role of
#: the URL checked, and the hreflang of an alternate.
_Tag = tuple[int, str, Role, str | None]


class _Bounded:
    """A set that forgets its oldest members beyond ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, str], None] = OrderedDict()

    def __contains__(self, key: tuple[str, str]) -> bool:
        return key in self._items

    def add(self, key: tuple[str, str]) -> None:
        self._items[key] = None
        if len(self._items) > self.size:
            self._items.popitem(last=False)


class _Online:
    """The online side of one validation: a URL checker shared by the whole set.

    SM012 for every sitemap with a URL (when selected); with ``check_urls``, the entries'
    URLs of the roles whose rules are selected. An alternate or a video URL is checked
    and reported once, for the first entry (in document order) that lists it (the last
    50,000 such URLs are remembered, about 10 MB); every entry's own loc is checked for
    the entry.
    """

    def __init__(
        self,
        options: CheckOptions,
        *,
        check_urls: bool,
        active: set[str],
        progress: Callable[[int, int], None] | None,
    ) -> None:
        from .io.urlcheck import BlockingUrlChecker

        self.options = options
        self.active = active
        self.sitemaps = "SM012" in active
        roles: set[Role] = set()
        if check_urls:
            if "SM217" in active:
                roles.add("loc")
            if "HRE908" in active:
                roles.add("alternate")
            if active & {"VID718", "VID719"}:
                roles.add("thumbnail_loc")
            if "VID719" in active:
                roles |= {"content_loc", "player_loc"}
        self.roles = frozenset(roles)
        self.check_urls = check_urls
        self.progress = progress
        self.queued = 0
        self.done = 0
        self.not_checked = 0
        self.listed = _Bounded(50_000)
        self.runner: BlockingUrlChecker = BlockingUrlChecker(options)

    def close(self) -> None:
        self.runner.close()

    def sitemap(self, url: str, where: str, path: Path | None, ctx: Context) -> list[Finding]:
        """SM012 for a sitemap's URL: a local file's published copy is requested (status
        only); a URL target, which the validator fetches itself, is checked against its
        robots.txt."""
        published = path is not None

        async def check(c: UrlChecker) -> Probe:
            return await (c.probe(url, "sitemap") if published else c.robots_verdict(url))

        probe = self.runner.call(check)
        agent = self.options.robots_agent
        return [
            Finding("SM012", _sev("SM012", ctx), message, where)
            for message in sitemap_problems(probe, agent=agent, published=published)
        ]

    def entries(
        self, batches: Iterator[list[Record]], fc: FileChecks, ctx: Context
    ) -> list[Pending]:
        """Check the URLs of a document's entries while reading it (``batches`` is read to
        the end); the findings wait for their lines."""
        found: list[tuple[int, Pending]] = []
        jobs = self._jobs(batches, fc)

        async def collect(c: UrlChecker) -> None:
            async for tag, probe in c.iter_checks(jobs):
                self._take(tag, probe, found, ctx)

        self.runner.call(collect)
        found.sort(key=lambda item: item[0])
        return [pending for _, pending in found]

    def _jobs(
        self, batches: Iterator[list[Record]], fc: FileChecks
    ) -> Iterator[tuple[_Tag, str, Purpose]]:
        roles = self.roles
        for batch in batches:
            if not batch or type(batch[0]) is not Url:
                continue
            for record, seen_before in zip(batch, fc.occurrences, strict=True):
                if seen_before or not isinstance(record, Url):
                    continue  # a repeated loc is SM215; its first entry is checked
                loc = record.loc
                wanted: list[tuple[Role, str | None, str, Purpose]] = []
                if "loc" in roles:
                    wanted.append(("loc", None, loc, "page"))
                if "alternate" in roles:
                    wanted += [
                        ("alternate", a.hreflang, a.href, "page")
                        for a in record.alternates
                        if a.href != loc
                    ]
                for v in record.videos:
                    if "thumbnail_loc" in roles:
                        wanted.append(("thumbnail_loc", None, v.thumbnail_loc, "thumbnail"))
                    if "content_loc" in roles and v.content_loc:
                        wanted.append(("content_loc", None, v.content_loc, "media"))
                    if "player_loc" in roles and v.player_loc:
                        wanted.append(("player_loc", None, v.player_loc, "media"))
                for role, hreflang, url, purpose in wanted:
                    if not is_http(url):
                        continue  # an offline finding already
                    if role != "loc":
                        if (role, url) in self.listed:
                            continue
                        self.listed.add((role, url))
                    self.queued += 1
                    yield (self.queued, loc, role, hreflang), url, purpose

    def _take(
        self, tag: _Tag, probe: Probe | None, found: list[tuple[int, Pending]], ctx: Context
    ) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.queued)
        if probe is None:
            self.not_checked += 1
            return
        seq, loc, role, hreflang = tag
        agent = self.options.robots_agent
        for rule, message in entry_problems(probe, role=role, agent=agent, hreflang=hreflang):
            if rule in self.active:
                found.append((seq, Pending(rule, _sev(rule, ctx), message, loc, 0)))

    def notes(self) -> list[str]:
        """What the report should say about the online checks."""
        checker = self.runner.checker
        out = [
            f"{answer.url} answered {answer.describe()}: while robots.txt is unreachable, "
            "crawlers treat its site as disallowed (RFC 9309 §2.3.1.4); the site's URLs "
            "were checked as if it allowed everything"
            for answer in checker.unreachable.values()
        ]
        if self.check_urls:
            out.append(
                f"online: {self.done - self.not_checked:,} URLs checked "
                f"({checker.started:,} distinct), robots agent {self.options.robots_agent!r}"
            )
        if self.not_checked:
            out.append(
                f"{self.not_checked:,} URLs of the set were not checked online: the limit of "
                f"{self.options.check_limit:,} URLs was reached (--check-limit)"
            )
        return out


def _sev(rule: str, ctx: Context) -> Severity:
    r = RULES[rule]
    return "error" if ctx.strict and r.strict else r.severity


def _reader_findings(findings: list[Finding], ctx: Context) -> list[Finding]:
    """The reader's findings with the catalogue's severities.

    The reader lowers or raises a few for its own purpose (a relative loc it could resolve
    is a warning for reading; a too-long video title drops the video), validation reports
    the catalogue's; ``--strict`` promotes the strict rules.
    """
    out = []
    for f in findings:
        sev = f.severity
        if f.rule == "SM201":
            sev = "error"
        elif f.rule == "VID703":
            sev = "warning"
        if ctx.strict and RULES[f.rule].strict:
            sev = "error"
        out.append(f if sev == f.severity else _with_severity(f, sev))
    return out


def _with_severity(f: Finding, severity: Severity) -> Finding:
    return Finding(f.rule, severity, f.message, f.where, f.line, f.column, f.loc)


def _dedupe(candidates: list[Finding], known: list[Finding]) -> list[Finding]:
    """Drop findings that repeat a known one: same rule on the same entry (or line).

    The tree pass (XSD and structure) finds much of what the reader already reported; the
    reader's findings win, then the structural checks', then the schema's.
    """
    by_loc = {(f.rule, f.loc) for f in known if f.loc is not None}
    by_line = {(f.rule, f.line) for f in known if f.loc is None}
    anywhere = {f.rule for f in known if f.loc is None and f.line is None}
    misbound = [f.message for f in known if f.rule == "SM102"]
    out: list[Finding] = []
    for f in candidates:
        if f.loc is not None and (f.rule, f.loc) in by_loc:
            continue
        if f.loc is None and ((f.rule, f.line) in by_line or f.rule in anywhere):
            continue
        if (
            f.rule == "SM107"
            and f.severity == "warning"
            and any(_quoted_ns(f.message) in m for m in misbound)
        ):
            continue
        out.append(f)
        if f.loc is not None:
            by_loc.add((f.rule, f.loc))
        else:
            by_line.add((f.rule, f.line))
    return out


def _drop_misbound(findings: list[Finding]) -> list[Finding]:
    """An extension prefix bound to a wrong URI is SM102; "unknown namespace" says it twice."""
    misbound = [f.message for f in findings if f.rule == "SM102"]
    if not misbound:
        return findings
    return [
        f
        for f in findings
        if not (
            f.rule == "SM107"
            and f.severity == "warning"
            and any(_quoted_ns(f.message) in m for m in misbound)
        )
    ]


def _quoted_ns(message: str) -> str:
    start = message.find("'http")
    if start < 0:
        return "\0"
    end = message.find("'", start + 1)
    return message[start : end + 1]


#: Documents from this size on have their tree pass in a child process (_TreeProcess).
_REMOTE_FROM: Final = 1 << 20


def _two_cores() -> bool:
    return (os.cpu_count() or 1) >= 2 and bool(sys.executable)


class _TreeProcess:
    """The tree pass in a child process, so that it runs beside the reader on a second
    core (libxml2 holds the GIL for much of its work).

    Started as ``python -c`` (like the reader's parser workers: no fork of a process that
    may run threads, no re-import of the caller's ``__main__``). One document at a time:
    its uncompressed bytes go in as a length-prefixed pickle, its findings and entry
    anchors (never a tree) come back.
    """

    def __init__(self) -> None:
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[1])  # the folder holding sitemapkit/
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from sitemapkit.validation import _tree_main; _tree_main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )

    def run(self, plain: bytes, where: str, ctx: Context) -> _Scan:
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        _send(stdin, (len(plain), where, ctx))
        stdin.write(plain)  # as it is: no pickled copy of a large document
        stdin.flush()
        reply = _receive(stdout)
        if not isinstance(reply, _Scan):
            raise EOFError(f"the tree process failed: {reply!r}")
        return reply

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        self.proc.kill()  # idle between documents: nothing to lose, no polling wait
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _send(out: IO[bytes], obj: object) -> None:
    data = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    out.write(struct.pack("!Q", len(data)))
    out.write(data)
    out.flush()


def _receive(inp: IO[bytes]) -> object:
    head = inp.read(8)
    if len(head) < 8:
        raise EOFError("the tree process ended")
    (size,) = struct.unpack("!Q", head)
    data = inp.read(size)
    if len(data) < size:
        raise EOFError("the tree process ended")
    return pickle.loads(data)


def _tree_main() -> None:  # pragma: no cover - runs in the tree process
    """The tree process: documents in on stdin, their tree pass out on stdout."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # nothing printed by accident can corrupt the channel
    inp = sys.stdin.buffer
    while True:
        try:
            request = _receive(inp)
        except EOFError:
            return
        size, where, ctx = cast(tuple[int, str, Context], request)
        plain = inp.read(size)
        if len(plain) < size:
            return
        try:
            scan = _tree_pass(plain, where, ctx)
            if scan.root is not None:
                scan.anchors = list(entry_anchors(scan.root, scan.kind))
                scan.root = None
            reply: object = scan
        except Exception as exc:  # a bug: the parent goes on without this process
            reply = f"{type(exc).__name__}: {exc}"
        _send(out, reply)


#: Documents from this size on that look plain wait for the reader (see _plain_pass).
_DEFER_FROM: Final = 1 << 20
# What _looks_plain rules out besides padded values: prefixed elements.
_PREFIXED_TAG: Final = re.compile(rb"</?[A-Za-z_][-\w.]*:")
_LOC_ELEMENT: Final = re.compile(rb"<loc>([^<]*)</loc>")


def _looks_plain(plain: bytes) -> bool:
    """Whether a urlset seems to hold nothing but what the reader's scanner reads (one
    loc, lastmod, changefreq, priority per entry; see core.parse): no comment, CDATA,
    DOCTYPE, prefixed element or padded value in its first 64 KiB. The reader confirms it
    for the whole document (``SitemapParser.scanned_all`` and ``scanned_padded``); a
    document that is not plain after all has its tree pass after the reader, not beside
    it."""
    head = plain[:_LOOK]
    return (
        b"</url>" in head
        and b"<!--" not in head
        and b"<![CDATA[" not in head
        and b"<!DOCTYPE" not in head
        and _PREFIXED_TAG.search(head) is None
        and not may_have_padded_values(head)
    )


_LOOK: Final = 1 << 16


def _plain_pass(plain: bytes, where: str, ctx: Context) -> _Scan:
    """The tree pass of a document the reader's scanner read whole.

    Every entry passed the reader's fast path, which is at least as strict as the schemas
    and the structural checks for loc, lastmod, changefreq and priority (the order of the
    scanner's pattern is the schemas' too), and the document holds no markup those checks
    look at (``_looks_plain``). So the prolog, the root element and the first entry are
    checked as a document of their own (their lines are the document's), and the entries'
    anchors come from the bytes, only if a finding needs its line.
    """
    end = plain.index(b"</url>") + len(b"</url>")
    head = _tree_pass(plain[:end] + b"</urlset>", where, ctx)
    return _Scan(None, head.kind, head.findings, _plain_anchors(plain))


def _plain_anchors(plain: bytes) -> Iterator[tuple[str, int]]:
    """``(raw loc, line)`` of each entry of a plain urlset, from its bytes."""
    line, last = 1, 0
    for m in _LOC_ELEMENT.finditer(plain):
        line += plain.count(b"\n", last, m.start())
        last = m.start()
        raw = m.group(1).decode("utf-8", "replace")
        yield unescape(raw), line


#: Findings of one rule each pass keeps of a document (the reader's, the tree pass's); the
#: others are only counted. A hostile document of 500,000 bad entries held 1.5 million
#: findings in each pass (1 GB) before the per-rule cap at the end.
_KEEP_PER_RULE: Final = 10_000
#: Documents larger than this are checked piece by piece (see _piece_pass).
_PIECES_FROM: Final = 4 << 20
#: Entries per piece: a few MB of tree.
_PIECE: Final = 5_000


#: How the tree pass parses: hardened (no entities, DTD or network), only elements kept.
_TREE_OPTIONS: Final[dict[str, Any]] = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "huge_tree": False,
    "remove_blank_text": True,
    "remove_comments": True,
    "remove_pis": True,
}


def _tree_pass(plain: bytes, where: str, ctx: Context) -> _Scan:
    """Parse the uncompressed XML document once: structural checks, then the XSD."""
    text = _xml_text(plain)
    if text is None:
        return _Scan(None, None, [])
    if len(text) > _PIECES_FROM:
        scan = _piece_pass(text, where, ctx)
        if scan is not None:
            return scan
    parser = etree.XMLParser(**_TREE_OPTIONS)
    try:
        root = etree.fromstring(text, parser)
    except etree.XMLSyntaxError:
        # The reader reports why. A recovered tree still places the findings of the
        # records read before the damage (values past it may be mangled: no checks).
        recover = etree.XMLParser(
            resolve_entities=False, no_network=True, load_dtd=False, recover=True
        )
        try:
            damaged = etree.fromstring(text, recover)
        except etree.XMLSyntaxError:
            damaged = None
        if damaged is None:
            return _Scan(None, None, [])
        return _Scan(damaged, _kind(damaged), [])
    kind = _kind(root)
    findings = check_document(root, text, kind=kind, where=where, ctx=ctx)
    findings += _dedupe(
        schema_findings(root.getroottree(), source=text, where=where, strict=ctx.strict),
        findings,
    )
    unlisted: dict[str, int] = {}
    return _Scan(root, kind, _keep_first(findings, {}, unlisted), unlisted=unlisted)


def _keep_first(
    findings: Iterable[Finding], counts: dict[str, int], unlisted: dict[str, int]
) -> list[Finding]:
    """The findings while their rule's count (kept in ``counts``) is within
    _KEEP_PER_RULE; the others are counted in ``unlisted``."""
    kept = []
    for f in findings:
        n = counts[f.rule] = counts.get(f.rule, 0) + 1
        if n <= _KEEP_PER_RULE:
            kept.append(f)
        else:
            unlisted[f.rule] = unlisted.get(f.rule, 0) + 1
    return kept


def _piece_pass(text: bytes, where: str, ctx: Context, piece: int = _PIECE) -> _Scan | None:
    """The tree pass in bounded memory, for a large urlset or index.

    The document is parsed as a stream; every ``piece`` entries, the finished entries move
    under a copy of the root element (their line numbers stay theirs), and that piece is
    checked and validated against the schemas on its own, then dropped. The schemas'
    content model is per entry, so the pieces together get the findings the whole tree
    gets (the count limit is the reader's SM110), except the columns of schema findings,
    which are not placed here. Findings about the root come once. Returns ``None`` (check
    the whole tree) for a document that is not well-formed, has a DOCTYPE, or is not a
    urlset or an index.
    """
    options = _TREE_OPTIONS
    sniff = etree.XMLPullParser(events=("start",), **options)
    root: etree._Element | None = None
    try:
        for i in range(0, len(text), 1 << 16):
            sniff.feed(text[i : i + (1 << 16)])
            root = next((el for _, el in sniff.read_events()), None)
            if root is not None:
                break
    except etree.XMLSyntaxError:
        return None
    if root is None or root.getroottree().docinfo.doctype:
        return None
    kind = _kind(root)
    if kind not in ("urlset", "sitemapindex"):
        return None
    ns = str(root.tag)[: str(root.tag).index("}") + 1] if str(root.tag).startswith("{") else ""
    entry = ns + ("url" if kind == "urlset" else "sitemap")
    # only the entries' ends: other children of the root stay there for the last piece
    parser = etree.XMLPullParser(events=("end",), tag=entry, **options)
    root = None
    batch: list[etree._Element] = []
    findings: list[Finding] = []
    known: set[tuple[str, str, int | None, int | None, str | None]] = set()
    anchors: list[tuple[str, int]] = []
    memo: dict[str, bool] = {}
    seen_ns: set[str] = set()
    counts: dict[str, int] = {}
    unlisted: dict[str, int] = {}
    first = True

    def check(entries: list[etree._Element]) -> None:
        nonlocal first
        assert root is not None
        part = etree.Element(root.tag, attrib=dict(root.attrib), nsmap=root.nsmap)
        part.sourceline = root.sourceline  # type: ignore[misc]  # settable in lxml
        part.extend(entries)
        own = check_document(part, text, kind=kind, where=where, ctx=ctx, memo=memo, first=first)
        own += _dedupe(
            schema_findings(part.getroottree(), where=where, strict=ctx.strict, seen_ns=seen_ns),
            own,
        )
        first = False
        fresh = []
        for f in own:
            key = (f.rule, f.message, f.line, f.column, f.loc)
            if key not in known:
                if counts.get(f.rule, 0) < _KEEP_PER_RULE:
                    known.add(key)  # past the limit nothing is kept: no key either
                fresh.append(f)
        findings.extend(_keep_first(fresh, counts, unlisted))
        anchors.extend(entry_anchors(part, kind))

    try:
        for i in range(0, len(text), _CHUNK):
            parser.feed(text[i : i + _CHUNK])
            for _event, el in parser.read_events():
                parent = el.getparent()
                if root is None and parent is not None and parent.getparent() is None:
                    root = parent
                if parent is root and root is not None:
                    batch.append(el)
                    if len(batch) >= piece:
                        check(batch)
                        batch = []
        document = parser.close()
    except etree.XMLSyntaxError:
        return None
    if root is None:
        root = document
    rest = list(root)  # the entries not moved yet and any other children, in order
    if rest or first:
        check(rest)
    return _Scan(None, kind, findings, anchors, unlisted)


def _kind(root: etree._Element) -> str | None:
    tag = root.tag if isinstance(root.tag, str) else ""
    local = tag.rsplit("}", 1)[-1]
    return {"urlset": "urlset", "sitemapindex": "sitemapindex", "rss": "rss", "feed": "atom"}.get(
        local
    )


def _xml_text(plain: bytes) -> bytes | None:
    """The document as libxml2 should see it, or None when it is not XML.

    Whitespace before the XML declaration (SM003, reported by the reader) would stop
    libxml2, so the declaration is blanked out, keeping the lines where they are.
    """
    head = plain[:3]
    body = plain[3:] if head == _BOM else plain
    stripped = body.lstrip(_SPACE)
    if not stripped.startswith(b"<"):
        return None
    if len(stripped) < len(body) and stripped.startswith(b"<?xml"):
        end = stripped.find(b"?>")
        if end < 0:
            return None
        decl = stripped[: end + 2]
        if b"encoding" in decl and not _UTF8_DECL.search(decl):
            return None
        skipped = body[: len(body) - len(stripped)] + decl
        return b"\n" * skipped.count(b"\n") + stripped[end + 2 :]
    return plain


def _gunzip(data: bytes, limit: int) -> bytes:
    """The uncompressed document (up to ``limit`` + 1 bytes); corrupt gzip gives what it can."""
    if data[:2] != b"\x1f\x8b":
        return data[: limit + 1]
    out: list[bytes] = []
    size = 0
    rest = data
    while rest[:2] == b"\x1f\x8b" and size <= limit:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            piece = d.decompress(rest, limit + 1 - size)
        except zlib.error:
            break
        out.append(piece)
        size += len(piece)
        if not d.eof:
            break
        rest = d.unused_data.lstrip(b"\x00")
    return b"".join(out)


def _excerpts(report: ValidationReport, where: str, plain: bytes, findings: list[Finding]) -> None:
    wanted = sorted({f.line for f in findings if f.line})
    if not wanted:
        return
    lines = plain.split(b"\n", wanted[-1])
    for n in wanted:
        if n <= len(lines):
            raw = lines[n - 1]
            if len(raw) > 4096:
                raw = raw[:4096]
            report.excerpts[(where, n)] = raw.decode("utf-8", "replace").rstrip("\r")


def _label(path: Path) -> str:
    return str(path)


def _mirror(doc: _Doc, child: str) -> Path | str:
    """The local file of ``child`` beside a local index, or why there is none."""
    if doc.url is None or doc.path is None:
        return "the index's URL is unknown; give --published-at to find children locally"
    try:
        base = Origin.of(iri_to_uri(doc.url))
        target = Origin.of(iri_to_uri(child))
    except ValueError:
        return "not an absolute URL"
    directory = base.path[: base.path.rfind("/") + 1]
    if (target.scheme, target.host, target.port) != (base.scheme, base.host, base.port):
        return "outside the local build folder (another site)"
    if not target.path.startswith(directory):
        return "outside the local build folder (above the index's directory)"
    if "?" in child or child.endswith("/"):
        return "not a file URL"
    relative = unquote(target.path[len(directory) :])
    folder = doc.path.parent
    local = folder.joinpath(*relative.split("/"))
    try:
        local.resolve().relative_to(folder.resolve())
    except ValueError:
        return "outside the local build folder"
    if not local.is_file():
        return f"no local file {_label(local)}"
    return local


def _documents(
    targets: Sequence[str | Path], published_at: Sequence[str]
) -> tuple[list[_Doc], list[str]]:
    """The documents of the targets, with their URLs; and usage problems, if any."""
    problems: list[str] = []
    local = [t for t in targets if not _is_url(t)]
    if len(published_at) > 1 and len(published_at) != len(local):
        problems.append(
            f"{len(published_at)} --published-at URLs for {len(local)} local files; give one "
            "(for the first file, the others are placed relative to it) or one per file"
        )
        return [], problems
    docs: list[_Doc] = []
    anchor: tuple[Path, str] | None = None
    k = 0
    for target in targets:
        if _is_url(target):
            text = str(target)
            docs.append(_Doc(text, text))
            continue
        path = Path(target)
        url: str | None = None
        if len(published_at) > 1:
            url = published_at[k]
        elif published_at and k == 0:
            url = published_at[0]
            anchor = (path.parent, url)
        elif anchor is not None:
            url = _relative_url(anchor, path)
        k += 1
        docs.append(_Doc(str(target), url, path))
    return docs, problems


def _relative_url(anchor: tuple[Path, str], path: Path) -> str | None:
    folder, url = anchor
    try:
        relative = path.resolve().relative_to(folder.resolve())
    except ValueError:
        return None
    base = url[: url.rfind("/") + 1]
    return base + "/".join(relative.parts)


def _is_url(target: str | Path) -> bool:
    text = str(target)
    return "://" in text[:12] and not Path(text).exists()


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
    max_findings: int | None = 1_000,
) -> ValidationReport:
    """Validate sitemap files or URLs, and every child of the indexes among them.

    ``target`` is a path, a URL, or a list of them, validated as one set (set-level rules:
    nested indexes, cycles, duplicates across files, hreflang reciprocity). ``published_at``
    is the URL a local file is (or will be) published at: the location rules need it, and
    a local index finds its children beside it. ``allow_hosts`` waives the location rules
    for other hosts (cross-submission, SM214). ``select``/``ignore`` take rule ids or
    prefixes (``SM2``); SM404 runs only when selected. ``now`` (aware) is the time the date
    heuristics compare with (default: the current time, read once). URLs are fetched with
    ``fetcher`` (default: :class:`HttpFetcher`); ``follow=False`` validates the targets
    only. ``excerpts`` keeps each finding's source line for the text report.

    Offline (the default) nothing but URL targets is fetched. ``online=True`` checks the
    URL of every sitemap of the set as a crawler meets it (SM012): a local file's
    published copy must answer 200 within 5 redirects (status only: the local bytes are
    what is validated), no sitemap may be disallowed by robots.txt for ``robots_agent``
    or need a login. ``check_urls=True`` (implies ``online``) requests every ``<loc>``,
    hreflang alternate and video URL of the set too, HEAD first (SM217, HRE908, VID718,
    VID719): ``concurrency`` requests at once (4 per host), ``timeout`` seconds each,
    at most ``check_limit`` URLs (the rest is noted as not checked); ``progress(done,
    queued)`` is called after each check. See :mod:`sitemapkit.io.urlcheck` for the
    requests made and their bounds. Online findings are warnings.

    ``max_findings`` caps the findings listed per rule and document (the first ones, by
    line); the others are counted in ``report.omitted`` and noted (``None`` or 0: all that
    are kept; the reader and the tree pass each keep at most 10,000 of a rule per document
    and count the rest, so that a hostile document cannot fill the memory with findings).

    Memory: each document is read whole (at most ``max_bytes`` after decompression, the
    reader's budget), and the XSD and structural checks hold its parsed tree, about 6-10
    times its size; documents over ``tree_max_bytes`` skip those checks (noted in the
    report). Across a set, the duplicate and hreflang checks keep about 100 bytes per URL
    (up to 5,000,000 URLs).

    Never stops at the first problem and never raises for bad input: what is wrong is in
    the report (``findings``, ``unreadable``, ``not_checked``). Raises ``ValueError`` for
    bad arguments (an unknown rule id, mismatched ``published_at``).

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
    targets: list[str | Path] = [target] if isinstance(target, (str, Path)) else list(target)
    urls = [published_at] if isinstance(published_at, str) else list(published_at or ())
    selected = expand_ids(select) if select is not None else None
    ignored = expand_ids(ignore)
    docs, problems = _documents(targets, urls)
    if problems:
        raise ValueError(problems[0])
    if now is None:
        now = dt.datetime.now(dt.UTC)
    elif now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    hosts = tuple(h.strip() for h in allow_hosts if h.strip())
    ctx = Context(now=now, allow=hosts, strict=strict)
    options: CheckOptions | None = None
    if online or check_urls:
        from .io.urlcheck import CheckOptions

        options = CheckOptions(
            robots_agent=robots_agent,
            concurrency=concurrency,
            timeout=timeout,
            check_limit=check_limit,
        )
    if fetcher is None and any(d.path is None for d in docs):
        fetcher = HttpFetcher()
    active = {
        rid
        for rid, rule in RULES.items()
        if rid not in ignored and (rid in selected if selected is not None else rule.default)
    }
    checker = (
        _Online(options, check_urls=check_urls, active=active, progress=progress)
        if options is not None
        else None
    )
    validator = _Validator(
        ctx=ctx,
        follow=follow,
        fetcher=fetcher,
        max_sitemaps=max_sitemaps,
        excerpts=excerpts,
        max_bytes=max_bytes,
        tree_max_bytes=tree_max_bytes,
        online=checker,
        max_findings=max_findings or 0,
        active=active,
    )
    report = validator.run(docs)
    report.findings = [f for f in report.findings if f.rule in active]
    return report
