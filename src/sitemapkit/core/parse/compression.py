"""core.parse: the compression around a document: gzip or none (SM007, SM008). Pure.

sitemaps.org: "You can compress your Sitemap files using gzip". The first bytes decide: gzip
data is inflated through :class:`sitemapkit.core.compression.Inflater`, the one bounded
inflater (one or several members, pieces of at most 256 KiB, so the size budget sees a bomb
early); ZIP, bzip2, xz, 7z and zstd are refused; anything else is the document itself. Corrupt
gzip keeps what inflated before the damage.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from ..compression import InflateError, Inflater
from .findings import Findings

__all__ = ["Compression"]

# Magic numbers of compressions that are not gzip (SM007: "must be gzip").
_OTHER: Final = (
    (b"PK\x03\x04", "ZIP"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
_MAGIC: Final = 6  # bytes that decide: the longest magic number above


class Compression:
    """Raw bytes in, the document's plain bytes out."""

    def __init__(self, findings: Findings) -> None:
        self._findings = findings
        self._magic = b""
        self._inflater: Inflater | None = None
        self._decided = False
        self._failed = False  # corrupt gzip: the rest of the input is ignored
        #: The gzip data was cut or corrupt: the plain bytes end early.
        self.truncated = False

    def feed(self, data: bytes, final: bool = False) -> Iterator[bytes]:
        """The plain bytes of the next raw ``data`` (``final``: no more will come)."""
        if not self._decided:
            self._magic += data
            if len(self._magic) < _MAGIC and not final:
                return
            data, self._magic = self._magic, b""
            self._decided = True
            if data[:2] == b"\x1f\x8b":
                self._inflater = Inflater()
            self._check_magic(data)
        if self._failed:
            return
        if self._inflater is None:
            yield data
            return
        try:
            yield from self._inflater.feed(data)
        except InflateError as exc:
            self._gzip_failed(str(exc))

    def close(self) -> Iterator[bytes]:
        """The plain bytes held back; a gzip member cut short is reported."""
        if not self._decided:
            yield from self.feed(b"", final=True)
        inflater = self._inflater
        if inflater is not None and not self._failed and inflater.in_member:
            self._gzip_failed("it ends early; the file is truncated")

    def _check_magic(self, data: bytes) -> None:
        add = self._findings.add
        for magic, name in _OTHER:
            if data.startswith(magic):
                add(
                    "SM007",
                    f"The document is {name}-compressed; sitemaps may only be compressed with gzip",
                    fatal=True,
                    lost=True,
                )
        source = self._findings.settings.source
        if source is not None and self._inflater is None:
            path = source.split("?", 1)[0].split("#", 1)[0]
            if path.endswith(".gz"):
                add(
                    "SM008",
                    f"{source!r} is named .gz but its content is not gzip; "
                    "compress it or drop the .gz suffix",
                    lost=False,  # read as the plain document it is
                )

    def _gzip_failed(self, reason: str) -> None:
        inflater = self._inflater
        assert inflater is not None
        if inflater.members and not inflater.member_out:
            msg = (
                f"Unexpected bytes after the end of the gzip data ({reason}); they were "
                "ignored. Remove them"
            )
        else:
            self.truncated = True
            msg = (
                f"The gzip data is corrupt ({reason}); records before the damage were "
                "read. Recompress the file with gzip"
            )
        self._failed = True
        # Bytes after the gzip data, or the document after the damage, were not read.
        self._findings.add("SM007", msg, lost=True)
