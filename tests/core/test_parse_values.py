"""No value is lost or changed (issue #11 §3, and the date and priority parts of §4).

What the document holds, the record holds: every W3C Datetime form with its fraction, a
date off the grammar that is still a date, a priority as written; each field of every
extension the same way. Read with the scanner and without it, whole and in pieces; then
written and read again.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapkit.core.finding import Finding
from sitemapkit.core.grammar import decimal_text
from sitemapkit.core.model import (
    Alternate,
    Image,
    InvalidValue,
    News,
    SitemapRef,
    Url,
    Video,
    priority_text,
)
from sitemapkit.core.parse import SitemapParser
from sitemapkit.core.serialize import dumps, url_entry
from sitemapkit.core.trusted import kept_dates, trusted_news, trusted_ref, trusted_url
from sitemapkit.core.w3cdate import GRAMMAR, format_lastmod, instant, written, zulu
from sitemapkit.errors import ParseError

from ..conftest import cli

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
ROOT = (
    f'<urlset xmlns="{SM}"'
    ' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'
    ' xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"'
    ' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
    ' xmlns:xhtml="http://www.w3.org/1999/xhtml">'
)
DECL = '<?xml version="1.0" encoding="UTF-8"?>\n'
U = "https://example.com/"


def read(data: bytes, cuts: Sequence[int] = (), **kw: object) -> tuple[list[object], list[Finding]]:
    """The records and findings of ``data`` fed in the pieces ``cuts`` make."""
    parser = SitemapParser(**kw)  # type: ignore[arg-type]
    out: list[object] = []
    bounds = [0, *sorted(set(cuts)), len(data)]
    for a, b in itertools.pairwise(bounds):
        out += parser.feed(data[a:b])
    out += parser.close()
    return out, parser.findings


def urlset(body: str) -> bytes:
    return (DECL + ROOT + "\n" + body + "\n</urlset>\n").encode()


# -- values as documents write them, and what the record holds ------------------------------

_INSTANTS = st.datetimes(min_value=dt.datetime(1995, 1, 1), max_value=dt.datetime(2030, 12, 31))
_ZONES = st.one_of(
    st.just("Z"),
    st.builds(
        lambda sign, m: f"{sign}{m // 60:02d}:{m % 60:02d}",
        st.sampled_from("+-"),
        st.integers(0, 14 * 60).filter(lambda m: m <= 13 * 60 + 59 or m == 14 * 60),
    ),
)


@st.composite
def w3c_dates(draw: st.DrawFn, coarsest: int = 1) -> str:
    """A W3C Datetime of granularity ``coarsest`` to 6 (fractions of 1 to 12 digits)."""
    at = draw(_INSTANTS)
    form = draw(st.integers(coarsest, 6))
    text = [f"{at.year:04d}", f"{at.year:04d}-{at.month:02d}", at.date().isoformat()][
        min(form, 3) - 1
    ]
    if form >= 4:
        text += f"T{at.hour:02d}:{at.minute:02d}"
        if form >= 5:
            text += f":{at.second:02d}"
        if form == 6:
            text += "." + draw(st.text(alphabet="0123456789", min_size=1, max_size=12))
        text += draw(_ZONES)
    return text


@st.composite
def usable_dates(draw: st.DrawFn) -> str:
    """A date off the W3C grammar that still names a day or an instant (kept, SM301)."""
    at = draw(_INSTANTS)
    sep = draw(st.sampled_from(["T", "t", " "]))
    time = f"{at.hour:02d}:{at.minute:02d}" + draw(st.sampled_from(["", f":{at.second:02d}"]))
    zone = draw(st.sampled_from(["", "z", "+0100", "-0530", "+02", "Z"]))
    if sep == "T" and zone == "Z":
        zone = ""  # that one is W3C
    shape = draw(st.sampled_from(["time", "date+zone"]))
    if shape == "date+zone":
        return at.date().isoformat() + (zone or "Z")
    return f"{at.date().isoformat()}{sep}{time}{zone}"


_PRIORITIES = st.one_of(
    st.decimals(0, 1, places=2).map(str),
    st.decimals(0, 1, places=4).map(str),
    st.sampled_from(["0.85", "0.555", ".5", "1", "0", "0.850", "1.00", "0.0", "0.5"]),
)
_FREQS = st.sampled_from(["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"])
_SPACE = st.sampled_from(["", "", " ", "\n  ", "\t"])
_PATH = st.text(alphabet="abcxyz019-._~/é", max_size=12)
_TEXT = st.text(alphabet="Ab z&<>'\"é1", min_size=1, max_size=12).filter(lambda t: t.strip())


def element(tag: str, value: str | None, pad: str = "") -> str:
    return "" if value is None else f"<{tag}>{pad}{escape(value)}{pad}</{tag}>"


@st.composite
def entries(draw: st.DrawFn) -> tuple[str, Url]:
    """One ``<url>`` with random values in every field, and the record it must give."""
    path = draw(_PATH)
    loc = U + path
    pad = draw(_SPACE)
    lastmod = draw(st.none() | w3c_dates() | usable_dates())
    freq = draw(st.none() | _FREQS)
    prio = draw(st.none() | _PRIORITIES)
    xml = [f"<url><loc>{pad}{escape(loc)}{pad}</loc>"]
    xml.append(element("lastmod", lastmod, pad))
    xml.append(element("changefreq", freq))
    xml.append(element("priority", prio))
    alternates: list[Alternate] = []
    for lang in draw(st.lists(st.sampled_from(["en", "de-AT", "x-default"]), max_size=2)):
        href = U + lang + "/" + draw(_PATH)
        xml.append(f'<xhtml:link rel="alternate" hreflang="{lang}" href={quoteattr(href)}/>')
        alternates.append(Alternate(lang, href))
    images: list[Image] = []
    for _ in range(draw(st.integers(0, 2))):
        img, title = U + "i/" + draw(_PATH), draw(st.none() | _TEXT)
        xml.append(
            f"<image:image><image:loc>{escape(img)}</image:loc>"
            f"{element('image:title', title)}</image:image>"
        )
        images.append(Image(img, title=title))
    videos: list[Video] = []
    if draw(st.booleans()):
        title, pub = draw(_TEXT), draw(st.none() | w3c_dates(coarsest=1))
        rating = draw(st.none() | st.decimals(0, 5, places=3).map(str))
        xml.append(
            "<video:video>"
            f"<video:thumbnail_loc>{U}t.jpg</video:thumbnail_loc>"
            f"{element('video:title', title)}<video:description>d</video:description>"
            f"<video:content_loc>{U}v.mp4</video:content_loc>"
            f"{element('video:rating', rating)}{element('video:publication_date', pub)}"
            "</video:video>"
        )
        video = Video(U + "t.jpg", title, "d", U + "v.mp4", rating=rating)  # type: ignore[arg-type]
        # the date kept as written (Z as +00:00), as a lastmod is
        videos.append(kept_dates(video, {"publication_date": zulu(pub)}) if pub else video)
    news = None
    if draw(st.booleans()):
        title, pub = draw(_TEXT), draw(w3c_dates(coarsest=1))
        xml.append(
            "<news:news><news:publication><news:name>P</news:name>"
            "<news:language>en</news:language></news:publication>"
            f"{element('news:publication_date', pub)}{element('news:title', title)}</news:news>"
        )
        # the date kept as written (Z as +00:00); the title as the model holds it
        news = trusted_news("P", "en", zulu(pub), News("P", "en", "2000-01-01", title).title)
    xml.append("</url>")
    # the record: the loc as a URI, the lastmod as written (``Z`` as +00:00 in a W3C value),
    # the priority as its number; the extensions as their model objects build them
    kept = None
    if lastmod is not None:
        kept = zulu(lastmod) if _is_w3c(lastmod) else lastmod
    base = Url(loc, changefreq=freq, priority=prio)
    record = trusted_url(
        base.loc,
        kept,
        base.changefreq,
        base.priority,  # type: ignore[arg-type]
        tuple(images),
        tuple(videos),
        news,
        tuple(alternates),
    )
    return "".join(xml), record


def _is_w3c(text: str) -> bool:
    return GRAMMAR.fullmatch(text) is not None


@settings(max_examples=120, deadline=None)
@given(st.lists(entries(), min_size=1, max_size=5), st.data())
def test_what_the_document_holds_the_record_holds(
    items: list[tuple[str, Url]], data: st.DataObject
) -> None:
    doc = urlset("\n".join(xml for xml, _ in items))
    expected = [record for _, record in items]
    cuts = data.draw(st.lists(st.integers(0, len(doc)), max_size=6))
    results = []
    for fast in (True, False):
        for pieces in ([], cuts):
            records, findings = read(doc, pieces, fast=fast)
            assert records == expected
            results.append(findings)
            # nothing was lost: no finding of the read is an error
            assert [f for f in findings if f.severity == "error"] == []
    assert all(r == results[0] for r in results)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(_PATH, st.none() | w3c_dates() | usable_dates()), min_size=1))
def test_an_index_keeps_its_lastmods_as_written(items: list[tuple[str, str | None]]) -> None:
    body = "".join(
        f"<sitemap><loc>{escape(U + p)}</loc>{element('lastmod', lm)}</sitemap>" for p, lm in items
    )
    doc = f'{DECL}<sitemapindex xmlns="{SM}">{body}</sitemapindex>'.encode()
    expected = [
        trusted_ref(
            SitemapRef(U + p).loc,
            None if lm is None else zulu(lm) if _is_w3c(lm) else lm,
        )
        for p, lm in items
    ]
    for fast in (True, False):
        assert read(doc, fast=fast)[0] == expected


# -- read, write, read ------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(st.lists(entries(), min_size=1, max_size=5))
def test_read_write_read_gives_the_same_records(items: list[tuple[str, Url]]) -> None:
    doc = urlset("\n".join(xml for xml, _ in items))
    first, _ = read(doc)
    refused = []
    for r in first:
        assert isinstance(r, Url)
        try:
            format_lastmod(r.lastmod) if r.lastmod is not None else None
        except ValueError as exc:
            refused.append(str(exc))
    if refused:
        # the writer refuses what it cannot write without inventing or losing something: a
        # date coarser than a day (the XSD refuses it too), a date off the W3C grammar
        assert all(re.search("coarser than a day|is not a W3C Datetime", m) for m in refused)
        with pytest.raises(InvalidValue, match=re.escape(refused[0])):
            dumps(first)  # type: ignore[arg-type]
        return
    again, findings = read(dumps(first, keep_deprecated=True))  # type: ignore[arg-type]
    assert [f for f in findings if f.severity == "error"] == []
    # the writer's lossless normalisation only: hh:mm gains :00, Z is +00:00
    assert again == [
        trusted_url(
            r.loc,
            None if r.lastmod is None else format_lastmod(r.lastmod),
            r.changefreq,
            r.priority,
            r.images,
            r.videos,
            r.news,
            r.alternates,
        )
        for r in first
        if isinstance(r, Url)
    ]


# -- what reading says about each kind of value --------------------------------------------


@pytest.mark.parametrize(
    ("value", "kept", "rule"),
    [
        ("2024-03-22T08:13:58.345Z", "2024-03-22T08:13:58.345+00:00", None),
        ("2023-11-02T14:05:09.123456789-05:00", "2023-11-02T14:05:09.123456789-05:00", None),
        ("2011-06-27T00:00:00.000Z", "2011-06-27T00:00:00.000+00:00", None),
        ("2024-05-17T10:30+02:00", "2024-05-17T10:30+02:00", None),  # SM303 is the validator's
        ("2024", "2024", "SM302"),
        ("2024-05", "2024-05", "SM302"),
        ("2024-05-17T10:30:00", "2024-05-17T10:30:00", "SM301"),
        ("2024-05-17 10:30:00", "2024-05-17 10:30:00", "SM301"),
        ("2024-05-17t10:30:00z", "2024-05-17t10:30:00z", "SM301"),
        ("2024-05-17T10:30:00+0100", "2024-05-17T10:30:00+0100", "SM301"),
        ("2024-05-17Z", "2024-05-17Z", "SM301"),
    ],
)
def test_a_date_is_kept_as_written_with_a_warning_when_off_the_grammar(
    value: str, kept: str, rule: str | None
) -> None:
    doc = urlset(f"<url><loc>{U}</loc><lastmod> {value} </lastmod></url>")
    for fast in (True, False):
        records, findings = read(doc, fast=fast)
        assert records == [trusted_url(U, kept)]
        assert [(f.rule, f.severity) for f in findings] == ([(rule, "warning")] if rule else [])
    # the validator keeps the catalogue's severities: SM301 is an error there
    _, findings = read(doc, purpose="validate")
    assert [(f.rule, f.severity) for f in findings] == (
        [(rule, "error" if rule == "SM301" else "warning")] if rule else []
    )


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("May 1, 2024", "SM301"),
        ("yesterday", "SM301"),
        ("1714557600", "SM301"),
        ("2024/05/01", "SM301"),
        ("20240501", "SM301"),
        ("2024-05-01T10:00:00 +02:00", "SM301"),
        ("2023-02-29", "SM304"),
        ("2024-05-17 25:00", "SM304"),
        ("2024-05-01T10:00:00+15:00", "SM304"),
    ],
)
def test_what_is_not_a_date_is_dropped_as_an_error(value: str, rule: str) -> None:
    records, findings = read(urlset(f"<url><loc>{U}</loc><lastmod>{value}</lastmod></url>"))
    assert records == [Url(U)]
    assert [(f.rule, f.severity) for f in findings] == [(rule, "error")]


def test_an_empty_lastmod_is_absent_with_a_warning() -> None:
    for tag in ("<lastmod/>", "<lastmod></lastmod>", "<lastmod> </lastmod>"):
        for fast in (True, False):
            records, findings = read(urlset(f"<url><loc>{U}</loc>{tag}</url>"), fast=fast)
            assert records == [Url(U)]
            assert [(f.rule, f.severity) for f in findings] == [("SM111", "warning")]
    doc = f'{DECL}<sitemapindex xmlns="{SM}"><sitemap><loc>{U}a.xml</loc><lastmod/>'
    records, findings = read((doc + "</sitemap></sitemapindex>").encode())
    assert records == [SitemapRef(U + "a.xml")]
    assert [(f.rule, f.severity) for f in findings] == [("SM111", "warning")]


def test_strict_reading_gives_the_writers_form_or_refuses() -> None:
    """Strict reading feeds the writer: it cannot emit a coarse date or one off the grammar."""
    doc = urlset(f"<url><loc>{U}</loc><lastmod>2024-05-17T10:30Z</lastmod></url>")
    assert read(doc, strict=True)[0] == [Url(U, lastmod="2024-05-17T10:30:00+00:00")]
    for value, rule in (("2024-05", "SM302"), ("2024-05-17T10:30:00", "SM301")):
        doc = urlset(f"<url><loc>{U}</loc><lastmod>{value}</lastmod></url>")
        with pytest.raises(ParseError, match=rule):
            read(doc, strict=True)


def test_every_kept_form_gives_the_same_records_however_the_bytes_are_split() -> None:
    values = ["2024", "2024-05", "2024-05-17T10:30+02:00", "2024-05-17 10:30", "2024-05-01Z"]
    values += ["2024-03-22T08:13:58.345Z", "", "May 1", "2024-02-30"]
    body = "".join(
        f"<url><loc>{U}{i}</loc><lastmod>{v}</lastmod><priority>0.85</priority></url>"
        for i, v in enumerate(values)
    )
    doc = urlset(body)
    whole = read(doc)
    assert [r.lastmod for r in whole[0]] == [  # type: ignore[attr-defined]
        "2024",
        "2024-05",
        "2024-05-17T10:30+02:00",
        "2024-05-17 10:30",
        "2024-05-01Z",
        "2024-03-22T08:13:58.345+00:00",
        None,
        None,
        None,
    ]
    assert {r.priority for r in whole[0]} == {0.85}  # type: ignore[attr-defined]
    assert read(doc, list(range(len(doc)))) == whole
    assert read(doc, list(range(0, len(doc), 7)), fast=False) == whole


# -- the writer: nothing it writes says less than the value did -----------------------------


def test_the_serializer_writes_a_records_date_in_the_writers_form_or_refuses_it() -> None:
    assert (
        "<lastmod>2024-05-17T10:30:00+02:00</lastmod>"
        in url_entry(trusted_url(U, "2024-05-17T10:30+02:00"))[0]
    )
    line = url_entry(trusted_url(U, "2024-03-22T08:13:58.345+00:00"))[0]
    assert "<lastmod>2024-03-22T08:13:58.345+00:00</lastmod>" in line
    for kept in ("2024-05", "2024-05-17T10:30:00", "2024-05-17 10:30:00+02:00"):
        with pytest.raises(InvalidValue, match="lastmod"):
            url_entry(trusted_url(U, kept))
    with pytest.raises(InvalidValue, match=r"sitemap\.lastmod: '2024' is coarser"):
        dumps([trusted_ref(U + "a.xml", "2024")])


@given(st.one_of(w3c_dates(coarsest=3), usable_dates()))
def test_written_is_format_lastmod_for_every_value_a_record_holds(text: str) -> None:
    kept = zulu(text) if _is_w3c(text) else text
    try:
        expected = format_lastmod(kept)
    except ValueError:
        with pytest.raises(ValueError):
            written(kept)
        return
    assert written(kept) == expected
    assert instant(expected) == instant(kept)


@given(st.integers(0, 9).flatmap(lambda places: st.decimals(0, 1, places=places)))
def test_a_priority_is_written_as_its_shortest_decimal(value: Decimal) -> None:
    text = priority_text(str(value))
    assert "e" not in text.lower() and "." in text and text[-1] != "." and text[0] != "."
    assert float(text) == float(value)  # the same number: nothing rounded
    # the shortest: one digit less after the point is another number (or none is left)
    head, _, tail = text.partition(".")
    assert len(tail) == 1 or float(f"{head}.{tail[:-1]}") != float(value)


def test_priorities_are_kept_and_written_as_given() -> None:
    assert [priority_text(p) for p in ("0.85", ".5", "1", "0.850", "0.555", 0.25)] == [
        "0.85",
        "0.5",
        "1.0",
        "0.85",
        "0.555",
        "0.25",
    ]
    assert decimal_text(1e-7) == "0.0000001"
    records, findings = read(urlset(f"<url><loc>{U}</loc><priority>0.555</priority></url>"))
    assert records == [Url(U, priority="0.555")] and findings == []
    assert b"<priority>0.555</priority>" in dumps(records)  # type: ignore[arg-type]
    for bad in ("1.5", "-0.1", "5e-1", "0,5", "NaN"):
        records, findings = read(urlset(f"<url><loc>{U}</loc><priority>{bad}</priority></url>"))
        assert records == [Url(U)]
        assert [(f.rule, f.severity) for f in findings] == [("SM402", "error")]


def test_a_loc_that_is_not_a_url_drops_the_entry() -> None:
    body = "".join(
        f"<url><loc>{loc}</loc></url>"
        for loc in (U + "a", "http://", "https://bad host.example/x", 'https://a"b.example/', U)
    )
    records, findings = read(urlset(body))
    assert [r.loc for r in records] == [U + "a", U]  # type: ignore[attr-defined]
    assert [(f.rule, f.severity) for f in findings] == [
        ("SM201", "error"),
        *[("SM204", "error")] * 2,
    ]


@pytest.mark.parametrize(
    ("value", "kept", "finding"),
    [
        ("2024-05-01T10:00:00.250+01:00", "2024-05-01T10:00:00.250+01:00", None),
        ("2024-05-01T10:00Z", "2024-05-01T10:00+00:00", None),
        ("2008-12-23", "2008-12-23", None),
        ("2024-05", "2024-05", ("SM302", "warning")),
        ("2024-05-01 10:30", "2024-05-01 10:30", ("NEWS805", "warning")),
        ("May 1, 2024", None, ("NEWS805", "error")),
    ],
)
def test_a_news_date_is_kept_as_written_and_only_what_is_no_date_drops_the_news(
    value: str, kept: str | None, finding: tuple[str, str] | None
) -> None:
    """A news date is kept as the document wrote it, as a lastmod is (issue #11 §3): a
    coarse or usable off-spec one with a warning; only a value that is no date drops the
    news, as an error. The validator keeps the catalogue's severities."""
    news = (
        "<news:news><news:publication><news:name>P</news:name><news:language>en</news:language>"
        f"</news:publication><news:publication_date>{value}</news:publication_date>"
        "<news:title>T</news:title></news:news>"
    )
    data = urlset(f"<url><loc>{U}</loc>{news}</url>")
    records, findings = read(data)
    assert records == [Url(U, news=trusted_news("P", "en", kept, "T") if kept else None)]
    assert [(f.rule, f.severity) for f in findings] == ([finding] if finding else [])
    _, checked = read(data, purpose="validate")
    assert [f.rule for f in checked] == ([finding[0]] if finding else [])
    if finding is not None and finding[0] == "NEWS805":
        assert checked[0].severity == "error"


# -- the command: exit 1 only when something was dropped ------------------------------------


@pytest.mark.parametrize(
    ("lastmod", "priority", "code", "written"),
    [
        ("2024-03-22T08:13:58.345Z", "0.85", 0, ("2024-03-22T08:13:58.345+00:00", 0.85)),
        ("2024-05", "1", 0, ("2024-05", 1.0)),
        ("2024-05-17T10:30:00", ".5", 0, ("2024-05-17T10:30:00", 0.5)),
        ("yesterday", "0.555", 1, (None, 0.555)),
        ("2024-05-01", "1.5", 1, ("2024-05-01", None)),
    ],
)
def test_read_exits_1_only_when_a_value_was_dropped(
    tmp_path: Path, lastmod: str, priority: str, code: int, written: tuple[object, object]
) -> None:
    path = tmp_path / "s.xml"
    path.write_bytes(
        urlset(
            f"<url><loc>{U}</loc><lastmod>{lastmod}</lastmod><priority>{priority}</priority></url>"
        )
    )
    got, out, err = cli(["read", str(path), "--format", "jsonl"])
    record = json.loads(out)
    assert (got, record["lastmod"], record["priority"]) == (code, *written), err


def test_a_feed_date_the_model_cannot_hold_is_dropped_and_the_entry_kept() -> None:
    """An Atom entry's Url is built by the model: a coarse <updated> is one error, the
    entry stays (never an "invalid link" for a date), and a fraction is kept."""
    doc = (
        b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">'
        b'<entry><link href="https://e.com/a"/><updated>2024-05</updated></entry>'
        b'<entry><link href="https://e.com/b"/><updated>2024-05-01T10:00:00.5z</updated></entry>'
        b"</feed>"
    )
    records, findings = read(doc)
    assert records == [
        Url("https://e.com/a"),
        Url("https://e.com/b", lastmod="2024-05-01T10:00:00.5Z"),
    ]
    assert [(f.rule, f.severity) for f in findings] == [("SM302", "error")]
