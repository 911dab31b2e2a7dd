"""core: URLs as sitemaps need them. Pure.

IRI → URI (RFC 3987 §3.1: percent-encoded UTF-8 path and query, IDNA host),
XML escaping, the comparison form of a URL (:func:`normalize`), and the sitemap
location rule of sitemaps.org ("Sitemap file location": same scheme, host and port,
path under the sitemap's directory).
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple
from urllib.parse import urljoin

import idna

from .limits import MAX_LOC_LENGTH, MIN_LOC_LENGTH

__all__ = [
    "XML_SPACE",
    "Origin",
    "check_location",
    "check_text",
    "directory_of",
    "escape",
    "iri_to_uri",
    "is_canonical_loc",
    "normalize",
    "remove_dot_segments",
    "resolve",
    "unescape",
    "validate_loc",
]

#: XML's white space (S production); str.strip() would also remove NBSP and U+001C-U+001F,
#: which in a URL are characters to percent-encode, not padding.
XML_SPACE: Final = " \t\r\n"
# RFC 3986 characters: unreserved / reserved (and "%", kept only before two hex digits).
# Possessive and unrolled: a long value keeps no backtracking state per character
# (the alternation form took 120 bytes a character: 6 GB for a 50 MB line).
_URI_CHARS: Final = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]*+"
_PLAIN_URI: Final = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*://[A-Za-z0-9._~\-]+(?::[0-9]{1,5})?"
    rf"(?:[/?#]{_URI_CHARS}(?:%[0-9A-Fa-f]{{2}}{_URI_CHARS})*+)?",
)
_BAD_PERCENT: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
# An http(s) URL already in the form iri_to_uri gives and validate_loc takes: a subset of
# _PLAIN_URI with a lowercase scheme and host and no user or port (those take the long
# way); the length and the "%" escapes are checked beside it (is_canonical_loc).
_CANONICAL_LOC: Final = re.compile(
    r"https?://[a-z0-9._~-]+(?:[/?#][A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]*)?"
)
# re.S: a port may hold any character, a line feed too (the fullmatch must always match)
_AUTHORITY: Final = re.compile(
    r"(?:(?P<user>[^@]*)@)?(?P<host>\[[^\]]*\]|[^:]*)(?::(?P<port>.*))?", re.S
)
# RFC 3986 §3.2.2 host: an IP-literal in brackets, or a reg-name (unreserved, pct-encoded,
# sub-delims): a space or a quote in a host is not a URL a crawler can fetch
_HOST: Final = re.compile(r"\[[0-9A-Za-z.:]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+")
_SPLIT: Final = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<auth>[^/?#]*)(?P<rest>.*)", re.S
)
# XML 1.0 Char production, minus what we escape: C0 controls other than TAB/LF/CR,
# lone surrogates, U+FFFE and U+FFFF can not appear in a document at all.
_NOT_XML_CHAR: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ESCAPES: Final = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    "'": "&apos;",
    "\n": "&#10;",
    "\r": "&#13;",
    "\t": "&#9;",
}
_NEEDS_ESCAPE: Final = re.compile("[&<>\"'\n\r\t]")
_URI_BYTES: Final = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%"
)
_NOT_URI: Final = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]++")
#: Each byte as a URI carries it: itself where RFC 3986 allows it, else ``%XX``.
_PCT_BYTE: Final = tuple(chr(b) if b in _URI_BYTES else f"%{b:02X}" for b in range(256))


def _encode_part(part: str) -> str:
    """Percent-encode what RFC 3986 does not allow; keep valid ``%XX`` untouched.

    In bulk: a run of such characters at a time (its UTF-8 bytes hex-encoded at once), or
    past a loc's longest, every byte through one table (``str.translate``), which costs the
    same per byte however the characters alternate. A Python call per character cost
    ~4 us a character: seconds for a loc of a million spaces or odd characters.
    """
    if "%" in part:
        part = _BAD_PERCENT.sub("%25", part)
    if len(part) <= MAX_LOC_LENGTH:
        return _NOT_URI.sub(_pct_run, part)
    if _NOT_URI.search(part) is None:
        return part
    return part.encode("utf-8").decode("latin-1").translate(_PCT_BYTE)


def _pct_run(m: re.Match[str]) -> str:
    return "%" + m.group().encode("utf-8").hex("%").upper()


def _encode_host(host: str, original: str) -> str:
    if host.startswith("["):
        return host.lower()
    if host.isascii():
        return host.lower()
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        raise ValueError(f"URL {original!r} has an invalid host name {host!r}: {exc}") from None


def is_canonical_loc(text: str) -> bool:
    """``True`` if ``text`` is an http(s) URL that :func:`iri_to_uri` and
    :func:`validate_loc` return unchanged: the common case, made cheap (the writer's
    ``add``, the model and the reader's fast path all ask it first).
    """
    return (
        MIN_LOC_LENGTH <= len(text) <= MAX_LOC_LENGTH
        and _CANONICAL_LOC.fullmatch(text) is not None
        and ("%" not in text or _BAD_PERCENT.search(text) is None)
    )


def iri_to_uri(iri: str) -> str:
    """Turn an IRI (or a sloppy URL) into the RFC 3986 URI a sitemap must carry.

    Lowercases scheme and host, encodes an internationalised host with IDNA 2008
    (punycode), percent-encodes non-ASCII characters as UTF-8 and characters that
    URIs forbid (space, ``"``, ``<``, ``>``, ``\\``, ``^``, backtick, ``{|}``), and a
    ``%`` not followed by two hex digits. Existing ``%XX`` escapes are kept, so
    applying it twice changes nothing.

    >>> iri_to_uri("https://Example.com/küche?q=a b")
    'https://example.com/k%C3%BCche?q=a%20b'
    """
    if is_canonical_loc(iri):
        return iri
    text = iri.strip(XML_SPACE)
    m = _SPLIT.fullmatch(text)
    if m is None:
        return _encode_part(text)
    scheme = m["scheme"].lower()
    auth = _AUTHORITY.fullmatch(m["auth"])
    assert auth is not None  # the pattern matches any string
    host = _encode_host(auth["host"], iri)
    netloc = host
    if auth["user"] is not None:
        netloc = _encode_part(auth["user"]) + "@" + netloc
    if auth["port"] is not None:
        netloc += ":" + auth["port"]
    rest = m["rest"]
    if _PLAIN_URI.fullmatch(text) and text.startswith(f"{scheme}://{netloc}"):
        return text
    return f"{scheme}://{netloc}{_encode_part(rest)}"


def escape(text: str) -> str:
    """Escape text for XML element content or a double-quoted attribute value.

    The five XML entities sitemaps.org lists, plus TAB, LF and CR as character
    references so that every entry stays on one line and round-trips exactly.
    """
    if _NEEDS_ESCAPE.search(text) is None:
        return text
    for char, ref in _ESCAPES.items():  # "&" first: the references made are kept
        if char in text:
            text = text.replace(char, ref)
    return text


def unescape(text: str) -> str:
    """Decode the five predefined XML entities (``&amp;`` last, so ``&amp;lt;`` stays
    ``&lt;``); character references are left as they are.

    >>> unescape("https://example.com/?a=1&amp;b=&lt;2&gt;")
    'https://example.com/?a=1&b=<2>'
    """
    if "&" not in text:
        return text
    if text.count("&") == text.count("&amp;"):
        return text.replace("&amp;", "&")
    return (
        text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", '"')
        .replace("&apos;", "'")
        .replace("&amp;", "&")
    )


def check_text(value: str, what: str) -> str:
    """Refuse characters that no XML 1.0 document can hold; return the value."""
    m = _NOT_XML_CHAR.search(value)
    if m is not None:
        raise ValueError(
            f"{what} {value!r} contains U+{ord(m.group()):04X}, which XML 1.0 cannot represent"
        )
    return value


class Origin(NamedTuple):
    """Scheme, host and effective port of an absolute URL, plus its path."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def of(cls, url: str) -> Origin:
        m = _SPLIT.fullmatch(url)
        if m is None:
            raise ValueError(f"{url!r} is not an absolute URL (it needs a scheme and a host)")
        auth = _AUTHORITY.fullmatch(m["auth"])
        assert auth is not None
        scheme = m["scheme"].lower()
        port_text = auth["port"]
        if port_text:
            if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
                raise ValueError(f"{url!r} has an invalid port {port_text!r}")
            port = int(port_text)
        else:
            port = {"http": 80, "https": 443}.get(scheme, 0)
        rest = m["rest"]
        path = re.split(r"[?#]", rest, maxsplit=1)[0] or "/"
        return cls(scheme, auth["host"].lower(), port, remove_dot_segments(path))


# -- the comparison form (RFC 3986 §6.2.2, §6.2.3) ------------------------------------------

_SPLIT_URL: Final = re.compile(
    r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?", re.S
)
_ESCAPE: Final = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_DEFAULT_PORT: Final = {"http": "80", "https": "443"}


def _normal_escape(m: re.Match[str]) -> str:
    ch = chr(int(m.group(1), 16))
    return ch if ch in _UNRESERVED else "%" + m.group(1).upper()


def normalize(url: str) -> str:
    """The comparison form of a URL (RULES.md SM215).

    Scheme and host lowercased, default port dropped, percent-escapes uppercased and
    unreserved ones decoded, dot-segments removed, fragment dropped; query order and path
    case kept. A value that is not an absolute URL comes back unchanged.

    >>> normalize("HTTPS://Example.COM:443/a/./b/../%7euser/%3f?q=1#top")
    'https://example.com/a/~user/%3F?q=1'
    """
    m = _SPLIT_URL.fullmatch(url)
    if m is None:
        return url
    scheme, auth, path, query, _ = m.groups()
    scheme = scheme.lower()
    userinfo, at, hostport = auth.rpartition("@")
    host, colon, port = hostport.partition(":")
    if hostport.startswith("["):
        host, _, rest = hostport.partition("]")
        host += "]"
        colon, port = (":", rest[1:]) if rest.startswith(":") else ("", "")
    host = host.lower()
    if colon and port == _DEFAULT_PORT.get(scheme):
        colon = port = ""
    if "%" in path:
        path = _ESCAPE.sub(_normal_escape, path)
    if "." in path:
        path = remove_dot_segments(path)
    path = path or "/"
    if query and "%" in query:
        query = _ESCAPE.sub(_normal_escape, query)
    return f"{scheme}://{userinfo}{at}{host}{colon}{port}{path}{query or ''}"


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 for a URL path: ``/a/./b/../c`` → ``/a/c``."""
    if "." not in path:
        return path
    out: list[str] = []
    for seg in path.split("/"):
        if seg == "..":
            if len(out) > 1:
                out.pop()
        elif seg != ".":
            out.append(seg)
    if path.endswith(("/.", "/..")):
        out.append("")
    return "/".join(out)


def directory_of(url: str) -> str:
    """The directory URL of a sitemap URL: everything up to and including its last ``/``."""
    o = Origin.of(url)
    return o.path[: o.path.rfind("/") + 1]


def validate_loc(uri: str, what: str = "loc") -> str:
    """Check an absolute http(s) URI against SM201–SM204; return it unchanged.

    Expects the output of :func:`iri_to_uri`.
    """
    if len(uri) > MAX_LOC_LENGTH:
        raise ValueError(
            f"{what} is {len(uri)} characters long; sitemaps.org requires fewer than 2,048"
        )
    m = _SPLIT.fullmatch(uri)
    if m is None:
        raise ValueError(f"{what} {uri!r} is not an absolute URL; give scheme and host")
    if m["scheme"] not in ("http", "https"):
        raise ValueError(f"{what} {uri!r} has scheme {m['scheme']!r}; use http or https")
    auth = _AUTHORITY.fullmatch(m["auth"])
    assert auth is not None
    if not auth["host"]:
        raise ValueError(f"{what} {uri!r} has no host")
    if _HOST.fullmatch(auth["host"]) is None:
        raise ValueError(f"{what} {uri!r} has an invalid host {auth['host']!r}")
    if auth["port"] is not None:
        p = auth["port"]
        if not (p.isascii() and p.isdigit() and 0 < int(p) < 65536):
            raise ValueError(f"{what} {uri!r} has an invalid port {p!r}")
    if len(uri) < MIN_LOC_LENGTH:
        raise ValueError(f"{what} {uri!r} is shorter than the 12 characters the XSD requires")
    return uri


def resolve(loc: str, base: str) -> str:
    """Resolve a relative location against a base URL (RFC 3986 §5)."""
    return urljoin(base, loc.strip(XML_SPACE))


def check_location(uri: str, sitemap_dir: Origin) -> str | None:
    """Why ``uri`` may not be listed by a sitemap in ``sitemap_dir``, or ``None``.

    sitemaps.org: "all URLs listed in the Sitemap must use the same protocol ...
    and reside on the same host" and "a Sitemap file located at
    http://example.com/catalog/sitemap.xml can include any URLs starting with
    http://example.com/catalog/".
    """
    o = Origin.of(uri)
    d = sitemap_dir
    if o.scheme != d.scheme:
        return f"scheme {o.scheme!r} differs from the sitemap's {d.scheme!r}"
    if o.host != d.host:
        return f"host {o.host!r} differs from the sitemap's host {d.host!r}"
    if o.port != d.port:
        return f"port {o.port} differs from the sitemap's port {d.port}"
    if not o.path.startswith(d.path):
        return f"path {o.path!r} is not under the sitemap's directory {d.path!r}"
    return None
