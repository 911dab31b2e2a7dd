"""validate keeps a bounded number of findings of a rule from each pass and counts the rest."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sitemapkit.validation import Tuning, validate

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


@pytest.mark.parametrize("in_pieces", [False, True])
def test_a_pass_stops_keeping_a_rule_but_the_counts_stay_exact(
    tmp_path: Path, in_pieces: bool
) -> None:
    # priorities out of range (the reader and the XSD both see them), unknown elements (the
    # XSD only), locs that are not URLs (the reader only)
    entries = [f"<url><loc>https://e.com/{i}</loc><priority>7</priority></url>" for i in range(30)]
    entries += [f"<url><loc>https://e.com/x{i}</loc><foo>1</foo></url>" for i in range(25)]
    entries += [f"<url><loc>nope{i}</loc></url>" for i in range(20)]
    doc = tmp_path / "s.xml"
    doc.write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n'
        + "\n".join(entries)
        + "\n</urlset>\n"
    )

    def totals(tuning: Tuning | None = None) -> tuple[Counter[str], Counter[str]]:
        report = validate(doc, max_findings=0, tuning=tuning)
        listed = Counter(f.rule for f in report.findings)
        return listed, listed + Counter(report.omitted)

    listed, everything = totals()  # the whole tree at once, nothing left out
    assert everything == listed
    assert sum(everything.values()) > 60 and len(everything) >= 3
    pieces_from = Tuning().pieces_from
    if in_pieces:  # the tree pass of a large document: the same findings
        pieces_from = 0
        assert totals(Tuning(pieces_from=0)) == (listed, everything)
    capped, counted = totals(Tuning(keep_per_rule=4, pieces_from=pieces_from))
    assert counted == everything
    assert max(capped.values()) <= 2 * 4 and capped != listed  # 4 from each pass at most


def test_counts_of_rules_left_out_are_not_reported(tmp_path: Path) -> None:
    doc = tmp_path / "s.xml"
    doc.write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n'
        + "\n".join(f"<url><loc>nope{i}</loc></url>" for i in range(20))
        + "\n</urlset>\n"
    )
    report = validate(doc, max_findings=0, ignore=["SM201"], tuning=Tuning(keep_per_rule=4))
    assert "SM201" not in report.omitted
    assert all(f.rule != "SM201" for f in report.findings)
    assert report.omitted  # the other rule of these entries is still counted
