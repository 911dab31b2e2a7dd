"""Text a server printed before the XML (issue 12 §2), through the commands: ``read`` reads
the document after it and exits 1 (SM003); ``validate`` reports SM003 at line 1 and the
document's own findings on the lines and columns of the original file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import cli

DATA = Path(__file__).parent / "data" / "invalid"
NOTICE = b"Notice: Undefined variable: lang in /var/www/sitemap.php on line 12\n"
BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    b"<url>\n  <loc>https://example.com/a</loc>\n  <changefreq>Daily</changefreq>\n</url>\n"
    b"</urlset>\n"
)


def test_read_recovers_the_document_after_a_php_notice(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_bytes(NOTICE + BODY)
    code, out, err = cli(["read", str(path), "--format", "urls"])
    assert code == 1
    assert out.split() == ["https://example.com/a"]
    assert f"{path}:1: SM003 error: Text precedes the XML declaration: 'Notice:" in err


def test_validate_places_the_rest_on_the_original_lines(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_bytes(NOTICE + BODY)
    published = "https://example.com/sitemap.xml"
    code, out, _ = cli(["validate", str(path), "--published-at", published, "--format", "json"])
    assert code == 1
    found = [(f["rule"], f["line"], f["column"]) for f in json.loads(out)["findings"]]
    assert found == [("SM003", 1, 1), ("SM401", 6, 3)]  # <changefreq> on line 6, column 3


def test_the_corpus_has_the_three_kinds_of_leading_text() -> None:
    names = {p.name for p in DATA.glob("SM003-*.xml")}
    assert {"SM003-L1-php-notice.xml", "SM003-L1-html-error-page.xml"} <= names
    assert (DATA / "SM003-L1-bom-then-text.xml").read_bytes().startswith(b"\xef\xbb\xbfDebug")
