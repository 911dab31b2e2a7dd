"""validation: the driver — the set's documents one by one, each through its passes.

An edge: it reads files and fetches URLs (through a :class:`~.fetcher.Fetcher`). Per
document: **read** the bytes; run the **passes** side by side (the streaming reader with
the entry checks here, the tree pass in a worker thread or, for a large document, the tree
process); **merge** their findings (:mod:`.merge`); **locate** every finding on its
element's line and column; **cap** the findings per rule. An index's children join the
queue; the set-level checks finish the report.

The tree holds one document at a time, about six times its uncompressed size (≈ 300 MB for
a 50 MiB file); documents over ``tree_max_bytes`` skip it. Across a set, the duplicate and
hreflang checks keep a few dozen bytes per URL.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from ..core.compression import inflate_prefix
from ..core.finding import Finding
from ..core.parse import Record, SitemapParser
from ..core.probe import is_http
from ..core.rules import severity
from ..errors import FetchError, InputError, LimitError, SitemapError
from ..io.target import EMPTY_FOLDER, beside, folder_robots, folder_sitemaps, is_robots, join_url
from ..lint import tree
from ..lint.checks import (
    Context,
    DocumentNode,
    FileChecks,
    Locator,
    Pending,
    SetChecks,
    check_compression,
    check_document,
    entry_anchors,
    normalize,
    place_findings,
    resolve_places,
)
from ..lint.report import ValidationReport, sort_findings
from ..lint.tree import KEEP_PER_RULE, PIECE, PIECES_FROM, Scan, TreeLimits
from . import merge, site
from .document import Doc
from .fetcher import Fetcher
from .online import Online
from .process import FAILURES, TreeProcess, two_cores

__all__ = ["Budget", "Tuning", "Validator"]

_CHUNK: Final = 1 << 20
#: Documents from this size on have their tree pass in the tree process.
REMOTE_FROM: Final = 1 << 20
#: Documents from this size on that look plain wait for the reader (see tree.plain_pass).
DEFER_FROM: Final = 1 << 20
_LOGIN: Final = {
    401: " (login required: crawlers cannot log in; serve the sitemap without authentication)",
    403: " (forbidden: crawlers are refused or a login is required; serve it to everyone)",
}

Child = tuple[str, str | None, int | None]


@dataclass(frozen=True, slots=True)
class Tuning:
    """The validator's internal thresholds (``validate(tuning=...)``), for tests and
    benchmarks; the defaults are the product's. The findings, their lines and columns
    included, do not depend on them, but for the counts a pass keeps (``keep_per_rule``)."""

    #: Findings of a rule each pass keeps of a document; the others are only counted.
    keep_per_rule: int = KEEP_PER_RULE
    #: Documents from this size on (bytes) have their tree pass piece by piece.
    pieces_from: int = PIECES_FROM
    #: Entries per piece.
    piece: int = PIECE
    #: Documents from this size on have their tree pass in a child process.
    remote_from: int = REMOTE_FROM
    #: Documents from this size on that look plain have the tree pass after the reader.
    defer_from: int = DEFER_FROM

    @property
    def tree(self) -> TreeLimits:
        return TreeLimits(self.keep_per_rule, self.pieces_from, self.piece)


@dataclass(frozen=True, slots=True)
class Budget:
    """How far the validator goes: whether it follows indexes, sitemaps of a set, bytes of
    a document and of its tree, findings listed per rule and document (0: all), and
    whether it keeps the findings' source lines."""

    follow: bool
    max_sitemaps: int
    max_bytes: int
    tree_max_bytes: int
    max_findings: int
    excerpts: bool


@dataclass(slots=True)
class _Outcome:
    kind: str | None = None
    children: list[Child] = field(default_factory=list)


@dataclass(slots=True)
class _Passes:
    """What the passes over one document found."""

    plain: bytes
    parser: SitemapParser
    fc: FileChecks
    checked: list[Pending]
    scan: Scan

    @property
    def kind(self) -> str | None:
        return self.parser.kind or self.scan.kind


class Validator:
    """One validation of a set of documents (see the module's docstring)."""

    def __init__(
        self,
        ctx: Context,
        budget: Budget,
        *,
        fetcher: Fetcher | None,
        online: Online | None = None,
        active: set[str] | None = None,
        tuning: Tuning | None = None,
    ) -> None:
        self.ctx, self.budget, self.fetcher, self.online = ctx, budget, fetcher, online
        self.active = active
        #: The crawler a robots.txt's rules are read for (RB011).
        self.agent = "Googlebot"
        #: Local indexes validated without their URL (the rules that need it: one note).
        self.unplaced: list[str] = []
        self.tuning = tuning = tuning or Tuning()
        self.limits = tuning.tree
        self.report = ValidationReport()
        self.shared = SetChecks()
        self.visited: set[str] = set()
        #: (file, line) → column of the <loc> of the alternates and index children there,
        #: for the set's findings, which come after the documents' bytes are gone.
        self.columns: dict[tuple[str, int], int] = {}
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sitemapkit-tree")
        self.tree_process: TreeProcess | None = None
        self.tree_process_failed = not two_cores()
        #: Called as each document starts: (its name, documents done, entries read so far).
        self.on_document: Callable[[str, int, int], None] | None = None

    # -- the set ------------------------------------------------------------------------

    def run(self, docs: list[Doc]) -> ValidationReport:
        """Validate the set of ``docs`` (and the children of its indexes) into a report."""
        try:
            self._walk(list(docs))
        finally:
            self.pool.shutdown()
            if self.tree_process is not None:
                self.tree_process.close()
            if self.online is not None:
                self.online.close()
        report = self.report
        if self.online is not None:
            report.notes.extend(self.online.notes())
        columns = self.columns
        report.findings.extend(
            f
            if f.column is not None or f.line is None or (f.where, f.line) not in columns
            else replace(f, column=columns[f.where or "", f.line])
            for f in self.shared.finish()
        )
        report.notes.extend(self.shared.notes)
        if self.unplaced:
            report.notes.append(_unplaced_note(self.unplaced, self.active))
        report.findings = sort_findings(report.findings, report.files)
        return report

    def _walk(self, queue: list[Doc]) -> None:
        limit = self.budget.max_sitemaps
        while queue:
            doc = queue.pop(0)
            if doc.role != "document":
                # a folder or a URL target: what it holds or leads to comes next
                queue[0:0] = self._folder(doc) if doc.role == "folder" else self._target(doc)
                continue
            key = self._key(doc)
            if key in self.visited:
                continue
            if len(self.visited) >= limit:
                why = f"the set has more than {limit:,} sitemaps (max_sitemaps)"
                self.report.not_checked.append((doc.url or doc.where, why))
                continue
            self.visited.add(key)
            if self.on_document is not None:
                self.on_document(doc.where, len(self.report.files), self.report.entries)
            outcome = self._one(doc)
            if outcome is None or not self.budget.follow:
                continue
            if outcome.kind in ("sitemapindex", "robots"):
                queue[0:0] = self._children(doc, outcome)

    def _key(self, doc: Doc) -> str:
        if doc.path is not None:
            return "file:" + str(doc.path.resolve())
        return "url:" + normalize(doc.url or doc.where)

    def _folder(self, doc: Doc) -> list[Doc]:
        """A folder's documents: its robots.txt, else its sitemap files, indexes first
        (what ``read`` reads of it); a folder with neither is reported."""
        assert doc.path is not None
        robots = folder_robots(doc.path)
        files = [robots] if robots is not None else folder_sitemaps(doc.path)
        if not files:
            self._nothing(doc.where, f"No sitemap found: {EMPTY_FOLDER}; nothing was validated")
        return [Doc(str(p), join_url(doc.url, p.name), p) for p in files]

    def _target(self, doc: Doc) -> list[Doc]:
        """The documents a URL target leads to, by the discovery flow: the robots.txt of a
        site (validated here) and the sitemaps it lists or the known paths hold."""
        if self.fetcher is None:
            self.report.unreadable.append((doc.where, "validating a URL needs a fetcher"))
            return []
        try:
            found = site.discover(
                doc.where,
                self.fetcher,
                follow=self.budget.follow,
                max_bytes=self.budget.max_bytes,
                agent=self.agent,
            )
        except InputError as exc:
            self.report.unreadable.append((doc.where, exc.message))
            return []
        if found.robots is not None:
            where, got = found.robots
            self._robots_report(where, got.body, list(found.robots_findings))
            probed = [url for url, got in found.sitemaps if got is not None]
            if probed:
                self.report.notes.append(
                    f"{where} lists no sitemap; {probed[0]} was found at a known path: add "
                    f"'Sitemap: {probed[0]}' to robots.txt, so that every crawler finds it"
                )
        if found.nothing is not None:
            self._nothing(doc.where, found.nothing.message, found.nothing)
        return [Doc(url, url, fetched=got) for url, got in found.sitemaps]

    def _nothing(self, where: str, message: str, finding: Finding | None = None) -> None:
        """A target that leads to no sitemap: the finding says what was tried."""
        sev = severity("SM012", strict=self.ctx.strict)
        self.report.findings.append(finding or Finding("SM012", sev, message, where))
        self.report.unreadable.append((where, "no sitemap found to validate (SM012)"))

    def _robots_report(self, where: str, data: bytes, findings: list[Finding]) -> None:
        """A robots.txt validated: a file of the report, with its findings and excerpts."""
        self.report.files.append(where)
        active = self.active
        own = [f for f in findings if active is None or f.rule in active]
        self.report.findings.extend(own)
        if self.budget.excerpts:
            _excerpts(self.report, where, data, own)

    def _children(self, doc: Doc, outcome: _Outcome) -> list[Doc]:
        """The children of an index or robots.txt: a URL's fetched, a local one's from
        the file beside it, else fetched when a fetcher is at hand, else noted."""
        out: list[Doc] = []
        for child, _lastmod, _line in outcome.children:
            if doc.path is None:
                out.append(Doc(child, child))
                continue
            local = beside(doc.path, doc.url, child)
            if doc.url is None and isinstance(local, Path) and local.samefile(doc.path):
                # by name, a child in a subfolder (news/sitemap.xml) finds the index itself
                local = "the file of its name beside the index is the index itself"
            if isinstance(local, Path):
                out.append(Doc(str(local), child, local))
            elif self.fetcher is not None:
                out.append(Doc(child, child))
            elif "url:" + normalize(child) not in self.visited:
                self.report.not_checked.append((child, local))
        return out

    # -- one document: read → passes → merge → locate → cap ------------------------------

    def _one(self, doc: Doc) -> _Outcome | None:
        if doc.path is None:
            self._online_sitemap(doc)  # a URL: checked even when it cannot be fetched
        read = self._read(doc)
        if read is None:
            return None
        data, modified, url = read
        if url is not None:
            doc.url = url
        where = doc.where
        if doc.path is not None:
            if is_robots(where, doc.url, data[:8192]):
                listed, findings = site.check_robots(data, where, doc.url, agent=self.agent)
                self._robots_report(where, data, findings)
                return _Outcome("robots", [(u, None, None) for u in listed])
            self._online_sitemap(doc)  # a local sitemap's published copy
        self.report.files.append(where)
        ctx = replace(self.ctx, url=doc.url, modified=modified)
        passes = self._passes(doc, ctx, data)
        kind = passes.kind
        extra = []
        if kind == "text":
            extra = check_document(None, passes.plain, kind=kind, where=where, ctx=ctx)
        extra += check_compression(data[:2], doc.url or where, where=where)
        own = merge.merge_passes(
            passes.parser.findings, passes.scan, extra=extra, strict=ctx.strict
        )
        children = self._locate(doc, passes, own)
        url_key = normalize(doc.url) if doc.url else None
        self.shared.add_document(DocumentNode(where, url_key, kind, children, passes.fc.max_day))
        own = self._cap(own, where, passes)
        if kind == "sitemapindex" and doc.path is not None and doc.url is None:
            self.unplaced.append(where)
        self.report.findings.extend(own)
        self.report.entries += passes.parser.entries
        if self.budget.excerpts:
            _excerpts(self.report, where, passes.plain, own)
        return _Outcome(kind, children)

    def _online_sitemap(self, doc: Doc) -> None:
        """SM012 for a sitemap's URL, with ``--online``."""
        online = self.online
        if online is not None and online.sitemaps and doc.url is not None and is_http(doc.url):
            self.report.findings.extend(online.sitemap(doc.url, doc.where, doc.path, self.ctx))

    def _read(self, doc: Doc) -> tuple[bytes, dt.datetime | None, str | None] | None:
        """(bytes, modified, URL) of a document, or None (reported) when it cannot be read."""
        max_bytes = self.budget.max_bytes
        if doc.path is not None:
            try:
                with doc.path.open("rb") as fh:
                    data = fh.read(max_bytes + 1)
                    modified = dt.datetime.fromtimestamp(doc.path.stat().st_mtime, dt.UTC)
            except OSError as exc:
                self.report.unreadable.append((doc.where, exc.strerror or str(exc)))
                return None
            return data, modified, doc.url
        got = doc.fetched
        doc.fetched = None  # the bytes live on in the passes, not in the queue
        if got is None and self.fetcher is None:
            why = "validating a URL needs a fetcher; none was given"
            self.report.unreadable.append((doc.where, why))
            return None
        assert doc.url is not None
        try:
            if got is None:
                assert self.fetcher is not None
                got = self.fetcher.fetch(doc.url, max_bytes=max_bytes)
        except FetchError as exc:
            self.report.unreadable.append((doc.where, exc.message))
            return None
        if got.status != 200:
            message = (
                f"Fetching the sitemap answered HTTP {got.status}, not 200; it cannot be read"
                + _LOGIN.get(got.status, "")
            )
            sev = severity("SM012", strict=self.ctx.strict)
            self.report.files.append(doc.where)
            self.report.findings.append(Finding("SM012", sev, message, doc.where))
            return None
        return got.body, got.modified, got.url

    def _passes(self, doc: Doc, ctx: Context, data: bytes) -> _Passes:
        """The reader with the entry checks (and the online checks of the entries) here,
        the tree pass beside it."""
        where = doc.where
        plain = inflate_prefix(data, self.budget.max_bytes)
        scan, deferred = self._start_tree(plain, where, ctx)
        # the reader's findings are deduped against the tree pass's, then capped (_cap)
        parser = SitemapParser(
            source=where,
            base_url=doc.url,
            max_bytes=self.budget.max_bytes,
            max_findings=self.tuning.keep_per_rule,
            summarize=False,
            purpose="validate",
        )
        fc = FileChecks(where, ctx, self.shared)
        batches = self._feed(parser, fc, data, where)
        checked: list[Pending] = []
        if self.online is not None and self.online.roles:
            checked = self.online.entries(batches, fc, ctx)
        else:
            for _ in batches:
                pass
        fc.finish()
        if deferred:
            plain_read = parser.scanned_all and not parser.scanned_padded
            if plain_read and not parser.scanned_extensions:
                scan.set_result(tree.plain_pass(plain, where, ctx))
            else:
                scan.set_result(self._tree(plain, where, ctx))
        return _Passes(plain, parser, fc, checked, scan.result())

    def _start_tree(self, plain: bytes, where: str, ctx: Context) -> tuple[Future[Scan], bool]:
        """The tree pass, started beside the reader; or deferred (True: a document that
        looks plain waits for the reader to say whether it is); or skipped, noted."""
        size, most = len(plain), self.budget.tree_max_bytes
        scan: Future[Scan] = Future()
        if size > most:
            scan.set_result(Scan(None, None, []))
            self.report.notes.append(
                f"{where}: the XSD and structural checks were skipped: the document is larger "
                f"than {most:,} bytes (tree_max_bytes)"
            )
            return scan, False
        if size >= self.tuning.defer_from and tree.looks_plain(plain):
            return scan, True  # decided once the reader has seen the entries
        return self.pool.submit(self._tree, plain, where, ctx), False

    def _tree(self, plain: bytes, where: str, ctx: Context) -> Scan:
        """The tree pass of a document: in the tree process when the document is large
        enough to be worth sending there (and one could be started), else here."""
        if len(plain) >= self.tuning.remote_from and not self.tree_process_failed:
            try:
                if self.tree_process is None:
                    self.tree_process = TreeProcess(self.limits)
                return self.tree_process.run(plain, where, ctx)
            except FAILURES:
                self.tree_process_failed = True  # it could not start or it died: go on here
        return tree.tree_pass(plain, where, ctx, self.limits)

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

    def _locate(self, doc: Doc, p: _Passes, own: list[Finding]) -> list[Child]:
        """Place the entry checks' findings on their lines (into ``own``); the lines of the
        alternates and the index's children (returned) too."""
        fc, scan, kind = p.fc, p.scan, p.kind
        wanted = [(q.loc, q.occurrence) for q in fc.pending]
        wanted += [(q.see[0], q.see[1]) for q in fc.pending if q.see is not None]
        wanted += [(a.loc, a.occurrence) for a in fc.alternates]
        wanted += [(c, occ) for c, _, occ in fc.children]
        wanted += [(q.loc, q.occurrence) for q in p.checked]
        anchors: list[tuple[str, int]] = []
        xml = kind in ("urlset", "sitemapindex")
        if xml and (wanted or any(f.loc is not None for f in own)):
            # computed once, and only when a finding names an entry
            found = scan.anchors
            if found is None and scan.root is not None:
                found = entry_anchors(scan.root, kind)
            anchors = list(found or ())
        places = resolve_places(
            wanted,
            root=scan.root,
            data=p.plain,
            kind=kind,
            base_url=doc.url,
            anchors=anchors if xml else scan.anchors,
        )
        lines = {key: line for key, (line, _) in places.items()}
        queries = [*fc.pending, *p.checked]
        ordinals = [places.get((q.loc, q.occurrence), (0, -1))[1] for q in queries]
        locator = Locator(p.plain, kind, plain=scan.plain, spans=scan.spans, locs=scan.locs)
        linked = [
            places[a.loc, a.occurrence][1] for a in fc.alternates if (a.loc, a.occurrence) in places
        ]
        linked += [places[c, occ][1] for c, _, occ in fc.children if (c, occ) in places]
        spots = locator.positions(
            [
                *((n, q.element) for n, q in zip(ordinals, queries, strict=True) if n >= 0),
                *((n, None) for n in linked),
            ]
        )
        for (_, element), (line, column) in spots.items():
            if element is None:
                self.columns[doc.where, line] = column
        own += [
            q.finding(doc.where, lines, spots.get((n, q.element)))
            for n, q in zip(ordinals, queries, strict=True)
        ]
        own += fc.findings
        own[:] = place_findings(own, anchors, locator)
        for a in fc.alternates:
            a.line = lines.get((a.loc, a.occurrence))
        return [(c, lm, lines.get((c, occ))) for c, lm, occ in fc.children]

    def _cap(self, own: list[Finding], where: str, p: _Passes) -> list[Finding]:
        """The selected findings, at most ``max_findings`` of a rule; the others noted."""
        if self.active is not None:
            own = [f for f in own if f.rule in self.active]
        unlisted = merge.unlisted(p.scan.unlisted, p.parser.unlisted, self.active)
        most = self.budget.max_findings
        if not most and not unlisted:
            return own
        capped = merge.cap(
            own, where=where, unlisted=unlisted, max_findings=most, keep=self.limits.keep_per_rule
        )
        omitted = self.report.omitted
        for rule, n in capped.omitted.items():
            omitted[rule] = omitted.get(rule, 0) + n
        self.report.notes.extend(capped.notes)
        return capped.kept


def _excerpts(report: ValidationReport, where: str, plain: bytes, findings: list[Finding]) -> None:
    wanted = sorted({f.line for f in findings if f.line})
    if not wanted:
        return
    lines = plain.split(b"\n", wanted[-1])
    for n in wanted:
        if n <= len(lines):
            raw = lines[n - 1][:4096]
            report.excerpts[(where, n)] = raw.decode("utf-8", "replace").rstrip("\r")


#: The rules that compare an index's locs with its own URL (lint/checks/loc.py).
_PLACE_RULES: Final = ("SM504", "SM505")


def _unplaced_note(indexes: list[str], active: set[str] | None) -> str:
    """One note for the local indexes validated without their URL: what was not checked."""
    rules = [r for r in _PLACE_RULES if active is None or r in active]
    names = ", ".join(indexes[:3]) + (f" and {len(indexes) - 3:,} more" if len(indexes) > 3 else "")
    what = (
        f"{' and '.join(rules)} (its children on its own site and under its folder) were not "
        "checked"
        if rules
        else "the location rules were not checked"
    )
    return (
        f"{names}: the URL of the index is unknown, so {what}; its children beside it were "
        "found by file name and checked as published at the URLs it lists. Give "
        "--published-at URL (the index's URL) to check everything"
    )
