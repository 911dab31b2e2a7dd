"""core.split: the one rule where a sitemap file ends."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitemapkit.core import limits
from sitemapkit.core.split import Limits, fits


def test_the_default_limits_are_the_protocol_limits() -> None:
    assert Limits() == Limits(limits.MAX_URLS, limits.MAX_BYTES, limits.MAX_NEWS)


def test_each_limit_binds_exactly() -> None:
    lim = Limits(urls=2, bytes=100, news=1)
    assert fits(lim, count=2, size=60, news=1, head=30, tail=10)
    assert not fits(lim, count=3, size=60, news=1, head=30, tail=10)
    assert not fits(lim, count=2, size=61, news=1, head=30, tail=10)  # the tail counts
    assert not fits(lim, count=2, size=60, news=2, head=30, tail=10)


@given(
    sizes=st.lists(st.tuples(st.integers(1, 50), st.booleans()), max_size=60),
    urls=st.integers(1, 6),
    max_bytes=st.integers(80, 300),
    news=st.integers(1, 3),
)
def test_a_greedy_split_by_fits_never_exceeds_the_limits(
    sizes: list[tuple[int, bool]], urls: int, max_bytes: int, news: int
) -> None:
    lim = Limits(urls, max_bytes, news)
    head, tail = 20, 10
    parts: list[list[tuple[int, bool]]] = [[]]
    for size, has_news in sizes:
        part = parts[-1]
        count, total, n = len(part) + 1, sum(s for s, _ in part) + size, sum(x for _, x in part)
        if not fits(lim, count=count, size=total, news=n + has_news, head=head, tail=tail):
            parts.append([])
        parts[-1].append((size, has_news))
    for part in parts:
        assert len(part) <= urls
        assert head + sum(s for s, _ in part) + tail <= max_bytes
        assert sum(x for _, x in part) <= news
