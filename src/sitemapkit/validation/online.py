"""validation: the online side of one validation — a URL checker shared by the whole set.

An edge (it sends requests, through :mod:`sitemapkit.io.urlcheck`): SM012 for every sitemap
with a URL, and with ``check_urls`` the entries' URLs (SM217, HRE908, VID718, VID719). The
records stream from the reader to a bounded window of checks; the findings wait for the
document's end to get their lines. What a problem means is decided by :mod:`sitemapkit.lint.online`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.finding import Finding
from ..core.model import Url
from ..core.parse import Record
from ..core.probe import Probe, Purpose, is_http
from ..core.rules import severity
from ..lint.checks import Context, FileChecks, Pending
from ..lint.online import Role, entry_problems, sitemap_problems

if TYPE_CHECKING:  # imported when used: httpx and the event loop cost startup time
    from ..io.urlcheck import BlockingUrlChecker, CheckOptions, UrlChecker

__all__ = ["Online"]


#: What an online check of an entry is about: its place in the document's jobs (to report
#: in document order whatever order the answers come in), the entry's loc, the role of
#: the URL checked, and the hreflang of an alternate.
Tag = tuple[int, str, Role, str | None]


class Bounded:
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


class Online:
    """The online side of one validation: a URL checker shared by the whole set.

    SM012 for every sitemap with a URL (when selected); with ``check_urls``, the entries'
    URLs of the roles whose rules are selected. An alternate or a video URL is checked
    and reported once, for the first entry (in document order) that lists it (the last
    50,000 such URLs are remembered, about 10 MB); every entry's own loc is checked for
    the entry. ``runner`` is the checker to use (default: one with its own client; the
    validator passes one on its fetcher's client, see
    :meth:`~sitemapkit.validation.fetcher.HttpFetcher.url_checker`).
    """

    def __init__(
        self,
        options: CheckOptions,
        *,
        check_urls: bool,
        active: set[str],
        progress: Callable[[int, int], None] | None,
        runner: BlockingUrlChecker | None = None,
    ) -> None:
        from ..io.urlcheck import BlockingUrlChecker

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
        self.listed = Bounded(50_000)
        self.runner: BlockingUrlChecker = runner or BlockingUrlChecker(options)

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
            Finding("SM012", severity("SM012", strict=ctx.strict), message, where)
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
    ) -> Iterator[tuple[Tag, str, Purpose]]:
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
        self, tag: Tag, probe: Probe | None, found: list[tuple[int, Pending]], ctx: Context
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
                found.append(
                    (seq, Pending(rule, severity(rule, strict=ctx.strict), message, loc, 0))
                )

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
