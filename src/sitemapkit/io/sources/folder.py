"""io: a built site folder as input: its pages become URLs, each judged as a crawler would.

Every ``*.html`` and ``*.htm`` file is a page (``--include`` adds other documents, such as
PDFs), at the URL the folder's server gives it: ``blog/index.html`` at ``BASE/blog/``,
``about.html`` at ``BASE/about.html`` (``BASE/about`` with ``clean_urls``), the path
percent-encoded as UTF-8. A page is left out, and counted by reason, when it says
``noindex`` (``<meta name="robots">`` or ``"googlebot"``), when its canonical URL is
another page (that page is listed on its own if it is an indexable page of the folder),
when it is an error page (``404.html``), when the folder's ``robots.txt`` disallows it
for every agent, when it lies in a hidden folder, when ``--exclude`` names it, and when
it is this run's own output. The page facts come from :func:`sitemapkit.core.page.read_page`.

lastmod is never the time of the build: the page's own date first, else the date of the
last commit that touched the file (one ``git log`` for the whole tree), else the file's
modification time; :attr:`FolderOptions.lastmod_from` chooses and orders the sources.

Pages are read and parsed in worker processes (``io/child.py``) when there are many and
more than one core: the walk, the judging order and the output stay in this process, so
the output is the same whichever way the pages were parsed.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import itertools
import os
import re
import subprocess
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, NamedTuple
from urllib.parse import quote, unquote

from protego import Protego

from ...core.model import Url
from ...core.outcome import Conversion, PageOutcome, left_out_text, listed_url
from ...core.page import MAX_PAGE_BYTES, read_page
from ...core.urls import normalize as _normalize
from ...core.w3cdate import format_lastmod
from ...errors import InputError, SitemapError
from ..child import Child, ForkUnsafe, close_all, serve
from .record import error_at
from .sink import Sink

__all__ = ["LASTMOD_SOURCES", "FolderOptions", "FolderPages", "FolderSummary", "write_folder"]

#: Where a page's lastmod may come from, in the default order.
LASTMOD_SOURCES: Final = ("page", "git", "mtime")
_PAGE_EXT: Final = (".html", ".htm")
_INDEX: Final = ("index.html", "index.htm")
# 4xx and 5xx pages as generators write them: 404.html, 500.htm, 404/index.html
_ERROR_PAGE: Final = re.compile(r"[45][0-9]{2}(?:\.html?)?")
# characters a URL path keeps as they are (RFC 3986 pchar and "/"); "%" is encoded, so a
# file named "100%.html" is /100%25.html
_PATH_SAFE: Final = "/!$&'()*+,;=:@~-._"
#: Pages read in this process before worker processes are worth starting.
PARALLEL_PAGES: Final = 2_000
_BATCH: Final = 64


@dataclass(frozen=True, slots=True)
class FolderOptions:
    """How a built site folder is read (see the module's docstring).

    ``include`` and ``exclude`` are globs on the path inside the folder (``*`` crosses
    ``/``); ``output`` and ``name`` say where this run writes, so its files are never
    taken as pages; ``workers`` caps the parsing processes (``1``: none).

    >>> FolderOptions(clean_urls=True, lastmod_from=("git",)).lastmod_from
    ('git',)
    """

    clean_urls: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    lastmod_from: tuple[str, ...] = LASTMOD_SOURCES
    output: str | Path | None = None
    name: str = "sitemap"
    workers: int | None = None

    def __post_init__(self) -> None:
        for source in self.lastmod_from:
            if source not in LASTMOD_SOURCES:
                raise ValueError(f"unknown lastmod source {source!r}; use page, git, mtime or none")


@dataclass(slots=True)
class FolderSummary:
    """What a folder gave: URLs listed, files left out by reason, with an example each."""

    listed: int = 0
    left_out: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    bad_hreflang: int = 0
    bad_images: int = 0

    def leave_out(self, reason: str, example: str) -> None:
        self.left_out[reason] += 1
        self.examples.setdefault(reason, example)

    def note(self, where: str) -> str:
        """One line for the run's summary."""
        text = f"{where}: {self.listed:,} pages listed"
        left = left_out_text(self.left_out, self.examples)
        if left:
            text += "; left out: " + left
        for skipped in Conversion(self.bad_images, self.bad_hreflang).texts():
            text += f"; {skipped}"
        return text


class _Job(NamedTuple):
    """One file to read: its path, its URL, other URLs the same file answers at, and
    whether it is an HTML page (else a document listed as it is)."""

    path: str
    url: str
    aliases: tuple[str, ...]
    html: bool
    links: bool = False  # read the page's links too (an audit), not only its facts


class _Facts(NamedTuple):
    """What a worker learnt of one file (plain values: they cross a pipe)."""

    loc: str
    reason: str | None
    detail: str | None
    images: tuple[str, ...]
    alternates: tuple[tuple[str, str], ...]
    modified: str | None
    mtime: str
    links: tuple[str, ...] = ()


def _analyse(job: _Job) -> _Facts:
    """Read one file and judge it (in a worker process or here)."""
    try:
        with open(job.path, "rb") as fh:
            mtime = os.fstat(fh.fileno()).st_mtime
            data = fh.read(MAX_PAGE_BYTES) if job.html else b""
    except OSError as exc:
        raise InputError(f"cannot read the page: {exc.strerror}", where=job.path) from None
    stamp = format_lastmod(dt.datetime.fromtimestamp(mtime, dt.UTC).replace(microsecond=0))
    if not job.html:
        return _Facts(job.url, None, None, (), (), None, stamp)
    page = read_page(data, job.url, links=job.links)
    loc, links = job.url, page.links
    if page.noindex is not None:
        return _Facts(loc, "noindex", page.noindex, (), (), None, stamp, links)
    if page.canonical_elsewhere(*job.aliases):
        return _Facts(loc, "canonical elsewhere", page.canonical, (), (), None, stamp, links)
    if page.canonical is not None and page.canonical_elsewhere():
        loc = page.canonical  # one of the file's own other URLs: the page names its own
    return _Facts(loc, None, None, page.images, page.alternates, page.modified, stamp, links)


def _analyse_batch(batch: list[_Job]) -> list[_Facts]:
    return [_analyse(job) for job in batch]


def serve_pages() -> None:  # pragma: no cover - runs in a fresh child process
    """A fresh worker process's loop (when forking is not safe)."""
    serve(_analyse_batch)


def _encode(path: str) -> str:
    return quote(os.fsencode(path), safe=_PATH_SAFE)


def _matches(rel: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(rel, g) for g in globs)


def _robots(root: Path) -> Protego | None:
    """The rules of the folder's ``robots.txt``, or ``None`` without one."""
    try:
        data = (root / "robots.txt").read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(
            f"cannot read robots.txt: {exc.strerror}", where=str(root / "robots.txt")
        ) from None
    return Protego.parse(data.decode("utf-8-sig", "replace"))


class _Walk:
    """The files of a folder in a stable order (by name, depth first), judged by path."""

    def __init__(
        self,
        root: Path,
        base: str,
        options: FolderOptions,
        summary: FolderSummary,
        *,
        on_left: Callable[[str, str, str], None] | None = None,
        links: bool = False,
    ):
        self.root = root
        self.on_left = on_left  # (path, reason, URL) of a file left out by its path
        self.links = links
        self.base = base
        self.options = options
        self.summary = summary
        self.robots = _robots(root)
        self.output: str | None = None  # the output folder's path inside root, "" for root
        self.staging = ""
        if options.output is not None:
            out = Path(options.output).resolve()
            # the writer stages beside its folder, in ".NAME.sitemapkit-*"
            self.staging = f".{out.name}.sitemapkit-"
            rel = os.path.relpath(out, root.resolve())
            if rel == ".":
                self.output = ""
            elif not rel.startswith(".."):
                self.output = rel.replace(os.sep, "/") + "/"
        esc = re.escape(options.name)
        self.owned = re.compile(rf"{esc}(?:-[0-9]+)?\.(?:xml|txt)(?:\.gz)?|{esc}-index-[0-9]+\.xml")

    def jobs(self) -> Iterator[tuple[str, _Job]]:
        """``(path inside the folder, job)`` of every file that may be listed."""
        stack: list[tuple[str, str]] = [(str(self.root), "")]
        while stack:
            path, prefix = stack.pop()
            try:
                entries = sorted(os.scandir(path), key=lambda e: e.name)
            except OSError as exc:
                raise InputError(f"cannot read the folder: {exc.strerror}", where=path) from None
            subdirs: list[tuple[str, str]] = []
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    if self._enter(entry.name, rel + "/"):
                        subdirs.append((entry.path, rel + "/"))
                    continue
                job = self._job(entry, rel)
                if job is not None:
                    yield rel, job
            stack.extend(reversed(subdirs))

    def _enter(self, name: str, rel: str) -> bool:
        if self.staging and name.startswith(self.staging):
            self.summary.leave_out("this run's output", rel)
        elif name.startswith("."):
            self.summary.leave_out("hidden", rel)
        elif _matches(rel, self.options.exclude) or _matches(rel[:-1], self.options.exclude):
            self.summary.leave_out("excluded by --exclude", rel)
        else:
            return True
        return False

    def _job(self, entry: os.DirEntry[str], rel: str) -> _Job | None:
        name = entry.name
        html = name.lower().endswith(_PAGE_EXT)
        if not html and not _matches(rel, self.options.include):
            return None
        if name.startswith("."):
            self.summary.leave_out("hidden", rel)
        elif _matches(rel, self.options.exclude):
            self.summary.leave_out("excluded by --exclude", rel)
        elif self.output is not None and self._owned(rel):
            self.summary.leave_out("this run's output", rel)
        else:
            return self.judge(entry.path, rel, html)
        return None

    def judge(self, path: str, rel: str, html: bool) -> _Job | None:
        """The job of a file the walk takes, or ``None`` when its path leaves it out (an
        error page, a page robots.txt disallows)."""
        url, aliases = self._urls(rel, html)
        reason = None
        if html and self._error_page(rel):
            reason = "error page"
        # the URL listed, and the file's own name (robots.txt may speak of either)
        elif self.robots is not None and not all(
            self.robots.can_fetch(u, "*") for u in (url, self.base + _encode(rel))
        ):
            reason = "disallowed by robots.txt"
        if reason is None:
            return _Job(path, url, aliases, html, self.links)
        self.summary.leave_out(reason, rel)
        if self.on_left is not None:
            self.on_left(rel, reason, url)
        return None

    def _owned(self, rel: str) -> bool:
        folder, _, name = rel.rpartition("/")
        return self.output == (folder + "/" if folder else "") and bool(self.owned.fullmatch(name))

    @staticmethod
    def _error_page(rel: str) -> bool:
        parts = rel.split("/")
        if _ERROR_PAGE.fullmatch(parts[-1]):
            return True
        return parts[-1] in _INDEX and len(parts) > 1 and bool(_ERROR_PAGE.fullmatch(parts[-2]))

    def _urls(self, rel: str, html: bool) -> tuple[str, tuple[str, ...]]:
        """The file's URL, and the other URLs the same file may be named by."""
        folder, _, name = rel.rpartition("/")
        stem = rel[: rel.rfind(".")] if "." in name else rel
        aliases: tuple[str, ...]
        if html and name in _INDEX:
            path, aliases = (folder + "/" if folder else ""), (rel, folder)
        elif html and self.options.clean_urls:
            path, aliases = stem, (rel,)
        elif html:
            path, aliases = rel, (stem,)
        else:
            path, aliases = rel, ()
        base = self.base
        return base + _encode(path), tuple(base + _encode(a) for a in aliases if a)


def _git_dates(root: Path) -> tuple[dict[str, str], str | None]:
    """The date of the last commit that touched each file under ``root`` (its path inside
    ``root`` → committer date), from one ``git log``; and a note when git failed."""
    base = ["git", "-C", str(root)]
    try:
        inside = subprocess.run(
            [*base, "rev-parse", "--is-inside-work-tree"], capture_output=True, check=False
        )
    except FileNotFoundError:
        return {}, "git is not installed: lastmod is not taken from git"
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        return {}, None  # not a git work tree: the ordinary case of a build folder
    # newest commit first; -z keeps names raw (no quoting), --relative makes them
    # relative to root and leaves out the files outside it
    log = subprocess.run(
        [
            *base,
            "log",
            "--format=%x01%cI",
            "-z",
            "--name-only",
            "--no-renames",
            "--relative",
            "--",
            ".",
        ],
        capture_output=True,
        check=False,
    )
    if log.returncode != 0:
        first = log.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        if b"does not have any commits" in log.stderr:
            return {}, None
        return {}, f"git log failed, lastmod is not taken from git: {' '.join(first)}"
    dates: dict[str, str] = {}
    date = ""
    for token in log.stdout.split(b"\0"):
        token = token.lstrip(b"\n")
        if token.startswith(b"\x01"):
            date = token[1:].decode("ascii", "replace")
        elif token and date:
            dates.setdefault(os.fsdecode(token), date)
    return dates, None


def _workers(options: FolderOptions) -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    if cpus < 2 or not hasattr(os, "fork"):
        return 1
    return min(cpus, 4, options.workers or 4)


def _start(n: int) -> list[Child]:
    children: list[Child] = []
    try:
        for _ in range(n):
            try:
                children.append(Child.fork(_analyse_batch, name="a page reader process"))
            except ForkUnsafe:
                children.append(Child(f"{__name__}:serve_pages", name="a page reader process"))
    except BaseException:
        close_all(children)
        raise
    return children


def _facts(jobs: Iterator[tuple[str, _Job]], workers: int) -> Iterator[tuple[str, _Job, _Facts]]:
    """Each job with its facts, in the order of ``jobs``; read in ``workers`` processes
    once there are more than :data:`PARALLEL_PAGES`."""
    head = list(itertools.islice(jobs, PARALLEL_PAGES))
    if workers <= 1 or len(head) < PARALLEL_PAGES:
        for rel, job in itertools.chain(head, jobs):
            yield rel, job, _analyse(job)
        return
    children = _start(workers)
    # batch i goes to child i mod n and each answers in order, so the replies are read in
    # the order the batches were sent; two batches in flight per child keep it busy
    inflight: deque[tuple[Child, list[tuple[str, _Job]]]] = deque()
    rest = itertools.chain(head, jobs)
    try:
        for i in itertools.count():
            batch = list(itertools.islice(rest, _BATCH))
            if not batch:
                break
            child = children[i % len(children)]
            child.send([job for _, job in batch])
            inflight.append((child, batch))
            if len(inflight) >= 2 * len(children):
                yield from _replies(*inflight.popleft())
        while inflight:
            yield from _replies(*inflight.popleft())
    finally:
        close_all(children)


def _replies(child: Child, batch: list[tuple[str, _Job]]) -> Iterator[tuple[str, _Job, _Facts]]:
    facts = child.receive()
    assert isinstance(facts, list)
    for (rel, job), fact in zip(batch, facts, strict=True):
        yield rel, job, fact


def _lastmod(facts: _Facts, rel: str, sources: tuple[str, ...], git: dict[str, str]) -> str | None:
    for source in sources:
        value = (
            facts.modified
            if source == "page"
            else facts.mtime
            if source == "mtime"
            else git.get(rel)
        )
        if value is not None:
            return value
    return None


def _url(facts: _Facts, lastmod: str | None, summary: FolderSummary) -> Url:
    page = PageOutcome(facts.loc, loc=facts.loc, images=facts.images, alternates=facts.alternates)
    skipped = Conversion()
    url = listed_url(page, lastmod, skipped)
    summary.bad_images += skipped.bad_images
    summary.bad_hreflang += skipped.bad_hreflang
    return url


def write_folder(
    w: Sink,
    root: str,
    options: FolderOptions | None = None,
    *,
    progress: Callable[[int], None] | None = None,
) -> tuple[FolderSummary, list[str]]:
    """Add the pages of the built site folder ``root``; return the summary and notes.

    ``w.base_url`` is the URL at which ``root`` is served.
    """
    options = options or FolderOptions()
    summary = FolderSummary()
    base = w.base_url if w.base_url.endswith("/") else w.base_url + "/"
    walk = _Walk(Path(root), base, options, summary)
    notes: list[str] = []
    git: dict[str, str] = {}
    if "git" in options.lastmod_from:
        git, note = _git_dates(Path(root))
        if note:
            notes.append(note)
    sources = options.lastmod_from
    for rel, job, facts in _facts(walk.jobs(), _workers(options)):
        if facts.reason is not None:
            example = rel if facts.reason != "canonical elsewhere" else f"{rel} → {facts.detail}"
            summary.leave_out(facts.reason, example)
            continue
        try:
            w.add(_url(facts, _lastmod(facts, rel, sources, git), summary))
        except (ValueError, SitemapError) as exc:
            error = error_at(exc, job.path, 0)
            error.line = None  # a page, not a line of a file
            raise error from None
        summary.listed += 1
        if progress is not None and not summary.listed % 1000:
            progress(summary.listed)
    return summary, notes


#: Link targets :class:`FolderPages` remembers the file of (then it starts again).
_RESOLVED: Final = 65_536


class FolderPages:
    """The pages of a built site folder as :class:`~sitemapkit.core.outcome.PageOutcome`
    with their links, for an audit (``write DIR`` reads them without links).

    :meth:`outcomes` walks the folder as :func:`write_folder` does: a page listed or
    left out, and the files its path leaves out with a URL (an error page, a page
    robots.txt disallows); a link is given as the URL of the page it lands on (``/about``
    is ``/about.html`` when no clean URLs are served). :meth:`judge` answers for a URL
    the walk did not give (one a sitemap lists): its file judged, or an error status 404
    when no file answers it. The page's own date is its ``modified``; a folder has no
    ``Last-Modified`` (file times are build times).

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "index.html").write_text('<a href="/about">About</a>')
    >>> _ = (root / "about.html").write_text('<title>About</title>')
    >>> pages = FolderPages(root, "https://example.com/")
    >>> [(o.url, o.links) for o in pages.outcomes()]
    [('https://example.com/about.html', ()), ('https://example.com/', ('https://example.com/about.html',))]
    >>> pages.judge("https://example.com/gone").reason
    'error status'
    """

    def __init__(
        self, root: str | os.PathLike[str], base_url: str, options: FolderOptions | None = None
    ) -> None:
        self.root = Path(root)
        self.base = base_url if base_url.endswith("/") else base_url + "/"
        self.options = options or FolderOptions()
        self.summary = FolderSummary()
        self._left: deque[PageOutcome] = deque()
        self._walk = _Walk(
            self.root, self.base, self.options, self.summary, on_left=self._leave, links=True
        )
        self._site = _normalize(self.base)
        self._resolved: dict[str, str] = {}

    def _leave(self, rel: str, reason: str, url: str) -> None:
        self._left.append(PageOutcome(url, reason=reason, detail=rel))

    def outcomes(self) -> Iterator[PageOutcome]:
        """Every file of the folder with a URL, judged, in the walk's order."""
        for rel, job, facts in _facts(self._walk.jobs(), _workers(self.options)):
            while self._left:
                yield self._left.popleft()
            if facts.reason is None:
                self.summary.listed += 1
            else:
                self.summary.leave_out(facts.reason, rel)
            yield self._outcome(job.url, facts)
        while self._left:
            yield self._left.popleft()

    def judge(self, url: str) -> PageOutcome | None:
        """The page that answers ``url`` (its outcome under that URL), ``None`` for a URL
        of another site."""
        rel = self._rel(url)
        if rel is None:
            return None
        found = self._file(rel)
        if found is None:
            detail = "no file of the folder answers it"
            return PageOutcome(url, reason="error status", detail=detail, status=404)
        name, html = found
        job = self._walk.judge(str(self.root / name), name, html)
        if job is None:
            left = self._left.pop()
            return PageOutcome(url, reason=left.reason, detail=left.detail)
        return self._outcome(url, _analyse(job))

    def _outcome(self, url: str, facts: _Facts) -> PageOutcome:
        links = tuple(self.lands(link) for link in facts.links)
        if facts.reason is not None:
            return PageOutcome(url, reason=facts.reason, detail=facts.detail, links=links)
        return PageOutcome(
            url,
            loc=facts.loc,
            images=facts.images,
            alternates=facts.alternates,
            modified=facts.modified,
            links=links,
        )

    def _rel(self, url: str) -> str | None:
        """The path inside the folder that ``url`` names (``None``: not this site's)."""
        norm = _normalize(url)
        if not norm.startswith(self._site):
            return None
        path = unquote(norm[len(self._site) :].split("?", 1)[0])
        if any(part in ("..", ".") for part in path.split("/")):
            return None
        return path

    def _file(self, rel: str) -> tuple[str, bool] | None:
        """The file a static server answers ``rel`` with, and whether it is a page."""
        if rel == "" or rel.endswith("/"):
            candidates = [rel + name for name in _INDEX]
        else:
            candidates = [rel, rel + ".html", rel + ".htm", *(f"{rel}/{n}" for n in _INDEX)]
        for name in candidates:
            if (self.root / name).is_file():
                html = name.lower().endswith(_PAGE_EXT)
                if html or _matches(name, self.options.include) or name == rel:
                    return name, html
        return None

    def lands(self, link: str) -> str:
        """The page URL a link lands on (comparison form), the link itself when no file
        of the folder answers it."""
        got = self._resolved.get(link)
        if got is not None:
            return got
        rel = self._rel(link)
        found = self._file(rel) if rel is not None else None
        out = link
        if found is not None:
            out = _normalize(self._walk._urls(*found)[0])
        if len(self._resolved) >= _RESOLVED:
            self._resolved.clear()
        self._resolved[link] = out
        return out
