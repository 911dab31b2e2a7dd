"""core: bounded decompression of gzip, zlib and raw deflate, the one inflater. Pure.

Every compressed input from outside (a ``.gz`` sitemap, an HTTP ``Content-Encoding``, a
document handed to the validator) goes through :class:`Inflater`: each call to zlib returns at
most ``step`` bytes, so a 1 KiB bomb that would become gigabytes is seen by the caller's size
cap piece by piece, never inflated whole. Members follow each other as RFC 1952 §2.2 allows
("A gzip file consists of a series of members"), and zero padding after a member, which tape
and block devices add, is skipped.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Final

__all__ = ["DEFLATE", "GZIP", "STEP", "ZLIB", "InflateError", "Inflater", "inflate_prefix"]

#: ``wbits`` for the three framings zlib reads.
GZIP: Final = 16 + zlib.MAX_WBITS
ZLIB: Final = zlib.MAX_WBITS
DEFLATE: Final = -zlib.MAX_WBITS

#: Decompressed bytes out of one zlib call: a bomb is caught early, a normal file is fast.
STEP: Final = 262_144


class InflateError(ValueError):
    """The compressed data is corrupt; ``str()`` is zlib's reason."""


class Inflater:
    """Inflates a stream of compressed chunks in bounded pieces.

    ``members`` counts the members read to their end and ``member_out`` the bytes out of the
    current (or last) member; a caller tells "corrupt" from "junk after the last member" by
    them. After an :class:`InflateError` the inflater starts a new member on the next feed.

    >>> import gzip
    >>> inf = Inflater()
    >>> b"".join(inf.feed(gzip.compress(b"a" * 10) + gzip.compress(b"b")))
    b'aaaaaaaaaab'
    >>> inf.members, inf.in_member
    (2, False)
    """

    __slots__ = ("_d", "_step", "_wbits", "member_out", "members", "total_out")

    def __init__(self, wbits: int = GZIP, *, step: int = STEP) -> None:
        self._wbits = wbits
        self._step = step
        self._d: zlib._Decompress | None = None
        self.members = 0
        self.member_out = 0
        self.total_out = 0

    @property
    def in_member(self) -> bool:
        """A member was started and has not ended: the data so far ends early."""
        return self._d is not None

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Yield the bytes ``data`` inflates to, at most ``step`` bytes a piece.

        Raises :class:`InflateError` (after the pieces before the damage) on corrupt data.
        """
        step = self._step
        while True:
            if self._d is None:
                if self.members:
                    data = data.lstrip(b"\x00")
                if not data:
                    return
                self._d = zlib.decompressobj(self._wbits)
                self.member_out = 0
            d = self._d
            try:
                out = d.decompress(data, step)
            except zlib.error as exc:
                self._d = None
                raise InflateError(str(exc)) from exc
            if out:
                self.member_out += len(out)
                self.total_out += len(out)
                yield out
            if d.eof:
                self.members += 1
                self._d = None
                data = d.unused_data
                continue
            data = d.unconsumed_tail
            if not data and len(out) < step:
                return


def inflate_prefix(data: bytes, limit: int) -> bytes:
    """The first ``limit`` + 1 bytes ``data`` holds: gunzipped when it is gzip, else as is.

    Corrupt or cut gzip gives what inflates before the damage, so a caller sees the size
    cap or the damage in the bytes, not an exception.

    >>> import gzip
    >>> inflate_prefix(gzip.compress(b"x" * 100), 9)
    b'xxxxxxxxxx'
    """
    if data[:2] != b"\x1f\x8b":
        return data[: limit + 1]
    out: list[bytes] = []
    size = 0
    inf = Inflater(GZIP)
    try:
        for piece in inf.feed(data):
            out.append(piece)
            size += len(piece)
            if size > limit:
                break
    except InflateError:
        pass
    return b"".join(out)[: limit + 1]
