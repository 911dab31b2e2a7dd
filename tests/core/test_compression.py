"""The one inflater: bounded pieces, members, padding, damage, any chunking."""

from __future__ import annotations

import gzip
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemapkit.core.compression import (
    DEFLATE,
    ZLIB,
    InflateError,
    Inflater,
    inflate_prefix,
)


def _feed_all(inf: Inflater, chunks: list[bytes]) -> bytes:
    return b"".join(piece for chunk in chunks for piece in inf.feed(chunk))


@given(
    st.lists(st.binary(max_size=3000), min_size=1, max_size=4),
    st.lists(st.integers(min_value=1, max_value=5000), max_size=6),
)
def test_any_chunking_of_any_members_gives_the_same_bytes(
    members: list[bytes], cuts: list[int]
) -> None:
    data = b"".join(gzip.compress(m, mtime=0) for m in members)
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    inf = Inflater()
    assert _feed_all(inf, chunks) == b"".join(members)
    assert inf.members == len(members)
    assert not inf.in_member


def test_a_bomb_comes_out_in_bounded_pieces() -> None:
    bomb = gzip.compress(b"\0" * 50_000_000)
    sizes = [len(p) for p in Inflater(step=65_536).feed(bomb)]
    assert max(sizes) == 65_536
    assert sum(sizes) == 50_000_000


def test_zero_padding_after_a_member_is_skipped() -> None:
    data = gzip.compress(b"abc") + b"\0" * 512
    inf = Inflater()
    assert _feed_all(inf, [data[:10], data[10:]]) == b"abc"
    assert inf.members == 1 and not inf.in_member


def test_corrupt_data_raises_after_what_inflated_before_it() -> None:
    good = gzip.compress(b"x" * 1000)
    inf = Inflater()
    out = []
    with pytest.raises(InflateError):
        out.extend(inf.feed(good + b"\x1f\x8bjunkjunkjunk"))
    assert b"".join(out) == b"x" * 1000
    assert inf.members == 1
    assert inf.member_out == 0  # the failing member gave nothing: junk after the last one


def test_a_cut_member_is_still_in_member() -> None:
    data = gzip.compress(b"hello world" * 100)
    inf = Inflater()
    _feed_all(inf, [data[:-12]])
    assert inf.in_member


@pytest.mark.parametrize("wbits", [ZLIB, DEFLATE])
def test_zlib_and_raw_deflate(wbits: int) -> None:
    c = zlib.compressobj(wbits=wbits)
    data = c.compress(b"payload" * 50) + c.flush()
    assert _feed_all(Inflater(wbits), [data]) == b"payload" * 50


@given(st.binary(max_size=5000), st.integers(min_value=0, max_value=6000))
def test_inflate_prefix_is_a_prefix_of_the_document(body: bytes, limit: int) -> None:
    assert inflate_prefix(gzip.compress(body), limit) == body[: limit + 1]
    plain = b"<" + body
    assert inflate_prefix(plain, limit) == plain[: limit + 1]


def test_inflate_prefix_stops_at_damage_and_at_junk() -> None:
    one = gzip.compress(b"first")
    assert inflate_prefix(one + b"not gzip", 100) == b"first"
    assert inflate_prefix(one[:-4], 100) == b"first"  # trailer cut: the bytes are there
    assert inflate_prefix(b"\x1f\x8b" + b"\xff" * 20, 100) == b""
