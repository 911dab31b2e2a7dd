"""lint.checks: the checks across every document validated together (:class:`SetChecks`). Pure.

Decides SM502 (nested indexes), SM506 (an index listing itself, cycles of indexes), SM508's
set half (an index lastmod older than its child's pages), SM509 (a child in several
indexes), HRE905 (return links across the set) and HRE907's set half (a cluster's members
listing different alternates). The duplicates across files (SM215, SM216) are decided in
:mod:`.duplicate`, against the tables kept here. These rules are not strict, so their
severities are the catalogue's with or without ``--strict``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from ...core.finding import Finding, clip
from ...core.rules import severity
from ...core.urls import normalize
from .context import CHECKED
from .date import instant_bounds
from .hashindex import HashIndex
from .state import AlternateEntry, EntryState

__all__ = ["DocumentNode", "SetChecks"]


@dataclass(slots=True)
class DocumentNode:
    """A validated document, as the set checks see it."""

    where: str
    url: str | None  # normalised; None when the document's URL is unknown
    kind: str | None
    children: list[tuple[str, str | None, int | None]] = field(default_factory=list)
    max_day: str = ""


class SetChecks:
    """Everything validated together: duplicates across files, the index graph, hreflang.

    Memory: the duplicate checks keep about 16 bytes a URL (:class:`HashIndex`, two or
    three of them) and the hreflang checks the annotations; beyond ``max_urls`` URLs the
    cross-file checks stop, with a note.
    """

    def __init__(self, *, max_urls: int = 5_000_000) -> None:
        self.files: list[str] = []
        self.exact = HashIndex()
        self.norm = HashIndex()
        self.variant = HashIndex()
        self.alternates: dict[str, tuple[int, AlternateEntry]] = {}
        self.nodes: list[DocumentNode] = []
        self.max_urls = max_urls
        self.tracking = True
        self.notes: list[str] = []

    def add_file(self, where: str | None) -> int:
        self.files.append(where or "<input>")
        return len(self.files) - 1

    def merge(self, k: int, state: EntryState) -> None:
        """Take the URLs of finished document ``k`` (:meth:`add_file`) into the set."""
        if state.tally.index or not self.tracking:
            return
        listed = state.listed
        for target, values in (
            (self.exact, listed.seen),
            (self.norm, listed.norms),
            (self.variant, listed.variants),
        ):
            target.add(k, map(hash, values))
        for entry in state.alternates:
            self.alternates.setdefault(entry.norm, (k, entry))
        if len(self.exact) > self.max_urls:
            self.tracking = False
            self.notes.append(
                f"duplicate and hreflang checks across files stopped after {len(self.exact):,} "
                "URLs, to bound memory"
            )

    def add_document(self, node: DocumentNode) -> None:
        self.nodes.append(node)

    def finish(self) -> list[Finding]:
        """The set-level findings (call once every document was added)."""
        out: list[Finding] = []
        _index_graph(self, out)
        _reciprocity(self, out)
        return out


@CHECKED.decides("SM502", "SM506", "SM508", "SM509")
def _index_graph(s: SetChecks, out: list[Finding]) -> None:
    """SM502 nested indexes, SM506 cycles, SM509 children of several indexes, SM508 stale."""
    by_url = {n.url: n for n in s.nodes if n.url is not None}
    listed: dict[str, str] = {}
    for node in s.nodes:
        if node.kind != "sitemapindex":
            continue
        for child, lastmod, line in node.children:
            key = normalize(child)
            if key == node.url:
                out.append(
                    Finding(
                        "SM506",
                        severity("SM506"),
                        f"The index lists itself ({child!r})",
                        node.where,
                        line,
                        None,
                        child,
                    )
                )
                continue
            target = by_url.get(key)
            if target is not None and target.kind == "sitemapindex":
                out.append(
                    Finding(
                        "SM502",
                        severity("SM502"),
                        f"{child!r} is itself a sitemap index; an index may list only "
                        "sitemaps (Google ignores nested indexes). List its children here",
                        node.where,
                        line,
                        None,
                        child,
                    )
                )
            first = listed.setdefault(key, node.where)
            if first != node.where:
                out.append(
                    Finding(
                        "SM509",
                        severity("SM509"),
                        f"{child!r} is also listed by {first}; list each sitemap in one index",
                        node.where,
                        line,
                        None,
                        child,
                    )
                )
            if target is not None and lastmod and _older(lastmod, target.max_day):
                out.append(
                    Finding(
                        "SM508",
                        severity("SM508"),
                        f"The index gives lastmod {lastmod!r} for {child!r}, but that sitemap "
                        f"lists pages changed on {target.max_day}; the index lastmod should be "
                        "the child file's modification time",
                        node.where,
                        line,
                        None,
                        child,
                    )
                )
    _cycles(s, by_url, out)


def _older(lastmod: str, day: str) -> bool:
    """An index lastmod before the latest local ``day`` its child's pages name.

    A bare date is compared as a day. A time with an offset is compared as an instant:
    ``day`` (``YYYY-MM-DD`` of a page's lastmod, in its own offset) begins at the earliest
    at ``T00:00+14:00``, and a lastmod in another offset may show an earlier date and
    still be later (``2024-05-02T11:00:00-05:00`` is after ``2024-05-03T00:30:00+14:00``).
    """
    if not day:
        return False
    if len(lastmod) <= 10:
        return lastmod < day
    bounds = instant_bounds(lastmod)
    if bounds is None:
        return lastmod[:10] < day
    start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone(dt.timedelta(hours=14)))
    return bounds[1] < start


def _cycles(s: SetChecks, by_url: dict[str, DocumentNode], out: list[Finding]) -> None:
    edges: dict[str, list[tuple[str, str, int | None]]] = {}
    for node in s.nodes:
        if node.kind == "sitemapindex" and node.url is not None:
            edges[node.url] = [
                (normalize(c), c, line)
                for c, _, line in node.children
                if normalize(c) in by_url
                and by_url[normalize(c)].kind == "sitemapindex"
                and normalize(c) != node.url
            ]
    state: dict[str, int] = {}  # 1 on the path, 2 done
    reported: set[tuple[str, str]] = set()

    def visit(url: str) -> None:
        state[url] = 1
        for key, raw, line in edges.get(url, ()):
            if state.get(key) == 1 and (url, key) not in reported:
                reported.add((url, key))
                out.append(
                    Finding(
                        "SM506",
                        severity("SM506"),
                        f"Listing {raw!r} closes a cycle of sitemap indexes; an index must "
                        "not (even indirectly) list itself",
                        by_url[url].where,
                        line,
                        None,
                        raw,
                    )
                )
            elif key not in state:
                visit(key)
        state[url] = 2

    for url in edges:
        if url not in state:
            visit(url)


def _same_cluster(a: AlternateEntry, b: AlternateEntry) -> bool:
    """Whether two members agree on their cluster: the same pages (each counting itself,
    so a missing self-reference is HRE904's business) and no hreflang on different pages."""
    if a.pairs == b.pairs:
        return True
    pages_a = {h for _, h in a.pairs} | {a.norm}
    pages_b = {h for _, h in b.pairs} | {b.norm}
    if pages_a != pages_b:
        return False
    langs_a: dict[str, set[str]] = {}
    langs_b: dict[str, set[str]] = {}
    for pairs, langs in ((a.pairs, langs_a), (b.pairs, langs_b)):
        for lang, href in pairs:
            langs.setdefault(lang, set()).add(href)
    return all(langs_b[lang] == hrefs for lang, hrefs in langs_a.items() if lang in langs_b)


@CHECKED.decides("HRE905", "HRE907")
def _reciprocity(s: SetChecks, out: list[Finding]) -> None:
    """HRE905 return links across the set, HRE907 clusters listing different alternates."""
    alts = s.alternates
    if not alts or not s.tracking:
        return
    exact, norm = s.exact, s.norm
    for key, (k, entry) in alts.items():
        where = s.files[k]
        inconsistent: list[str] = []
        for lang, href in sorted(entry.pairs):
            if href == key:
                continue
            target = alts.get(href)
            if target is None:
                listed = hash(href) in exact or hash(href) in norm
                out.append(
                    Finding(
                        "HRE905",
                        # RULES.md HRE905: "a target outside the set is a warning" (it cannot
                        # be checked); a listed target without the return link is the error
                        severity("HRE905") if listed else "warning",
                        f"The {lang} alternate {clip(href)!r} "
                        + (
                            "has no hreflang annotations pointing back to this URL"
                            if listed
                            else "is not in the validated sitemaps, so its return link cannot be "
                            "checked"
                        )
                        + "; Google ignores annotations that are not reciprocal",
                        where,
                        entry.line,
                        None,
                        entry.loc,
                    )
                )
                continue
            back = {h for _, h in target[1].pairs}
            if key not in back:
                out.append(
                    Finding(
                        "HRE905",
                        severity("HRE905"),
                        f"The {lang} alternate {clip(href)!r} does not link back to this URL; "
                        "every member of a cluster must list every other",
                        where,
                        entry.line,
                        None,
                        entry.loc,
                    )
                )
            elif not _same_cluster(entry, target[1]):
                inconsistent.append(href)
        if inconsistent:
            out.append(
                Finding(
                    "HRE907",
                    severity("HRE907"),
                    f"This URL's alternates differ from those of {clip(inconsistent[0])!r}; "
                    "every member of a cluster should list the same (hreflang, href) set",
                    where,
                    entry.line,
                    None,
                    entry.loc,
                )
            )
