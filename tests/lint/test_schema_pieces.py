"""Schema findings of a root with many entries are validated piece by piece, same results."""

from __future__ import annotations

from lxml import etree

from sitemapkit.lint import schema

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def document(n: int) -> bytes:
    """n entries on one line, every third one wrong in one of several ways."""
    entries = []
    for i in range(n):
        bad = [
            f"<url><loc>https://e.com/{i}</loc></url>",
            f"<url><loc>https://e.com/{i}</loc><priority>7</priority></url>",
            f"<url><lastmod>2024-05-01</lastmod><loc>https://e.com/{i}</loc></url>",
            f"<url><loc>https://e.com/{i}</loc><extra>x</extra></url>",
            "<url></url>",
        ]
        entries.append(bad[0] if i % 3 else bad[(i // 3) % 5])
    return f'<urlset xmlns="{NS}" bogus="1">{"".join(entries)}</urlset>'.encode()


def findings(source: bytes, piece: int) -> list[tuple[object, ...]]:
    root = etree.fromstring(source)
    out = schema.schema_findings(root.getroottree(), source=source, where="s.xml", piece=piece)
    assert etree.tostring(root) == etree.tostring(etree.fromstring(source))  # tree unchanged
    return [(f.rule, f.message, f.line, f.column, f.loc) for f in out]


def test_pieces_give_the_findings_of_the_whole_tree() -> None:
    source = document(2_500)
    whole = findings(source, 10**9)
    assert len(whole) > 600 and len({rule for rule, *_ in whole}) >= 3
    assert findings(source, 1_000) == whole
    assert findings(source, 7) == whole
    # columns are placed on the one-line document, and the root's attribute error comes once
    assert all(column for _, _, _, column, _ in whole)
    assert sum("bogus" in message for _, message, *_ in whole) == 1
