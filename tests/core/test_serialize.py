"""core.serialize: the block fast path writes exactly what url_entry writes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapkit.core.model import Url
from sitemapkit.core.serialize import BlockFormatter, url_entry

BASE = "https://example.com/"
_ROW = st.tuples(
    st.text(st.sampled_from("abz09-._~/?#[]@!$&'()*+;=%üé中"), max_size=30),
    st.sampled_from(["daily", "never", "hourly", ""]),  # "": the row has none
    st.sampled_from(["0.0", "0.5", "1.0", ""]),
)
# a block's lastmods: dates, datetimes, empty fields (the row has none), or a mix
_LASTMODS = st.sampled_from(
    [
        ["2024-05-01", "2024-02-29"],
        ["2024-02-29T23:59:59Z", "2024-05-01T10:00:00-00:00"],
        ["2024-05-01", ""],
        ["", "2024-02-29T23:59:59Z"],
        ["", ""],
        ["2024-05-01T10:00:00+14:00", "2024-05-01"],
    ]
)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(_ROW, min_size=1, max_size=6), stamps=_LASTMODS, txt=st.booleans())
def test_a_block_the_fast_path_takes_is_what_url_entry_writes(
    rows: list[tuple[str, str, str]], stamps: list[str], txt: bool
) -> None:
    lines = [f"{BASE}p/{path},{stamps[i % 2]},{cf},{pr}" for i, (path, cf, pr) in enumerate(rows)]
    fmt = BlockFormatter(BASE, ["loc", "lastmod", "changefreq", "priority"], txt=txt)
    block = fmt.format(("\n".join(lines) + "\n").encode())
    if block is None:  # broken escapes ("%zz") are the row path's to report
        assert any("%" in path for path, *_ in rows)
        return
    assert block.entries == len(rows) == len(block.hashes)
    expected = []
    for line in lines:
        loc, lm, cf, pr = line.split(",")
        url = Url(loc, lastmod=lm or None, changefreq=cf or None, priority=pr or None)
        expected.append(url.loc + "\n" if txt else url_entry(url)[0])
    assert block.data.decode() == "".join(expected)
