import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemapkit.core.urls import (
    Origin,
    check_location,
    escape,
    iri_to_uri,
    normalize,
    validate_loc,
)


@pytest.mark.parametrize(
    ("iri", "uri"),
    [
        ("https://example.com/ümlat.php&q=name", "https://example.com/%C3%BCmlat.php&q=name"),
        ("HTTPS://Example.COM/Path", "https://example.com/Path"),
        ("https://bücher.example/", "https://xn--bcher-kva.example/"),
        ("https://example.com/a b", "https://example.com/a%20b"),
        ("https://example.com/100%", "https://example.com/100%25"),
        ("https://example.com/%C3%BC", "https://example.com/%C3%BC"),
        ("https://example.com:8080/x?y=<z>", "https://example.com:8080/x?y=%3Cz%3E"),
        ("  https://example.com/  ", "https://example.com/"),
    ],
)
def test_iri_to_uri(iri: str, uri: str) -> None:
    assert iri_to_uri(iri) == uri


@given(st.text())
def test_iri_to_uri_is_idempotent(path: str) -> None:
    once = iri_to_uri("https://example.com/" + path)
    assert iri_to_uri(once) == once
    assert once.isascii()


def test_escape_is_never_double() -> None:
    assert escape("a&b<c>'\"") == "a&amp;b&lt;c&gt;&apos;&quot;"
    assert escape("&amp;") == "&amp;amp;"  # a literal "&amp;" in the value stays literal
    assert escape("line\nbreak") == "line&#10;break"


@pytest.mark.parametrize(
    "bad",
    [
        "/relative",
        "//example.com/x",
        "ftp://example.com/file",
        "https://example.com:99999/",
        "https://" + "a" * 2050,
    ],
)
def test_validate_loc_refuses(bad: str) -> None:
    with pytest.raises(ValueError):
        validate_loc(bad)


def test_location_rule() -> None:
    d = Origin.of("http://example.com/catalog/")
    assert check_location("http://example.com/catalog/page1.php", d) is None
    assert "scheme" in (check_location("https://example.com/catalog/page1.php", d) or "")
    assert "host" in (check_location("http://www.example.com/catalog/x", d) or "")
    assert "path" in (check_location("http://example.com/images/x", d) or "")
    assert "path" in (check_location("http://example.com/catalog/../images/x", d) or "")
    assert "port" in (check_location("http://example.com:8080/catalog/x", d) or "")
    assert check_location("http://EXAMPLE.com:80/catalog/x", d) is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/a", "https://example.com/a"),
        ("HTTP://WWW.Example.COM:80/", "http://www.example.com/"),
        ("https://example.com:8443/x", "https://example.com:8443/x"),
        ("https://example.com/%7e/%2fx%C3%bc", "https://example.com/~/%2Fx%C3%BC"),
        ("https://example.com/a/../b/./c?q=%7e#frag", "https://example.com/b/c?q=~"),
        ("https://example.com", "https://example.com/"),
        ("https://[::1]:443/x", "https://[::1]/x"),
    ],
)
def test_normalize(url: str, expected: str) -> None:
    assert normalize(url) == expected
