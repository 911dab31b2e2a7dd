"""io.fetch: removing an HTTP ``Content-Encoding`` in bounded steps.

httpx's own decoder inflates a whole network chunk at once; a hostile 64 KiB chunk can
become 64 MiB. Here the one bounded inflater of :mod:`sitemapkit.core.compression` returns
at most :data:`~sitemapkit.core.compression.STEP` bytes a call, and the parser's size cap
sees each piece. A sitemap that is itself gzip is left for the parser.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...core.compression import DEFLATE, GZIP, ZLIB, InflateError, Inflater
from ...errors import FetchError, ParseError

__all__ = ["ContentDecoder"]

_WBITS = {"gzip": GZIP, "x-gzip": GZIP, "deflate": ZLIB}


class ContentDecoder:
    """Removes an HTTP ``Content-Encoding`` (gzip, deflate) in bounded steps.

    >>> import gzip
    >>> b"".join(ContentDecoder("gzip", "x").decode(gzip.compress(b"<urlset/>")))
    b'<urlset/>'
    """

    __slots__ = ("_any", "_inflater", "_name", "_raw", "_where")

    def __init__(self, encoding: str, where: str) -> None:
        self._where = where
        names = [e.strip().lower() for e in encoding.split(",") if e.strip()]
        names = [n for n in names if n != "identity"]
        if len(names) > 1 or (names and names[0] not in _WBITS):
            raise FetchError(
                f"Unsupported Content-Encoding {encoding!r}; only gzip and deflate are accepted",
                where=where,
            )
        self._name = names[0] if names else ""
        self._inflater = Inflater(_WBITS[self._name]) if self._name else None
        self._any = False  # bytes came out: too late to change the framing
        self._raw = False

    def decode(self, data: bytes) -> Iterator[bytes]:
        inflater = self._inflater
        if inflater is None:
            if data:
                yield data
            return
        try:
            for out in inflater.feed(data):
                self._any = True
                yield out
        except InflateError as exc:
            if self._name == "deflate" and not self._raw and not self._any:
                # RFC 9110 says zlib-wrapped; some servers send raw deflate.
                self._raw = True
                self._inflater = Inflater(DEFLATE)
                yield from self.decode(data)
                return
            raise ParseError(
                f"The response's Content-Encoding {self._name} data is corrupt ({exc}) [SM007]",
                where=self._where,
            ) from exc

    def flush(self) -> None:
        if self._inflater is not None and self._inflater.in_member:
            raise ParseError(
                f"The response's Content-Encoding {self._name} data ends early [SM007]",
                where=self._where,
            )
