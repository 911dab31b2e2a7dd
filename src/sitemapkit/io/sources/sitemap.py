"""io: sitemap inputs (.xml, .xml.gz): their URLs, and the child files beside an index."""

from __future__ import annotations

from ...core.model import SitemapRef, Url
from ...errors import InputError, ParseError, SitemapError
from .sink import Input, Sink

__all__ = ["write_xml"]


def write_xml(w: Sink, src: Input) -> list[str]:
    """Add a sitemap's URLs; return the child sitemap locs if it is an index."""
    stream, where, progress = src.stream, src.where, src.progress
    from ...core.parse import SitemapParser  # type: ignore[import-not-found, unused-ignore]

    parser = SitemapParser(source=where, strict=True, base_url=w.base_url)
    children: list[str] = []
    done = 0

    def take(records: list[Url | SitemapRef]) -> None:
        nonlocal done
        for r in records:
            if isinstance(r, SitemapRef):
                children.append(r.loc)
                continue
            try:
                w.add(r)
            except SitemapError as exc:
                exc.where = where
                exc.field = exc.field or "loc"
                raise
            done += 1
        if progress:
            progress(done)

    try:
        while chunk := stream.read(1 << 20):
            take(parser.feed(chunk))
        take(parser.close())
    except ParseError as exc:
        raise InputError(
            exc.message, where=exc.where or where, line=exc.line, column=exc.column, hint=exc.hint
        ) from None
    return children
