"""lint: validation against the official Sitemaps XML Schemas, fully offline.

The only thing this module reads is the schema files bundled as package data in
``sitemapkit/data/xsd`` (located with :mod:`importlib.resources`, so it works from a wheel or a
zip and whatever the working directory is). It never opens a socket: every schema location the
schemas can ask for is answered from the bundle by an lxml resolver, and anything else is refused.

One combined schema covers ``<urlset>`` with the image 1.1, video 1.1 and news 0.9 extensions
and ``<xhtml:link>`` (through W3C XHTML 1.0 Strict, as is customary for hreflang), and
``<sitemapindex>``. The schemas check structure, order and value types; everything they cannot
express (absolute URLs, limits, hreflang codes, W3C Datetime granularity) is left to the rules.
"""

from __future__ import annotations

import functools
import re
import threading
import xml.parsers.expat
from collections.abc import Mapping
from importlib.resources import files
from typing import TYPE_CHECKING, Final

from lxml import etree

from sitemapkit.errors import ParseError, UnsafeXMLError

if TYPE_CHECKING:
    from lxml.etree._docloader import _InputDocument  # only in types-lxml

__all__ = ["SITEMAP_NS", "load_schema", "xsd_errors"]

SITEMAP_NS: Final = "http://www.sitemaps.org/schemas/sitemap/0.9"
_IMAGE_NS: Final = "http://www.google.com/schemas/sitemap-image/1.1"
_VIDEO_NS: Final = "http://www.google.com/schemas/sitemap-video/1.1"
_NEWS_NS: Final = "http://www.google.com/schemas/sitemap-news/0.9"
_XHTML_NS: Final = "http://www.w3.org/1999/xhtml"

# Public schema location -> bundled file. This is the complete set of locations the schemas
# (and our wrapper) refer to, including xhtml1-strict.xsd's own import of xml.xsd.
_BUNDLED: Final[Mapping[str, str]] = {
    "http://www.sitemaps.org/schemas/sitemap/0.9/sitemap.xsd": "sitemap.xsd",
    "http://www.sitemaps.org/schemas/sitemap/0.9/siteindex.xsd": "siteindex.xsd",
    "http://www.google.com/schemas/sitemap-image/1.1/sitemap-image.xsd": "sitemap-image.xsd",
    "http://www.google.com/schemas/sitemap-video/1.1/sitemap-video.xsd": "sitemap-video.xsd",
    "http://www.google.com/schemas/sitemap-news/0.9/sitemap-news.xsd": "sitemap-news.xsd",
    "http://www.w3.org/2002/08/xhtml/xhtml1-strict.xsd": "xhtml1-strict.xsd",
    "http://www.w3.org/2001/xml.xsd": "xml.xsd",
    "http://www.w3.org/2009/01/xml.xsd": "xml.xsd",
}

# Extension namespace -> public location of its schema.
_EXTENSIONS: Final[Mapping[str, str]] = {
    _IMAGE_NS: "http://www.google.com/schemas/sitemap-image/1.1/sitemap-image.xsd",
    _VIDEO_NS: "http://www.google.com/schemas/sitemap-video/1.1/sitemap-video.xsd",
    _NEWS_NS: "http://www.google.com/schemas/sitemap-news/0.9/sitemap-news.xsd",
    _XHTML_NS: "http://www.w3.org/2002/08/xhtml/xhtml1-strict.xsd",
}

# Made-up locations served from memory; the .invalid TLD can never be fetched (RFC 6761).
_WRAPPER_URL: Final = "http://sitemapkit.invalid/xsd/all.xsd"
_CORE_URL: Final = "http://sitemapkit.invalid/xsd/sitemap-core.xsd"

_XS_OPEN: Final = '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"'

# sitemap.xsd and siteindex.xsd share one targetNamespace, and libxml2 honours only the first
# xs:import of a namespace, so a core schema in that namespace xs:includes both.
_CORE_XSD: Final = (
    f'{_XS_OPEN} targetNamespace="{SITEMAP_NS}" elementFormDefault="qualified">'
    '<xs:include schemaLocation="http://www.sitemaps.org/schemas/sitemap/0.9/sitemap.xsd"/>'
    '<xs:include schemaLocation="http://www.sitemaps.org/schemas/sitemap/0.9/siteindex.xsd"/>'
    "</xs:schema>"
)

_WRAPPER_XSD: Final = (
    f"{_XS_OPEN}>"
    '<xs:import namespace="http://www.w3.org/XML/1998/namespace" schemaLocation="http://www.w3.org/2001/xml.xsd"/>'
    f'<xs:import namespace="{SITEMAP_NS}" schemaLocation="{_CORE_URL}"/>'
    + "".join(
        f'<xs:import namespace="{ns}" schemaLocation="{url}"/>' for ns, url in _EXTENSIONS.items()
    )
    + "</xs:schema>"
)

_ROOTS: Final = frozenset({f"{{{SITEMAP_NS}}}urlset", f"{{{SITEMAP_NS}}}sitemapindex"})

# Messages name elements with the prefixes people write, not in {namespace}name form.
_PREFIXES: Final[Mapping[str, str]] = {
    SITEMAP_NS: "",
    _IMAGE_NS: "image:",
    _VIDEO_NS: "video:",
    _NEWS_NS: "news:",
    _XHTML_NS: "xhtml:",
}
_CLARK_NAME: Final = re.compile(r"\{([^{}\s]*)\}(?=[A-Za-z_])")

# One step of a libxml2 node path: "*[3]", "image:image[2]", "loc" (see xmlGetNodePath).
_PATH_STEP: Final = re.compile(r"(?:(\*)|(?:([^:\[\]/]+):)?([^:\[\]/()@]+))(?:\[(\d+)\])?")


class _BundleResolver(etree.Resolver):
    """Serve every schema from memory; refuse anything else, so nothing is ever fetched."""

    def __init__(self, documents: Mapping[str, bytes]) -> None:
        super().__init__()
        self._documents = documents

    def resolve(
        self, system_url: str | None, public_id: str | None, context: object
    ) -> _InputDocument:
        document = self._documents.get(system_url or "")
        if document is None:
            # An exception here makes the import fail; returning None would let libxml2 go
            # and load the URL itself.
            raise LookupError(f"Schema location {system_url!r} is not bundled with sitemapkit")
        return self.resolve_string(document, context, base_url=system_url)


def _bundle() -> dict[str, bytes]:
    """Read every bundled schema up front, so a broken install fails here with a clear error."""
    folder = files("sitemapkit").joinpath("data").joinpath("xsd")
    texts = {name: folder.joinpath(name).read_bytes() for name in set(_BUNDLED.values())}
    documents = {url: texts[name] for url, name in _BUNDLED.items()}
    documents[_CORE_URL] = _CORE_XSD.encode()
    return documents


def _hardened_parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
    )


@functools.cache
def _compile() -> etree.XMLSchema:
    parser = _hardened_parser()
    parser.resolvers.add(_BundleResolver(_bundle()))
    wrapper = etree.fromstring(_WRAPPER_XSD.encode(), parser, base_url=_WRAPPER_URL)
    return etree.XMLSchema(wrapper)


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
    parser = _hardened_parser()
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
    # lxml hands out one proxy per node while it is alive, so identities can be compared.
    targets = [_find(root, path) for _, path, _ in errors]
    wanted = {id(element) for element in targets if element is not None}
    order: dict[int, int] = {}
    total = 0
    for total, node in enumerate(root.iter(etree.Element), start=1):
        if id(node) in wanted:
            order[id(node)] = total - 1
    positions = _start_tag_positions(source, set(order.values()), total)
    placed = []
    for (line, _, message), element in zip(errors, targets, strict=True):
        position = None
        if positions is not None and element is not None:
            position = positions.get(order[id(element)])
        line, column = position or (line, 0)
        placed.append((line, column, message))
    return placed


def _find(root: etree._Element, path: str) -> etree._Element | None:
    """Follow a libxml2 node path (``/*/*[3]/image:image/image:loc``) to its element.

    Stops at the last element step it can follow (attribute or text steps name a node inside
    it). Returns None when the path does not fit the tree.
    """
    steps = path.split("/")
    if len(steps) < 2 or steps[0] or not _PATH_STEP.fullmatch(steps[1]):
        return None
    node = root
    for step in steps[2:]:
        match = _PATH_STEP.fullmatch(step)
        if match is None:
            break
        generic, prefix, name, index = match.groups()
        if generic:
            candidates = list(node.iterchildren(etree.Element))
        else:
            candidates = [
                child
                for child in node.iterchildren(etree.Element)
                if child.prefix == prefix
                and etree.QName(child).localname == name
                and (prefix is not None or etree.QName(child).namespace is None)
            ]
        position = int(index or 1) - 1
        if position >= len(candidates):
            return None
        node = candidates[position]
    return node


def _start_tag_positions(
    source: bytes, wanted: set[int], total: int
) -> dict[int, tuple[int, int]] | None:
    """1-based (line, column) of the start tags with these document-order indexes.

    libxml2 keeps no columns, so expat (which reports the position of each event) reads the
    source again; this only runs when there are errors to place. None if expat cannot read it
    or does not see the same ``total`` number of elements as libxml2 did.
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
    except xml.parsers.expat.ExpatError:
        return None
    return positions if count == total else None
