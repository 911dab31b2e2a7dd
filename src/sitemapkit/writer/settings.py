"""writer: one run's settings, checked once; the rules every mode shares.

A :class:`Settings` is built from the writer's keyword arguments and never changes. It
knows the file names, the header and footer of a shard, how a loc is resolved and
whether it lies under the base URL: the streaming, incremental and forked paths ask
it, so they name, frame and check entries alike.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ..core import limits
from ..core.finding import Finding
from ..core.grammar import SCHEME
from ..core.model import Url
from ..core.serialize import footer, header, url_entry
from ..core.split import Limits
from ..core.urls import (
    XML_SPACE,
    Origin,
    check_location,
    escape,
    iri_to_uri,
    is_canonical_loc,
    resolve,
)
from ..core.w3cdate import format_lastmod
from ..errors import InputError

__all__ = ["Check", "Settings", "settings"]

#: The hook that validates each staged file before anything is published.
Check = Callable[[Path], list[Finding]]
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True, slots=True)
class Settings:
    """What a run writes and where; see :class:`sitemapkit.SitemapWriter` for each field."""

    directory: Path
    base_url: str
    origin: Origin
    gzip: bool
    gzip_level: int | None
    limits: Limits
    max_index_entries: int
    index: Literal["auto", "always", "never"]
    format: Literal["xml", "txt"]
    stylesheet: str | None
    name: str
    keep_deprecated: bool
    check_location: bool
    now: str
    content_from: Path | None
    check: Check | None
    ext: str
    footer: bytes
    owned: re.Pattern[str]

    @property
    def txt(self) -> bool:
        return self.format == "txt"

    def header(self, ns: int) -> str:
        """A shard's start with the namespaces ``ns`` declared (nothing for text)."""
        return "" if self.txt else header("urlset", ns, self.stylesheet)

    def shard_name(self, n: int) -> str:
        return f"{self.name}-{n}{self.ext}"

    @property
    def single_name(self) -> str:
        """The name of the one sitemap written directly, without an index."""
        return f"{self.name}{self.ext}"

    def resolve(self, loc: str) -> str:
        """Resolve a possibly relative loc against ``base_url`` (and turn it into a URI)."""
        if is_canonical_loc(loc):
            return loc
        text = loc.strip(XML_SPACE)
        if not SCHEME.match(text):
            text = resolve(text, self.base_url)
        return iri_to_uri(text)

    def url(self, url: Url | str) -> Url:
        """``url`` as a record: a string is a loc, resolved first (``Url`` refuses relative)."""
        if isinstance(url, str):
            return Url(self.resolve(url))
        if not isinstance(url, Url):
            raise TypeError(f"add() takes a Url or a str, not {type(url).__name__}")
        return url

    def check_loc(self, loc: str) -> None:
        """Refuse a loc outside the base URL (sitemaps.org "Sitemap file location")."""
        # under the base URL, the common case: only dot segments could climb out of it
        if loc.startswith(self.base_url) and ("/." not in loc or self.origin.path == "/"):
            return
        if self.check_location:
            why = check_location(loc, self.origin)
            if why is not None:
                raise InputError(
                    f"URL {loc!r} is outside {self.base_url}: {why}",
                    hint="a sitemap may only list URLs under its own folder; fix --base-url "
                    "or the URL, or, when the other host's robots.txt names this sitemap in a "
                    "'Sitemap:' line (cross-submission), write with --no-location-check",
                )

    def entry(self, url: Url | str) -> tuple[str, int, int, str]:
        """The line ``url`` becomes, its namespace flags, news count and duplicate key.

        Checks the location. Pure, so forked formatter processes call it too.
        """
        url = self.url(url)
        self.check_loc(url.loc)
        if self.txt:
            return url.loc + "\n", 0, 0, url.loc
        text, ns = url_entry(url, keep_deprecated=self.keep_deprecated)
        return text, ns, 1 if url.news is not None else 0, escape(url.loc)

    def check_staged(self, stage: Callable[[str], Path], names: Iterable[str]) -> None:
        """Run the ``check`` hook on each staged file; publish nothing if it finds errors."""
        if self.check is None:
            return
        errors = [f for name in names for f in self.check(stage(name)) if f.severity == "error"]
        if errors:
            raise InputError(
                f"the written sitemaps fail validation ({len(errors):,} errors, the first: "
                f"{errors[0].rule} {errors[0].message}); nothing was published",
                hint="fix the input, or write without --validate",
            )


def _check_limits(max_urls: int, max_bytes: int, max_news: int, max_index_entries: int) -> None:
    if not 1 <= max_urls <= limits.MAX_URLS:
        raise ValueError(f"max_urls must be 1..{limits.MAX_URLS:,}, not {max_urls}")
    if not 1 <= max_bytes <= limits.MAX_BYTES:
        raise ValueError(f"max_bytes must be 1..{limits.MAX_BYTES:,}, not {max_bytes}")
    if not 1 <= max_news <= limits.MAX_NEWS:
        raise ValueError(f"max_news must be 1..{limits.MAX_NEWS:,}, not {max_news}")
    if not 1 <= max_index_entries <= limits.MAX_SITEMAPS:
        raise ValueError(f"max_index_entries must be 1..{limits.MAX_SITEMAPS:,}")


def _base(base_url: str) -> tuple[str, Origin]:
    base = iri_to_uri(base_url)
    try:
        origin = Origin.of(base)
    except ValueError as exc:
        raise ValueError(f"base_url: {exc}") from None
    if origin.scheme not in ("http", "https"):
        raise ValueError(f"base_url {base_url!r} must be an http(s) URL")
    if not base.endswith("/"):
        base += "/"
        origin = Origin.of(base)
    return base, origin


def settings(
    directory: str | Path,
    *,
    base_url: str,
    gzip: bool,
    max_urls: int,
    max_bytes: int,
    max_news: int,
    max_index_entries: int,
    index: Literal["auto", "always", "never"],
    format: Literal["xml", "txt"],
    stylesheet: str | None,
    name: str,
    keep_deprecated: bool,
    check_location: bool,
    gzip_level: int | None,
    content_from: str | Path | None,
    now: dt.datetime | None,
    check: Check | None,
) -> Settings:
    """Check the writer's arguments (``ValueError`` naming the wrong one) and derive the rest."""
    _check_limits(max_urls, max_bytes, max_news, max_index_entries)
    if index not in ("auto", "always", "never"):
        raise ValueError(f"index must be auto, always or never, not {index!r}")
    if format not in ("xml", "txt"):
        raise ValueError(f"format must be xml or txt, not {format!r}")
    if not _NAME.fullmatch(name):
        raise ValueError(f"name {name!r} must be a plain file-name prefix like 'sitemap'")
    base, origin = _base(base_url)
    esc = re.escape(name)
    return Settings(
        directory=Path(directory),
        base_url=base,
        origin=origin,
        gzip=gzip,
        gzip_level=gzip_level,
        limits=Limits(max_urls, max_bytes, max_news),
        max_index_entries=max_index_entries,
        index=index,
        format=format,
        stylesheet=stylesheet,
        name=name,
        keep_deprecated=keep_deprecated,
        check_location=check_location,
        now=format_lastmod(now if now is not None else dt.datetime.now(dt.UTC)),
        content_from=Path(content_from) if content_from is not None else None,
        check=check,
        ext=(".txt" if format == "txt" else ".xml") + (".gz" if gzip else ""),
        footer=b"" if format == "txt" else footer("urlset").encode(),
        owned=re.compile(rf"{esc}(?:-[0-9]+)?\.(?:xml|txt)(?:\.gz)?|{esc}-index-[0-9]+\.xml"),
    )
