"""lint: validation against the official Sitemaps XML Schemas, fully offline.

Pure but for one thing: it reads the schema files bundled as package data in
``sitemapkit/data/xsd`` (located with :mod:`importlib.resources`, so it works from a wheel or a
zip, whatever the working directory is). It never uses the network: the schemas are compiled
from the local paths of those files, an lxml resolver serves them (and their public URLs) from
memory and refuses every other location, and documents are parsed with entities, DTD loading
and network access disabled.

One combined schema covers ``<urlset>`` with the image 1.1, video 1.1 and news 0.9 extensions
and ``<xhtml:link>`` (through W3C XHTML 1.0 Strict, as is customary for hreflang), and
``<sitemapindex>``. The schemas check structure, order and value types; everything they cannot
express (absolute URLs, limits, hreflang codes, W3C Datetime granularity) is left to the rules.
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
import xml.parsers.expat
from collections.abc import Callable, Mapping
from html import escape
from importlib.resources import as_file, files
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import unquote, urlsplit

from lxml import etree

from sitemapkit.errors import ParseError, UnsafeXMLError

from ..core.hardening import HARDENED
from ..core.namespace import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS

if TYPE_CHECKING:
    from lxml.etree._docloader import _InputDocument  # only in types-lxml

__all__ = ["load_schema", "start_tag_columns", "xsd_errors"]

_XML_NS: Final = "http://www.w3.org/XML/1998/namespace"

# Public schema location -> bundled file: every location the schemas are known by, including
# the one xhtml1-strict.xsd itself imports xml.xsd from.
_PUBLIC: Final[Mapping[str, str]] = {
    "http://www.sitemaps.org/schemas/sitemap/0.9/sitemap.xsd": "sitemap.xsd",
    "http://www.sitemaps.org/schemas/sitemap/0.9/siteindex.xsd": "siteindex.xsd",
    "http://www.google.com/schemas/sitemap-image/1.1/sitemap-image.xsd": "sitemap-image.xsd",
    "http://www.google.com/schemas/sitemap-video/1.1/sitemap-video.xsd": "sitemap-video.xsd",
    "http://www.google.com/schemas/sitemap-news/0.9/sitemap-news.xsd": "sitemap-news.xsd",
    "http://www.w3.org/2002/08/xhtml/xhtml1-strict.xsd": "xhtml1-strict.xsd",
    "http://www.w3.org/2001/xml.xsd": "xml.xsd",
    "http://www.w3.org/2009/01/xml.xsd": "xml.xsd",
}

# Imported namespace -> bundled file, in import order. xml.xsd goes before xhtml1-strict.xsd so
# that libxml2 skips the latter's own import of the namespace from http://www.w3.org/.
_IMPORTS: Final[Mapping[str, str]] = {
    _XML_NS: "xml.xsd",
    IMAGE_NS: "sitemap-image.xsd",
    VIDEO_NS: "sitemap-video.xsd",
    NEWS_NS: "sitemap-news.xsd",
    XHTML_NS: "xhtml1-strict.xsd",
}

# Between them these touch every bundled file; a complete compile finds both valid.
_CANARIES: Final = (
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    b' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'
    b' xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"'
    b' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
    b' xmlns:xhtml="http://www.w3.org/1999/xhtml"><url><loc>https://example.com/</loc>'
    b"<image:image><image:loc>https://example.com/i.png</image:loc></image:image>"
    b"<video:video><video:thumbnail_loc>https://example.com/t.png</video:thumbnail_loc>"
    b"<video:title>t</video:title><video:description>d</video:description>"
    b"<video:content_loc>https://example.com/v.mp4</video:content_loc></video:video>"
    b"<news:news><news:publication><news:name>n</news:name><news:language>en</news:language>"
    b"</news:publication><news:publication_date>2024-01-01</news:publication_date>"
    b"<news:title>t</news:title></news:news>"
    b'<xhtml:link rel="alternate" hreflang="x-default" href="https://example.com/"'
    b' xml:lang="en"/></url></urlset>',
    b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    b"<sitemap><loc>https://example.com/sitemap.xml</loc></sitemap></sitemapindex>",
)

_ROOTS: Final = frozenset({f"{{{SITEMAP_NS}}}urlset", f"{{{SITEMAP_NS}}}sitemapindex"})

# Messages name elements with the prefixes people write, not in {namespace}name form.
_PREFIXES: Final[Mapping[str, str]] = {
    SITEMAP_NS: "",
    IMAGE_NS: "image:",
    VIDEO_NS: "video:",
    NEWS_NS: "news:",
    XHTML_NS: "xhtml:",
}
_CLARK_NAME: Final = re.compile(r"\{([^{}\s]*)\}(?=[A-Za-z_])")

# One step of a libxml2 node path: "*[3]", "image:image[2]", "loc" (see xmlGetNodePath).
_PATH_STEP: Final = re.compile(r"(?:(\*)|(?:([^:\[\]/]+):)?([^:\[\]/()@]+))(?:\[(\d+)\])?")


class _BundleResolver(etree.Resolver):
    """Serve the bundled schemas, under their public or local locations; refuse anything else."""

    def __init__(self, local: Mapping[Path, bytes]) -> None:
        super().__init__()
        self._local = local
        by_name = {path.name: text for path, text in local.items()}
        self._public = {url: by_name[n] for url, n in _PUBLIC.items() if n in by_name}

    def resolve(
        self, system_url: str | None, public_id: str | None, context: object
    ) -> _InputDocument:
        url = system_url or ""
        text = self._public.get(url)
        if text is None and url.startswith("file:"):
            # the path as url2pathname reads it on POSIX (urllib.request imports http.client)
            text = self._local.get(Path(unquote(urlsplit(url).path)).resolve())
        if text is None:
            # Raising makes the load fail; returning None would let libxml2 load it itself.
            raise LookupError(f"Schema location {url!r} is not bundled with sitemapkit")
        return self.resolve_string(text, context, base_url=url)


@functools.cache
def _compile() -> etree.XMLSchema:
    folder = files("sitemapkit").joinpath("data").joinpath("xsd")
    with contextlib.ExitStack() as stack:
        # Real files (extracted to a temporary folder when installed as a zip): lxml swaps
        # libxml2's process-wide entity loader without a lock, so a parse in another thread
        # can make some loads of this compile bypass our resolver, and libxml2 then has to
        # find the very same bytes at the same locations on its own.
        paths = {
            name: stack.enter_context(as_file(folder.joinpath(name))).resolve()
            for name in set(_PUBLIC.values())
        }
        parser = etree.XMLParser(**HARDENED)
        parser.resolvers.add(_BundleResolver({path: path.read_bytes() for path in paths.values()}))
        # Any name but one of the files (libxml2 refuses a schema that includes itself).
        base = paths["sitemap.xsd"].with_name("combined.xsd").as_uri()
        top = etree.fromstring(_top_schema(paths), parser, base_url=base)
        schema = etree.XMLSchema(top)
    for canary in _CANARIES:
        if not schema.validate(etree.fromstring(canary, etree.XMLParser(**HARDENED))):
            raise RuntimeError(
                f"The bundled schemas compiled incompletely: {schema.error_log.last_error}"
            )
    return schema


def _top_schema(paths: Mapping[str, Path]) -> bytes:
    """The document that is compiled: the sitemap namespace plus one import per extension.

    sitemap.xsd and siteindex.xsd share one namespace and libxml2 honours only the first
    xs:import of a namespace, so this document takes that namespace and includes both.
    """
    uris = {name: escape(path.as_uri(), quote=True) for name, path in paths.items()}
    return "".join(
        [
            '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"',
            f' targetNamespace="{SITEMAP_NS}" elementFormDefault="qualified">',
            f'<xs:include schemaLocation="{uris["sitemap.xsd"]}"/>',
            f'<xs:include schemaLocation="{uris["siteindex.xsd"]}"/>',
            *(
                f'<xs:import namespace="{ns}" schemaLocation="{uris[name]}"/>'
                for ns, name in _IMPORTS.items()
            ),
            "</xs:schema>",
        ]
    ).encode()


_compile_lock: Final = threading.Lock()
# An XMLSchema keeps its error log on the object, so concurrent validations would mix logs.
_validate_lock: Final = threading.Lock()


def load_schema() -> etree.XMLSchema:
    """Return the combined sitemap schema, compiled once from the bundled files.

    It validates ``<urlset>`` (with image, video, news and ``xhtml:link`` extensions) and
    ``<sitemapindex>``. Compiling reads only package data and never uses the network. The
    object is shared: its ``error_log`` belongs to whichever validation ran last, so code that
    validates from several threads should use :func:`xsd_errors`, which serialises access.
    Note that a bare schema also accepts a root from any imported namespace (an ``image:image``
    or an XHTML ``html`` document); :func:`xsd_errors` checks the root element first.

    >>> load_schema().validate(etree.fromstring(
    ...     b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ...     b"<url><loc>https://example.com/</loc></url></urlset>"))
    True
    """
    with _compile_lock:
        return _compile()


def xsd_errors(
    document: bytes | etree._ElementTree[etree._Element] | etree._Element,
) -> list[tuple[int, int, str]]:
    """Validate a sitemap or sitemap index against the schemas; return its errors.

    ``document`` is the raw XML (parsed here with entities, DTD loading and network access
    disabled) or an already parsed lxml tree or root element. Each error is ``(line, column,
    message)`` with a 1-based line and column pointing at the start tag of the offending
    element; column is 0 when unknown (always for a tree, whose source is not available).
    Messages are libxml2's, with elements named ``loc``, ``image:loc``, ``video:…``,
    ``news:…``, ``xhtml:link``; other namespaces keep the ``{uri}name`` form. An empty list
    means the document is valid. A root other than ``urlset`` or ``sitemapindex`` in the
    sitemap namespace is the only error reported, since nothing below it can be checked.

    Raises :class:`~sitemapkit.errors.ParseError` when the bytes are not well-formed XML, and
    :class:`~sitemapkit.errors.UnsafeXMLError` when the document uses a DTD-declared entity
    (left unexpanded for safety, which libxml2's validator cannot cope with).

    >>> xsd_errors(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ...            b"<url><loc>https://example.com/</loc><priority>2</priority></url></urlset>")
    ... # doctest: +ELLIPSIS
    [(1, 97, "Element 'priority': [facet 'maxInclusive'] The value '2' is greater than ...")]
    """
    source: bytes | None = None
    if isinstance(document, bytes):
        source = document
        tree = _parse(document)
    elif isinstance(document, etree._Element):
        tree = document.getroottree()
    else:
        tree = document
    root = tree.getroot()

    root_tag = etree.QName(root).text
    if root_tag not in _ROOTS:
        # Checked here because the combined schema would happily validate an XHTML page or a
        # lone <image:image> as a document of their own namespace.
        message = (
            f"Element {_CLARK_NAME.sub(_prefixed, root_tag)!r}: No matching global declaration "
            "available for the validation root; expected 'urlset' or 'sitemapindex' in "
            f"namespace {SITEMAP_NS!r}."
        )
        return _place([(root.sourceline or 0, "/*", message)], tree, source)

    if tree.docinfo.doctype:
        _refuse_entities(tree)
    schema = load_schema()
    with _validate_lock:
        if schema.validate(tree):
            return []
        found = [(entry.line, entry.path or "", entry.message) for entry in schema.error_log]
    return _place(
        [(line, path, _CLARK_NAME.sub(_prefixed, message)) for line, path, message in found],
        tree,
        source,
    )


def _parse(document: bytes) -> etree._ElementTree[etree._Element]:
    parser = etree.XMLParser(**HARDENED)
    try:
        root = etree.fromstring(document, parser)
    except etree.XMLSyntaxError as exc:
        # The parser's own log holds just this parse (the exception's may carry older entries).
        first = parser.error_log.filter_from_errors()[0] if parser.error_log else None
        message = first.message if first is not None else exc.msg
        line, column = (first.line, first.column) if first is not None else exc.position
        raise ParseError(
            f"Not well-formed XML: {message}", line=line or None, column=column or None
        ) from exc
    return root.getroottree()


def _refuse_entities(tree: etree._ElementTree[etree._Element]) -> None:
    # The hardened parser keeps &name; as a reference node instead of expanding it, and
    # libxml2's validator stops with "Internal error" on such nodes.
    for entity in tree.getroot().iter(etree.Entity):
        parent = entity.getparent()
        raise UnsafeXMLError(
            f"Entity reference {entity.text!r} is refused: sitemaps have no use for DTD entities",
            line=entity.sourceline or (parent.sourceline if parent is not None else None),
            hint="write the characters themselves or as character references (&#233;)",
        )


def _prefixed(match: re.Match[str]) -> str:
    prefix = _PREFIXES.get(match.group(1))
    return match.group(0) if prefix is None else prefix


def _place(
    errors: list[tuple[int, str, str]],
    tree: etree._ElementTree[etree._Element],
    source: bytes | None,
) -> list[tuple[int, int, str]]:
    """Attach columns: libxml2 reports only a line, which says little in a one-line sitemap."""
    if source is None or tree.docinfo.doctype:
        # No source to measure, or a DTD whose entities expat would expand and libxml2 did not
        # (the element counts would no longer correspond).
        return [(line, 0, message) for line, _, message in errors]
    root = tree.getroot()
    find = path_finder(root)
    columns = start_tag_columns([find(path) for _, path, _ in errors], root, source)
    return [
        (*(position or (line, 0)), message)
        for (line, _, message), position in zip(errors, columns, strict=True)
    ]


def start_tag_columns(
    targets: list[etree._Element | None], root: etree._Element, source: bytes | None
) -> list[tuple[int, int] | None]:
    """(line, column) of each target's start tag, from the source; None where unknown."""
    if source is None or not any(t is not None for t in targets):
        return [None] * len(targets)
    # lxml hands out one proxy per node while it is alive, so identities can be compared.
    wanted = {id(t) for t in targets if t is not None}
    order: dict[int, int] = {}
    total = 0
    for total, node in enumerate(root.iter(etree.Element), start=1):
        if id(node) in wanted:
            order[id(node)] = total - 1
    positions = _start_tag_positions(source, set(order.values()), total)
    if positions is None:
        return [None] * len(targets)
    return [positions.get(order[id(t)]) if t is not None else None for t in targets]


def _find(root: etree._Element, path: str) -> etree._Element | None:
    """Follow a libxml2 node path (``/*/*[3]/image:image/image:loc``) to its element.

    Stops at the last element step it can follow (attribute or text steps name a node inside
    it). Returns None when the path does not fit the tree.
    """
    return path_finder(root)(path)


def path_finder(root: etree._Element) -> Callable[[str], etree._Element | None]:
    """:func:`_find` for many paths of one tree: each node's children are listed once.

    Listing the root's children for every error made a document with one error per entry
    quadratic (50,000 entries: over 15 minutes).
    """
    listed: dict[tuple[int, str | None, str | None], list[etree._Element]] = {}

    def children(
        node: etree._Element, prefix: str | None, name: str | None
    ) -> list[etree._Element]:
        # the cached lists keep their proxies alive, so id() of a node met again is stable
        key = (id(node), prefix, name)
        found = listed.get(key)
        if found is None:
            if name is None:
                found = list(node.iterchildren(etree.Element))
            else:
                found = [
                    child
                    for child in node.iterchildren(etree.Element)
                    if child.prefix == prefix
                    and etree.QName(child).localname == name
                    and (prefix is not None or etree.QName(child).namespace is None)
                ]
            listed[key] = found
        return found

    def find(path: str) -> etree._Element | None:
        steps = path.split("/")
        if len(steps) < 2 or steps[0] or not _PATH_STEP.fullmatch(steps[1]):
            return None
        node = root
        for step in steps[2:]:
            match = _PATH_STEP.fullmatch(step)
            if match is None:
                break
            generic, prefix, name, index = match.groups()
            candidates = children(node, None, None) if generic else children(node, prefix, name)
            position = int(index or 1) - 1
            if position >= len(candidates):
                return None
            node = candidates[position]
        return node

    return find


def _start_tag_positions(
    source: bytes, wanted: set[int], total: int
) -> dict[int, tuple[int, int]] | None:
    """1-based (line, column) of the start tags with these document-order indexes.

    libxml2 keeps no columns, so expat (which reports the position of each event) reads the
    source again; this only runs when there are errors to place. None if expat cannot read it
    (expat reads no multi-byte encoding but UTF-8 and UTF-16: a declared UTF-7 or Shift_JIS
    is refused with a ``ValueError``) or does not see the same ``total`` number of elements
    as libxml2 did.
    """
    parser = xml.parsers.expat.ParserCreate()
    positions: dict[int, tuple[int, int]] = {}
    count = 0

    def start(name: str, attributes: dict[str, str]) -> None:
        nonlocal count
        if count in wanted:
            positions[count] = (parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)
        count += 1

    parser.StartElementHandler = start
    try:
        parser.Parse(source, True)
    except (xml.parsers.expat.ExpatError, ValueError):
        return None
    return positions if count == total else None
