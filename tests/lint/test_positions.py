"""Every finding at its own element: line and column, in every mode of the validator.

The oracle is lxml: the ``sourceline`` of the element that holds the fault, and the column
of its start tag (or of the attribute) counted here from the bytes, independently of the
validator's locator (lint/checks/position.py): the k-th ``<name`` of that line, where k
elements of that name start on the line before it. Columns are 1-based characters of the
decoded line; the byte order mark is not one.

The modes: the whole tree (the default for a small file), pieces (``pieces_from=0``: the
tree pass in pieces of two entries), the scanner's fast path with the plain pass
(``defer_from=0``; a document with extensions is not plain and takes the tree after the
reader), and a set (the document validated with another one).
"""

from __future__ import annotations

import datetime as dt
import re
import tempfile
from pathlib import Path
from typing import Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from sitemapkit.core.finding import Finding
from sitemapkit.validation import validate
from sitemapkit.validation.driver import Tuning

DATA = Path(__file__).parent.parent / "data"
INVALID = sorted((DATA / "invalid").glob("*.xml"))
NOW = dt.datetime(2024, 6, 1, 12, tzinfo=dt.UTC)
SITE = "https://example.com"
MODES: Final = {
    "tree": Tuning(),
    "pieces": Tuning(pieces_from=0, piece=2),
    "plain": Tuning(defer_from=0),
}
NS: Final = {
    "s": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
    "xhtml": "http://www.w3.org/1999/xhtml",
}
_STEP = re.compile(r"(?:[\w.-]+:)?([\w.-]+)(?:\[(?:(\d+)|@([\w.:-]+)='([^']*)')\])?")


# -- the oracle ------------------------------------------------------------------------------


def _column(data: bytes, el: etree._Element, attr: str | None = None) -> tuple[int, int]:
    """(line, column) of ``el``'s start tag (or its attribute ``attr``), from lxml."""
    line = el.sourceline
    assert line is not None
    qname = f"{el.prefix}:{etree.QName(el).localname}" if el.prefix else etree.QName(el).localname
    before = 0
    for other in el.getroottree().getroot().iter(etree.Element):
        if other is el:
            break
        if other.sourceline == line and other.tag == el.tag and other.prefix == el.prefix:
            before += 1
    text = data.split(b"\n")[line - 1].decode("utf-8", "replace").removeprefix("\ufeff")
    starts = [m.start() for m in re.finditer(rf"<{re.escape(qname)}(?=[\s/>])", text)]
    at = starts[before]
    if attr is not None:
        tag = text[at : text.index(">", at)]
        m = re.search(rf"\s((?:[\w.-]+:)?{re.escape(attr)})\s*=", tag)
        assert m is not None
        at += m.start(1)
    return line, at + 1


def _element(root: etree._Element, f: Finding) -> tuple[etree._Element, str | None] | None:
    """The element (and attribute) a finding names: its entry by loc, then its path."""
    entries = [
        e
        for e in root
        if isinstance(e.tag, str)
        and (loc := e.find("s:loc", NS)) is not None
        and (loc.text or "").strip() == f.loc
    ]
    # a URL listed twice: the entry on the finding's line
    entry = next((e for e in entries if e.find("s:loc", NS).sourceline == f.line), None)
    entry = entry if entry is not None else (entries[0] if entries else None)
    if entry is None or f.element is None:
        return None
    node, attr = entry, None
    for step in f.element.split("/"):
        if step.startswith("@"):
            attr = step[1:]
            break
        m = _STEP.fullmatch(step)
        assert m is not None, step
        name, index, key, value = m.groups()
        children = [c for c in node if isinstance(c.tag, str) and etree.QName(c).localname == name]
        if key is not None:
            children = [c for c in children if c.get(key) == value]
            index = None
        node = children[int(index or 1) - 1]
    return node, attr


def _positions(report_findings: list[Finding], rule: str) -> list[tuple[int | None, int | None]]:
    return sorted((f.line, f.column) for f in report_findings if f.rule == rule)


# -- the corpus ------------------------------------------------------------------------------


def _published(path: Path) -> str:
    text = path.read_bytes().decode("utf-8", "replace")
    explicit = re.search(r"<!-- published-at: (\S+) -->", text)
    if explicit:
        return explicit.group(1)
    loc = re.search(r"<loc>\s*(?:<!\[CDATA\[)?([a-z]+://[^/<\s]*)", text)
    return (loc.group(1) if loc else SITE) + "/" + path.name


#: Findings of the fixtures that name no element path (``Finding.element``), and the
#: element (from the entry, ``"."`` the entry itself; ``"/"`` the root) and attribute each
#: is about: the test's own knowledge of the fixture, not the validator's.
UNNAMED: Final = {
    "SM101": ("/", "xmlns"),  # the root's default namespace declaration
    "SM112": ("/", "schemaLocation"),
    "SM103": (".", None),  # the <url> without a <loc> (it has no loc to name it by)
    "SM108": (".", None),  # text directly inside the <url>
    "SM105": ("s:lastmod", None),  # the element out of order
    **dict.fromkeys(("SM204", "SM205", "SM206", "SM502", "SM506"), ("s:loc", None)),
    **dict.fromkeys(("HRE905", "HRE907"), ("s:loc", None)),  # a page's own alternates
    "SM303": ("s:lastmod", None),
    "SM401": ("s:changefreq", None),
    "SM403": ("s:priority", None),
    "VID715": ("video:video/video:title", None),
}
#: Rules whose findings are not placed on an element here, and why (the list is short).
EXEMPT: Final = {
    # document-level: the prolog or the document as a whole, at the first markup of line 1
    # (or its start): the declaration, the byte order mark, the text before the XML, a
    # DOCTYPE, an HTML page, a text sitemap's line
    **dict.fromkeys(("SM001", "SM002", "SM003", "SM005", "SM009", "SM010", "SM011"), "prolog"),
    # where libxml2 stopped reading, inside text it cannot read: libxml2's own column
    "SM004": "libxml2",
    # lint.checks.document reports these with a line only (no path, several elements it
    # may be about): a padded value of any element; a prefix bound to the wrong namespace
    # (the declaration, on any element); placed on the first start tag of their line
    "SM109": "no path yet",
    "SM102": "no path yet",
}


def _expected(root: etree._Element, data: bytes, f: Finding) -> tuple[int, int] | None:
    """lxml's (line, column) of the element (or attribute) a finding is about."""
    if f.element is not None:
        found = _element(root, f)
        assert found is not None, f"the path does not fit the entry: {f}"
        return _column(data, *found)
    path, attr = UNNAMED[f.rule]
    if path == "/":
        return _column(data, root, attr)
    if f.loc is None:  # the entry on the finding's line
        entry = next(e for e in root if e.sourceline == f.line)
    else:
        entry = next(e for e in root if (e.findtext("s:loc", "", NS) or "").strip() == f.loc)
    el = entry if path == "." else entry.find(path, NS)
    assert el is not None, (path, str(f))
    return _column(data, el, attr)


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_fixture_findings_sit_at_their_element_in_every_mode(path: Path) -> None:
    """Every finding of each fixture that has a line, in every mode, sits at lxml's line
    and column of the element, attribute or declaration it is about (by its path, or for
    the few that name none, by :data:`UNNAMED`); only :data:`EXEMPT` rules are not
    element-bound, and they sit at a start tag or a line start, the same in every mode."""
    rule = path.name.split("-", 1)[0]
    published = _published(path)
    data = path.read_bytes()
    try:
        root = etree.fromstring(data[data.find(b"<?xml") :] if b"<?xml" in data else data)
    except etree.XMLSyntaxError:
        root = None
    lines = data.decode("utf-8", "replace").removeprefix("\ufeff").split("\n")
    skip = data.count(b"\n", 0, data.find(b"<?xml")) if b"<?xml" in data else 0
    seen = {}
    for mode in [*MODES, "set"]:
        if mode == "set":  # with a clean sitemap of another host beside it
            with tempfile.TemporaryDirectory() as tmp:
                other = Path(tmp) / "other.xml"
                other.write_text(
                    f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS["s"]}">'
                    "<url><loc>https://other.example.org/q</loc></url></urlset>\n"
                )
                report = validate(
                    [path, other],
                    published_at=[published, "https://other.example.org/other.xml"],
                    now=NOW,
                    select=[rule],
                )
        else:
            report = validate(
                path, published_at=published, now=NOW, select=[rule], tuning=MODES[mode]
            )
        own = [f for f in report.findings if f.where == str(path)]
        seen[mode] = _positions(own, rule)
        for f in own:
            if f.line is None:
                assert f.loc is None and f.element is None, (mode, str(f))
                continue  # an aggregate of the document: no place
            assert f.column is not None, (mode, str(f))
            if f.rule in EXEMPT:
                if f.rule != "SM004":
                    at = lines[f.line - 1][f.column - 1 :]
                    assert at.startswith("<") or f.column == 1, (mode, str(f))
                continue
            assert root is not None, str(f)
            expected = _expected(root, data[data.find(b"<?xml") :] if skip else data, f)
            assert expected is not None
            assert (f.line, f.column) == (expected[0] + skip, expected[1]), (mode, str(f))
    assert len({str(v) for v in seen.values()}) == 1, seen


# -- generated documents, one fault placed at random ---------------------------------------------

#: fault → (rule, the entry's extra markup with the fault, the path of the element holding it
#: from the entry, the attribute or None)
FAULTS: Final = {
    "SM305": ("<lastmod>2030-01-01</lastmod>", "s:lastmod", None),
    "SM307": ("<lastmod>1970-01-01</lastmod>", "s:lastmod", None),
    "SM301": ("<lastmod>2024/05/01</lastmod>", "s:lastmod", None),
    "SM401": ("<changefreq>Daily</changefreq>", "s:changefreq", None),
    "SM402": ("<priority>1.5</priority>", "s:priority", None),
    "SM403": ("<priority>.5</priority>", "s:priority", None),
    "IMG604": (
        "<image:image><image:loc>{site}/i.jpg</image:loc>"
        "<image:caption>A caption</image:caption></image:image>",
        "image:image/image:caption",
        None,
    ),
    "VID706": (
        "<video:video><video:thumbnail_loc>{site}/t.jpg</video:thumbnail_loc>"
        "<video:title>T</video:title><video:description>D</video:description>"
        "<video:player_loc>{loc}</video:player_loc></video:video>",
        "video:video/video:player_loc",
        None,
    ),
    "VID705": (
        "<video:video><video:thumbnail_loc>{site}/t.jpg</video:thumbnail_loc>"
        "<video:title>T</video:title><video:description>D</video:description>"
        "<video:content_loc>{site}/v.mp4</video:content_loc>"
        "<video:rating>6.0</video:rating></video:video>",
        "video:video/video:rating",
        None,
    ),
    "VID713": (
        "<video:video><video:thumbnail_loc>{site}/t.jpg</video:thumbnail_loc>"
        "<video:title>T</video:title><video:description>D</video:description>"
        "<video:content_loc>{site}/v.mp4</video:content_loc>"
        '<video:uploader info="https://other.example.org/u">U</video:uploader></video:video>',
        "video:video/video:uploader",
        "info",
    ),
    "NEWS804": (
        "<news:news><news:publication><news:name>N</news:name>"
        "<news:language>en-US</news:language></news:publication>"
        "<news:publication_date>2024-06-01</news:publication_date>"
        "<news:title>A title</news:title></news:news>",
        "news:news/news:publication/news:language",
        None,
    ),
    "NEWS806": (
        "<news:news><news:publication><news:name>N</news:name>"
        "<news:language>en</news:language></news:publication>"
        "<news:publication_date>2024-01-01</news:publication_date>"
        "<news:title>A title</news:title></news:news>",
        "news:news/news:publication_date",
        None,
    ),
    "HRE902": (
        '<xhtml:link rel="alternate" hreflang="en-UK" href="{loc}"/>',
        "xhtml:link",
        "hreflang",
    ),
}
#: Text a server prints before the XML (each ends its lines: the document starts a line).
JUNK: Final = [
    b"",
    b"Notice: Undefined index: page in /var/www/sitemap.php on line 3\n",
    b"\xef\xbb\xbfdebug: 12 ms\r\n\n",
    b"<html><body><h1>502 Bad Gateway</h1></body></html>\n",
]


def _document(entries: int, at: int, rule: str, noise: list[bool], pretty: bool) -> str:
    extra, _, _ = FAULTS[rule]
    nl, ind = ("\n", "  ") if pretty else ("", "")
    rows = []
    for i in range(entries):
        loc = f"{SITE}/p{i}"
        parts = [f"<loc>{loc}</loc>"]
        if i == at:
            parts.append(extra.format(site=SITE, loc=loc))
        elif noise[i % len(noise)]:
            parts.append("<lastmod>2024-05-01</lastmod>")
        body = nl.join(ind + ind + p for p in parts)
        rows.append(f"{ind}<url>{nl}{body}{nl}{ind}</url>")
    xmlns = " ".join(f'xmlns:{p}="{u}"' for p, u in NS.items() if p != "s")
    plain = not any(m in extra for m in ("image:", "video:", "news:", "xhtml:"))
    head = f'<urlset xmlns="{NS["s"]}"' + ("" if plain else " " + xmlns) + ">"
    decl = '<?xml version="1.0" encoding="UTF-8"?>'
    return decl + "\n" + head + nl + nl.join(rows) + nl + "</urlset>\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rule=st.sampled_from(sorted(FAULTS)),
    entries=st.integers(1, 5),
    at=st.integers(0, 4),
    noise=st.lists(st.booleans(), min_size=1, max_size=5),
    pretty=st.booleans(),
    mode=st.sampled_from([*MODES, "set"]),
    junk=st.sampled_from(JUNK),
)
def test_one_fault_anywhere_is_placed_at_its_element(
    rule: str, entries: int, at: int, noise: list[bool], pretty: bool, mode: str, junk: bytes
) -> None:
    """The finding of the fault is at lxml's line and column of its element (or attribute),
    pretty-printed or minified, in every mode, and after text a server printed before the
    XML (SM003): there in the original file's lines."""
    at %= entries
    text = _document(entries, at, rule, noise, pretty)
    data = text.encode()
    root = etree.fromstring(data)
    _, path, attr = FAULTS[rule]
    el = root[at].find(path, NS)
    assert el is not None
    line, column = _column(data, el, attr)
    expected = (line + junk.count(b"\n"), column)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "sitemap.xml"
        target.write_bytes(junk + data)
        targets = [target]
        if mode == "set":
            other = Path(tmp) / "other.xml"
            other.write_text(_document(2, 0, "SM305", [False], not pretty).replace("/p", "/q"))
            targets.append(other)
        tuning = MODES.get(mode, Tuning())
        report = validate(
            targets,
            published_at=[f"{SITE}/{t.name}" for t in targets],
            now=NOW,
            select=[rule],
            tuning=tuning,
        )
    mine = [f for f in report.findings if f.where == str(target)]
    assert _positions(mine, rule) == [expected], (text, [str(f) for f in report.findings])


# -- generated minified documents: two faulty elements on one line ---------------------------

_IMG = "<image:image><image:loc>{site}/i.jpg</image:loc></image:image>"
_VIDEO = (
    "<video:video><video:thumbnail_loc>{site}/t.jpg</video:thumbnail_loc>"
    "<video:title>T</video:title><video:description>D</video:description>"
    "<video:content_loc>{site}/v.mp4</video:content_loc>{extra}</video:video>"
)
#: name → (the entry's markup after its <loc>, [(rule, path from the entry, attribute)]):
#: each pair of faults shares the entry's one line when the document is minified.
PAIRS: Final = {
    "lastmod+priority": (
        "<lastmod>2024/05/01</lastmod><priority>1.5</priority>",
        [("SM301", "s:lastmod", None), ("SM402", "s:priority", None)],
    ),
    "empty changefreq+bad lastmod": (
        "<lastmod>2024-02-30</lastmod><changefreq></changefreq>",
        [("SM304", "s:lastmod", None), ("SM111", "s:changefreq", None)],
    ),
    "image without loc+bad image loc": (
        "<image:image><image:caption>C</image:caption></image:image>"
        "<image:image><image:loc>ftp://example.com/i.jpg</image:loc></image:image>",
        [("IMG601", "image:image[1]", None), ("IMG603", "image:image[2]/image:loc", None)],
    ),
    "dropped image, then an unknown child": (
        "<image:image><image:caption>C</image:caption></image:image>"
        "<image:image><image:loc>{site}/i.jpg</image:loc><image:size>1</image:size>"
        "</image:image>",
        [("IMG601", "image:image[1]", None), ("IMG605", "image:image[2]/image:size", None)],
    ),
    "video duration+rating": (
        _VIDEO.replace(
            "{extra}", "<video:duration>1.5</video:duration><video:rating>high</video:rating>"
        ),
        [
            ("VID704", "video:video/video:duration", None),
            ("VID705", "video:video/video:rating", None),
        ],
    ),
    "first video without title, second with a bad date": (
        "<video:video><video:thumbnail_loc>{site}/t.jpg</video:thumbnail_loc>"
        "<video:description>D</video:description>"
        "<video:content_loc>{site}/v.mp4</video:content_loc></video:video>"
        + _VIDEO.replace("{extra}", "<video:expiration_date>2024/01/01</video:expiration_date>"),
        [
            ("VID701", "video:video[1]", None),
            ("VID710", "video:video[2]/video:expiration_date", None),
        ],
    ),
    "second of two links: bad hreflang": (
        '<xhtml:link rel="alternate" hreflang="de" href="{site}/de"/>'
        '<xhtml:link rel="alternate" hreflang="en-UK-x-yy-zz-12345678901" href="{site}/en"/>'
        '<xhtml:link rel="self" hreflang="fr" href="{site}/fr"/>',
        [
            ("HRE902", "xhtml:link[2]", "hreflang"),
            ("HRE901", "xhtml:link[3]", "rel"),
        ],
    ),
    "news: bad language+bad keywords element": (
        "<news:news><news:publication><news:name>N</news:name>"
        "<news:language>english</news:language></news:publication>"
        "<news:publication_date>2024-06-01</news:publication_date>"
        "<news:title>T</news:title><news:stock_tickers>X</news:stock_tickers></news:news>",
        [
            ("NEWS808", "news:news/news:stock_tickers", None),
            ("NEWS804", "news:news/news:publication/news:language", None),
        ],
    ),
}


def _minified_findings(
    data: bytes, mode: str, rules: list[str]
) -> tuple[list[tuple[str, int | None, int | None]], list[str]]:
    """(rule, line, column) of the findings of ``rules`` in ``data`` validated in ``mode``
    (in a set: beside a clean sitemap), and the report."""
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "sitemap.xml"
        target.write_bytes(data)
        targets = [target]
        if mode == "set":
            other = Path(tmp) / "other.xml"
            other.write_text(_document(2, 0, "SM305", [False], True).replace("/p", "/q"))
            targets.append(other)
        report = validate(
            targets,
            published_at=[f"{SITE}/{t.name}" for t in targets],
            now=NOW,
            select=rules,
            tuning=MODES.get(mode, Tuning()),
        )
    mine = sorted((f.rule, f.line, f.column) for f in report.findings if f.where == str(target))
    return mine, [str(f) for f in report.findings]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pair=st.sampled_from(sorted(PAIRS)),
    entries=st.integers(1, 4),
    at=st.integers(0, 3),
    mode=st.sampled_from([*MODES, "set"]),
)
def test_two_faults_on_one_line_are_each_at_their_element(
    pair: str, entries: int, at: int, mode: str
) -> None:
    """A minified entry with two faulty elements: each finding at its own element's line
    and column (not the first tag of the line), images and videos counted in document
    order (a dropped one does not shift the next), in every mode."""
    at %= entries
    extra, faults = PAIRS[pair]
    xmlns = " ".join(f'xmlns:{p}="{u}"' for p, u in NS.items() if p != "s")
    rows = []
    for i in range(entries):
        loc = f"{SITE}/p{i}"
        body = extra.format(site=SITE) if i == at else _IMG.format(site=SITE)
        rows.append(f"<url><loc>{loc}</loc>{body}</url>")
    text = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{NS["s"]}" {xmlns}>' + "".join(rows) + "</urlset>\n"
    )
    data = text.encode()
    root = etree.fromstring(data)
    expected = []
    for rule, path, attr in faults:
        el = root[at] if path == "." else root[at].find(path, NS)
        assert el is not None, path
        expected.append((rule, *_column(data, el, attr)))
    rules = sorted({r for r, _, _ in faults})
    mine, report = _minified_findings(data, mode, rules)
    assert mine == sorted(expected), (text, report)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kinds=st.lists(st.sampled_from(["ok", "SM103", "SM111"]), min_size=1, max_size=6),
    mode=st.sampled_from([*MODES, "set"]),
)
def test_entries_no_loc_names_are_placed_on_a_minified_line(kinds: list[str], mode: str) -> None:
    """An entry without a <loc> (SM103) and an empty <loc> (SM111) have no loc to name
    them by: on a minified line each still sits at its own element (the k-th finding of
    its rule at the k-th such element), not at the line's first tag."""
    bodies = {
        "ok": "<url><loc>{site}/p{i}</loc></url>",
        "SM103": "<url><lastmod>2024-05-01</lastmod></url>",
        "SM111": "<url><loc></loc></url>",
    }
    rows = "".join(bodies[k].format(site=SITE, i=i) for i, k in enumerate(kinds))
    text = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS["s"]}">{rows}</urlset>\n'
    data = text.encode()
    root = etree.fromstring(data)
    expected = sorted(
        (k, *_column(data, root[i] if k == "SM103" else root[i][0]))
        for i, k in enumerate(kinds)
        if k != "ok"
    )
    mine, report = _minified_findings(data, mode, ["SM103", "SM111"])
    assert mine == expected, (text, report)
