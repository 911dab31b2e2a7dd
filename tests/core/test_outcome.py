"""PageOutcome and listed_url: what folder and crawl sources share."""

import pytest

from sitemapkit.core.outcome import REASONS, Conversion, PageOutcome, listed_url


def test_a_left_out_page_has_no_entry() -> None:
    page = PageOutcome("https://example.com/x", reason="noindex", detail="<meta name=robots>")
    assert not page.listed
    with pytest.raises(ValueError, match="not listed"):
        listed_url(page, None, Conversion())


def test_entry_keeps_values_and_counts_what_it_skips() -> None:
    skipped = Conversion()
    page = PageOutcome(
        "https://example.com/a",
        loc="https://example.com/a",
        images=("https://cdn.example.com/1.png", "not a url"),
        alternates=(("x-default", "https://example.com/a"), ("not a code!", "https://e.com/")),
    )
    url = listed_url(page, "2024-01-02", skipped)
    assert url.loc == "https://example.com/a"
    assert url.lastmod == "2024-01-02"
    assert [i.loc for i in url.images] == ["https://cdn.example.com/1.png"]
    assert [(a.hreflang, a.href) for a in url.alternates] == [
        ("x-default", "https://example.com/a")
    ]
    assert (skipped.bad_images, skipped.bad_hreflang) == (1, 1)


def test_reasons_are_unique() -> None:
    assert len(set(REASONS)) == len(REASONS)
