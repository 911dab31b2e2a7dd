"""Tests for sitemapkit.lint.xsd: offline validation against the bundled official schemas."""

from __future__ import annotations

import hashlib
import os
import re
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from importlib.resources import files
from pathlib import Path

import pytest
from lxml import etree

from sitemapkit.errors import ParseError, UnsafeXMLError
from sitemapkit.lint import xsd
from sitemapkit.lint.xsd import load_schema, xsd_errors

from .. import conftest

SCHEMA_FILES = (
    "sitemap.xsd",
    "siteindex.xsd",
    "sitemap-image.xsd",
    "sitemap-video.xsd",
    "sitemap-news.xsd",
    "xhtml1-strict.xsd",
    "xml.xsd",
)

NAMESPACES = (
    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
    'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" '
    'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml"'
)


def urlset(body: str, extra: str = "") -> bytes:
    return conftest.urlset(
        body, ns=NAMESPACES.removeprefix(f'xmlns="{conftest.SM}"') + extra
    ).encode()


# Every tag Google currently documents for each extension, in schema order.
FULL_URLSET = urlset("""\
  <url>
    <loc>https://example.com/en/grilling</loc>
    <lastmod>2024-05-01T10:00:00+00:00</lastmod>
    <changefreq>weekly</changefreq>
    <priority>0.8</priority>
    <image:image>
      <image:loc>https://example.com/img/steak.jpg</image:loc>
    </image:image>
    <image:image>
      <image:loc>https://example.com/img/grill.jpg</image:loc>
    </image:image>
    <video:video>
      <video:thumbnail_loc>https://example.com/thumbs/123.jpg</video:thumbnail_loc>
      <video:title>Grilling steaks for summer</video:title>
      <video:description>Perfectly done steaks every time &amp; how.</video:description>
      <video:content_loc>https://example.com/video/123.mp4</video:content_loc>
      <video:player_loc>https://example.com/videoplayer.php?video=123</video:player_loc>
      <video:duration>600</video:duration>
      <video:expiration_date>2030-11-05T19:20:30+08:00</video:expiration_date>
      <video:rating>4.2</video:rating>
      <video:view_count>12345</video:view_count>
      <video:publication_date>2024-04-01T19:20:30+08:00</video:publication_date>
      <video:tag>steak</video:tag>
      <video:tag>meat</video:tag>
      <video:family_friendly>yes</video:family_friendly>
      <video:restriction relationship="allow">IE GB US CA</video:restriction>
      <video:requires_subscription>yes</video:requires_subscription>
      <video:uploader info="https://example.com/users/grilly">GrillyMcGrillerson</video:uploader>
      <video:platform relationship="allow">web tv</video:platform>
      <video:live>no</video:live>
    </video:video>
    <xhtml:link rel="alternate" hreflang="en" href="https://example.com/en/grilling"/>
    <xhtml:link rel="alternate" hreflang="de-CH" href="https://example.com/de-ch/grillieren"/>
    <xhtml:link rel="alternate" hreflang="x-default" href="https://example.com/grilling"/>
  </url>
  <url>
    <loc>https://example.com/business/article55.html</loc>
    <lastmod>2024-05-01</lastmod>
    <news:news>
      <news:publication>
        <news:name>The Example Times</news:name>
        <news:language>en</news:language>
      </news:publication>
      <news:publication_date>2024-05-01T10:00:00+02:00</news:publication_date>
      <news:title>Companies A, B in Merger Talks</news:title>
    </news:news>
  </url>""")

SITEMAPINDEX = b"""\
<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap>
    <loc>https://example.com/sitemap-1.xml.gz</loc>
    <lastmod>2024-05-01T10:00:00+00:00</lastmod>
  </sitemap>
  <sitemap>
    <loc>https://example.com/sitemap-2.xml.gz</loc>
  </sitemap>
</sitemapindex>
"""

MINIMAL_VIDEO = """\
      <video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>
      <video:title>Title</video:title>
      <video:description>Description</video:description>
      <video:content_loc>https://example.com/v.mp4</video:content_loc>"""


def single_url(inner: str) -> str:
    return f"  <url>\n    <loc>https://example.com/page</loc>\n{inner}\n  </url>"


@pytest.fixture
def fresh_schema() -> Iterator[None]:
    """Make the next load_schema() compile from scratch, and leave a fresh cache behind."""
    xsd._compile.cache_clear()
    yield
    xsd._compile.cache_clear()


# -- valid documents ---------------------------------------------------------------------------


def test_urlset_with_image_video_news_and_hreflang_is_valid() -> None:
    assert xsd_errors(FULL_URLSET) == []
    assert load_schema().validate(etree.fromstring(FULL_URLSET))


def test_sitemapindex_is_valid() -> None:
    assert xsd_errors(SITEMAPINDEX) == []
    assert load_schema().validate(etree.fromstring(SITEMAPINDEX))


def test_video_tags_google_no_longer_documents_are_still_declared() -> None:
    # The schema predates Google's 2022 trim; the rules, not the XSD, warn about these.
    document = urlset(
        single_url(
            "    <video:video>\n"
            "      <video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>\n"
            "      <video:title>Title</video:title>\n"
            "      <video:description>Description</video:description>\n"
            '      <video:player_loc allow_embed="yes" autoplay="ap=1">'
            "https://example.com/p?v=1</video:player_loc>\n"
            '      <video:content_segment_loc duration="60">https://example.com/s1.mp4'
            "</video:content_segment_loc>\n"
            "      <video:category>Grilling</video:category>\n"
            '      <video:gallery_loc title="Grills">https://example.com/g</video:gallery_loc>\n'
            '      <video:price currency="EUR" type="rent" resolution="HD">1.99</video:price>\n'
            "      <video:tvshow><video:show_title>Grill</video:show_title>"
            "<video:video_type>full</video:video_type></video:tvshow>\n"
            '      <video:id type="url">https://example.com/id/1</video:id>\n'
            "    </video:video>\n"
            "    <image:image><image:loc>https://example.com/i.jpg</image:loc>"
            "<image:caption>c</image:caption><image:geo_location>Limerick, Ireland"
            "</image:geo_location><image:title>t</image:title>"
            "<image:license>https://example.com/licence</image:license></image:image>"
        )
    )
    assert xsd_errors(document) == []


def test_tree_and_element_inputs_are_accepted() -> None:
    root = etree.fromstring(FULL_URLSET)
    assert xsd_errors(root) == []
    assert xsd_errors(root.getroottree()) == []


# -- invalid documents -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "extra", "element", "detail"),
    [
        pytest.param(
            single_url("    <priority>1.5</priority>"), "", "'priority'", "1.5", id="priority"
        ),
        pytest.param(
            single_url("    <lastmod>2024-05-01T10:00</lastmod>"),
            "",
            "'lastmod'",
            "2024-05-01T10:00",
            id="lastmod-without-seconds",
        ),
        pytest.param(
            single_url(
                f"    <video:video>\n{MINIMAL_VIDEO}\n"
                "      <video:duration>28801</video:duration>\n    </video:video>"
            ),
            "",
            "'video:duration'",
            "28801",
            id="video-duration",
        ),
        pytest.param(
            single_url(
                "    <news:news>\n      <news:publication><news:name>N</news:name>"
                "<news:language>en</news:language></news:publication>\n"
                "      <news:publication_date>2024-05-01</news:publication_date>\n"
                "    </news:news>"
            ),
            "",
            "'news:news'",
            "news:title",
            id="news-without-title",
        ),
        pytest.param(
            single_url("    <mobile:mobile/>"),
            ' xmlns:mobile="http://www.google.com/schemas/sitemap-mobile/1.0"',
            "'{http://www.google.com/schemas/sitemap-mobile/1.0}mobile'",
            "No matching global element declaration",
            id="unknown-extension",
        ),
    ],
)
def test_schema_violation_names_the_element(
    body: str, extra: str, element: str, detail: str
) -> None:
    document = urlset(body, extra)
    errors = xsd_errors(document)
    assert len(errors) == 1
    line, column, message = errors[0]
    assert message.startswith(f"Element {element}:")
    assert detail in message
    # The position is the offending element's start tag.
    tag = element.strip("'").replace(
        "{http://www.google.com/schemas/sitemap-mobile/1.0}", "mobile:"
    )
    assert re.match(f"<{tag}[ />]", document.decode().splitlines()[line - 1][column - 1 :])
    assert not load_schema().validate(etree.fromstring(document))


def test_each_error_gets_its_own_column_on_a_one_line_document() -> None:
    document = (
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>https://example.com/a</loc><priority>2</priority></url>"
        b"<url><loc>https://example.com/b</loc><changefreq>often</changefreq></url></urlset>"
    )
    errors = xsd_errors(document)
    assert [(line, column) for line, column, _ in errors] == [
        (1, document.index(b"<priority>") + 1),
        (1, document.index(b"<changefreq>") + 1),
    ]
    assert "'priority'" in errors[0][2]
    assert "'changefreq'" in errors[1][2]


def test_tree_input_reports_lines_without_columns() -> None:
    document = urlset(single_url("    <priority>1.5</priority>"))
    [(line, column, message)] = xsd_errors(etree.fromstring(document))
    assert (line, column) == (5, 0)
    assert "'priority'" in message


def test_column_counts_characters_not_bytes() -> None:
    document = urlset(
        "  <url><loc>https://example.com/%C3%BC</loc><!-- ü --><priority>9</priority></url>"
    )
    [(line, column, _)] = xsd_errors(document)
    text = document.decode().splitlines()[line - 1]
    assert column == text.index("<priority>") + 1


def test_an_extension_element_does_not_make_a_valid_document() -> None:
    # The combined schema declares image:image and xhtml:html globally; only sitemap roots pass.
    for document in (
        b'<image:image xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
        b"<image:loc>https://example.com/i.jpg</image:loc></image:image>",
        b'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body/></html>',
        b'<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"/>',
    ):
        [(line, column, message)] = xsd_errors(document)
        assert (line, column) == (1, 1)
        assert "No matching global declaration available for the validation root" in message
        assert "'urlset' or 'sitemapindex'" in message


def test_empty_urlset_is_an_xsd_error() -> None:
    [(_, _, message)] = xsd_errors(urlset(""))
    assert message.startswith("Element 'urlset': Missing child element(s).")


def test_malformed_bytes_raise_parse_error_with_position() -> None:
    with pytest.raises(ParseError) as info:
        xsd_errors(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n<url></urlset>')
    assert (info.value.line, info.value.column) == (2, 15)
    assert "tag mismatch" in info.value.message


def test_external_entities_are_not_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-MARKER")
    document = (
        f'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY x SYSTEM "{secret.as_uri()}">]>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://example.com/&x;</loc><priority>&x;</priority></url></urlset>"
    ).encode()
    with pytest.raises(UnsafeXMLError) as info:
        xsd_errors(document)
    assert info.value.line == 3
    assert "'&x;'" in info.value.message
    assert "TOP-SECRET-MARKER" not in str(info.value)


def test_a_doctype_without_entities_is_validated() -> None:
    document = FULL_URLSET.replace(b"<urlset", b"<!DOCTYPE urlset>\n<urlset", 1)
    assert xsd_errors(document) == []


# -- loading -----------------------------------------------------------------------------------


def test_load_schema_is_cached() -> None:
    assert load_schema() is load_schema()


@pytest.mark.usefixtures("fresh_schema")
def test_building_and_validating_never_touches_the_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    assert xsd_errors(FULL_URLSET) == []
    assert xsd_errors(SITEMAPINDEX) == []
    assert xsd_errors(urlset(single_url("    <priority>1.5</priority>")))
    assert attempts == []


def bundled_files() -> dict[Path, bytes]:
    folder = Path(str(files("sitemapkit").joinpath("data").joinpath("xsd")))
    return {path.resolve(): path.read_bytes() for path in folder.glob("*.xsd")}


def compile_with_resolver(resolver: etree.Resolver, imports: str) -> etree.XMLSchema:
    parser = etree.XMLParser(no_network=True, resolve_entities=False, load_dtd=False)
    parser.resolvers.add(resolver)
    wrapper = etree.fromstring(
        f'<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">{imports}</xs:schema>', parser
    )
    return etree.XMLSchema(wrapper)


def test_public_schema_locations_are_served_from_the_bundle() -> None:
    # xhtml1-strict.xsd in turn imports http://www.w3.org/2001/xml.xsd.
    schema = compile_with_resolver(
        xsd._BundleResolver(bundled_files()),
        '<xs:import namespace="http://www.w3.org/1999/xhtml"'
        ' schemaLocation="http://www.w3.org/2002/08/xhtml/xhtml1-strict.xsd"/>',
    )
    assert schema.validate(
        etree.fromstring(
            b'<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en"><head><title>t</title>'
            b"</head><body/></html>"
        )
    )


def test_unbundled_schema_locations_are_refused() -> None:
    # An import the bundle does not have must fail rather than be fetched.
    with pytest.raises(etree.XMLSchemaParseError, match=re.escape("http://example.com/x.xsd")):
        compile_with_resolver(
            xsd._BundleResolver(bundled_files()),
            '<xs:import namespace="urn:x" schemaLocation="http://example.com/x.xsd"/>',
        )


@pytest.mark.usefixtures("fresh_schema")
def test_building_does_not_depend_on_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert xsd_errors(FULL_URLSET) == []
    assert xsd_errors(SITEMAPINDEX) == []


@pytest.mark.usefixtures("fresh_schema")
def test_concurrent_first_use_compiles_completely_and_keeps_errors_apart() -> None:
    # The first call compiles while other threads parse, the situation in which lxml's
    # unsynchronised swap of libxml2's entity loader used to drop imports from the schema.
    invalid = urlset(single_url("    <priority>1.5</priority>"))
    documents = [FULL_URLSET, invalid, SITEMAPINDEX] * 50

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(xsd_errors, documents))
    assert [len(errors) for errors in results] == [0, 1, 0] * 50


# -- in a fresh interpreter, with only this module's files -------------------------------------

MINIMAL_PACKAGE = (
    "__init__.py",
    "errors.py",
    "core/__init__.py",
    "core/finding.py",
    "core/hardening.py",
    "core/namespace.py",
    "lint/__init__.py",
    "lint/xsd.py",
    *(f"data/xsd/{name}" for name in (*SCHEMA_FILES, "NOTICE.md")),
)


def copy_package(destination: Path) -> None:
    source = Path(xsd.__file__).parents[1]
    for name in MINIMAL_PACKAGE:
        target = destination / "sitemapkit" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"" if name.endswith("__init__.py") else (source / name).read_bytes())


def run_isolated(script: str, entry: Path, cwd: Path) -> list[str]:
    """Run ``script`` in a new interpreter that finds sitemapkit at ``entry``; its output lines.

    ``script`` has ``xsd`` imported and ``VALID``/``INVALID``/``INDEX`` documents defined.
    """
    prelude = (
        "import sitemapkit\nfrom sitemapkit.lint import xsd\n"
        f"VALID = {FULL_URLSET!r}\nINDEX = {SITEMAPINDEX!r}\n"
        f"INVALID = {urlset(single_url('    <priority>1.5</priority>'))!r}\n"
        "print(sitemapkit.__file__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + script],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(entry)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().splitlines()


VALIDATE = "print(xsd.xsd_errors(VALID), xsd.xsd_errors(INDEX), xsd.xsd_errors(INVALID), sep='\\n')"


def test_works_from_a_folder_whose_path_needs_escaping(tmp_path: Path) -> None:
    root = tmp_path / "site packages & ü #1"
    copy_package(root)
    where, valid, index, invalid = run_isolated(VALIDATE, root, cwd=tmp_path)
    assert where.startswith(str(root))
    assert (valid, index) == ("[]", "[]")
    assert "Element 'priority'" in invalid


def test_works_when_imported_from_a_zip(tmp_path: Path) -> None:
    copy_package(tmp_path / "tree")
    archive = tmp_path / "sitemapkit.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted((tmp_path / "tree").rglob("*")):
            if path.is_file():
                bundle.write(path, path.relative_to(tmp_path / "tree").as_posix())
    where, valid, index, invalid = run_isolated(VALIDATE, archive, cwd=tmp_path)
    assert where.startswith(str(archive))
    assert (valid, index) == ("[]", "[]")
    assert "Element 'priority'" in invalid


ENTITY_LOADER_RACE = """
import threading
from lxml import etree

entered, release = threading.Event(), threading.Event()

class Blocking(etree.Resolver):
    def resolve(self, url, pubid, context):
        entered.set()
        release.wait(10)
        return self.resolve_string(b"", context)

def other_parse():
    parser = etree.XMLParser(load_dtd=True, no_network=True)
    parser.resolvers.add(Blocking())
    etree.fromstring(b'<!DOCTYPE a SYSTEM "urn:x-test:blocking.dtd"><a/>', parser)

other = threading.Thread(target=other_parse)
resolve = xsd._BundleResolver.resolve
calls = []

def first_load_lets_the_other_parse_finish(self, url, pubid, context):
    calls.append(url)
    if len(calls) == 1:
        release.set()
        other.join(10)
    return resolve(self, url, pubid, context)

xsd._BundleResolver.resolve = first_load_lets_the_other_parse_finish
other.start()
assert entered.wait(10)
xsd.load_schema()
print(len(calls))
"""


def test_compile_survives_another_thread_restoring_the_entity_loader(tmp_path: Path) -> None:
    # lxml hooks our resolver into libxml2's process-wide entity loader around each parse and
    # then puts back whatever loader it found there, without a lock. A parse in another thread
    # that starts before the compile and ends after its first load therefore sends the rest of
    # the compile's loads to libxml2's own loader. A fresh interpreter is needed: once the
    # opposite interleaving has happened, lxml's hook stays installed for good.
    copy_package(tmp_path)
    _, calls, valid, index, invalid = run_isolated(
        ENTITY_LOADER_RACE + VALIDATE, tmp_path, cwd=tmp_path
    )
    assert int(calls) < len(SCHEMA_FILES)  # libxml2 loaded some files by itself
    assert (valid, index) == ("[]", "[]")
    assert "Element 'priority'" in invalid


# -- the bundled files -------------------------------------------------------------------------

# sha256 of the upstream copies, as recorded in spec/xsd/SOURCES.md.
UPSTREAM_SHA256 = {
    "sitemap.xsd": "fa1fa37674091f36f31d9af9e953ffd56d5ea2e8f134b45e0335b25cdca6e0fc",
    "siteindex.xsd": "3f7322902a3d412691350b6ed8005f051205f02c5a1ee445d83ee8c890d328b9",
    "sitemap-image.xsd": "ad08899ba146cd61bf4c8d860653d9176d626123dc3e5c1155ec2522c5b5326f",
    "sitemap-video.xsd": "2c3d9a410563d2e06c37a79cda00f66688fc7f2393dab2f5981b567fee130d21",
    "sitemap-news.xsd": "2669f1a0cc83f357752d1b1cd0874fa32c074eb0c9bd6c25f0c33141395cf168",
    "xhtml1-strict.xsd": "9f89777c95be6866317de83852f9fbddd6c48c381a36d8fd9b00e11b864a209f",
    "xml.xsd": "61960fb3131e38022caad5360e2f33a3382578ab3c80cd58bd74320ede61b20c",
}


@pytest.mark.parametrize(("name", "digest"), sorted(UPSTREAM_SHA256.items()))
def test_bundled_schema_is_the_unmodified_upstream_copy(name: str, digest: str) -> None:
    data = files("sitemapkit").joinpath("data").joinpath("xsd").joinpath(name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == digest


def test_bundle_has_a_notice_for_every_schema() -> None:
    folder = files("sitemapkit").joinpath("data").joinpath("xsd")
    notice = folder.joinpath("NOTICE.md").read_text(encoding="utf-8")
    bundled = {entry.name for entry in folder.iterdir() if entry.name.endswith(".xsd")}
    assert bundled == set(UPSTREAM_SHA256) == set(SCHEMA_FILES)
    for name in bundled:
        assert f"`{name}`" in notice
