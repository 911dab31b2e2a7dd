"""core.parse: the extensions of a ``<url>``: images, videos, news, hreflang links. Pure.

:meth:`Extensions.classify` sorts the children of a ``<url>`` that are not core values (a
known extension, a near-miss namespace read as the right one, an unknown namespace reported
once); :meth:`Extensions.extend` reads them into the Url. Videos have their own module
(:mod:`.video`): they are most of the extension rules.
"""

from __future__ import annotations

import re
from typing import Final, cast

from lxml import etree

from .. import limits
from ..model import Alternate, Image, InvalidValue, News, Url, Video
from ..trusted import trusted_news, trusted_url
from .canonical import fast_image
from .document import Document
from .tree import EXTENSION_KEYS, EXTENSIONS, foreign, ns_key, split
from .value import Fields, date, fields, optional
from .video import read_video

__all__ = ["Extension", "Extensions"]

#: An extension element to read: (kind, element, its namespace as written).
Extension = tuple[str, etree._Element, str]

_IMAGE_FIELDS: Final = frozenset(["loc", "caption", "geo_location", "title", "license"])
_IMAGE_OPTIONAL: Final = ("caption", "geo_location", "title", "license")
# Google News: tags outside the current reference (NEWS808).
_NEWS_DEPRECATED: Final = frozenset(["access", "genres", "keywords", "stock_tickers"])
_NEWS_KNOWN: Final = frozenset(["publication", "publication_date", "title"]) | _NEWS_DEPRECATED
_NEWS_RULES: Final = {
    "news.publication.name": "NEWS807",
    "news.publication.language": "NEWS804",
    "news.publication_date": "NEWS805",
    "news.title": "NEWS807",
}
#: A language the reader keeps although Google wants ISO 639 alone (NEWS804): a language
#: tag with a region or script (en-US, pt-BR, zh-Hant), a locale (pl_PL), in any case.
_LANGUAGE_TAG: Final = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*", re.ASCII)
#: The child (of <news:publication> for name and language) each field is read from.
_NEWS_ITEMS: Final = {
    "news.publication.name": "name",
    "news.publication.language": "language",
    "news.publication_date": "publication_date",
    "news.title": "title",
}


class Extensions:
    """Reads the extension elements of the entries of one ``<urlset>``."""

    def __init__(self, doc: Document, core_ns: str) -> None:
        self.doc = doc
        self.core_ns = core_ns
        self.add = doc.findings.add
        self.line = doc.line
        self._news = 0  # <news:news> read in this document (NEWS803)

    def classify(self, el: etree._Element, tag: str, raw: str | None) -> Extension | None:
        """Classify a child of <url> that is not a core tag; report what is not read."""
        ns, local = split(tag)
        line = self.line(el)
        once = self.doc.findings.once
        if not ns and ":" in local:
            prefix = local.split(":", 1)[0]
            if once(f"SM004:{prefix}"):
                self.doc.prefix_reported = True
                self.add(
                    "SM004",
                    f"The namespace prefix {prefix!r} of <{local}> is not "
                    f'declared; add xmlns:{prefix}="…" to the root element',
                    line=line,
                    loc=raw,
                    at=el,
                    lost=True,  # not well-formed in the namespaces: the element is lost
                )
            return None
        if ns == self.core_ns or not ns:
            self.add(
                "SM107",
                f"Unknown element <{local}>{'' if ns else ' (no namespace)'} in <url>; "
                "it was ignored",
                line=line,
                loc=raw,
                at=el,
                lost=False,  # no value the record could hold: nothing is lost
            )
            return None
        canonical = EXTENSION_KEYS.get(ns_key(ns))
        if canonical is None:
            foreign(self.doc, ns, line, raw)
            return None
        if canonical != ns and once(f"SM102:{ns}"):
            self.add(
                "SM102",
                f"Namespace {ns!r} should be {canonical!r}; it was read as that",
                line=line,
                loc=raw,
                at=el,
                lost=False,
            )
        kind = EXTENSIONS[canonical]
        if local != kind:
            self.add(
                "SM107",
                f"<{local}> of namespace {canonical!r} cannot be a child of <url>; it was ignored",
                line=line,
                loc=raw,
                at=el,
                lost=True,  # a known extension's value, out of its place
            )
            return None
        return kind, el, ns

    def extend(self, url: Url, extensions: list[Extension], raw: str | None) -> Url:
        """``url`` with the extensions read from ``extensions``."""
        images: list[Image] = []
        videos: list[Video] = []
        alternates: list[Alternate] = []
        news: News | None = None
        news_el: etree._Element | None = None
        for kind, el, ns in extensions:
            if kind == "image":
                image = self._image(el, ns, raw)
                if image is not None:
                    images.append(image)
            elif kind == "video":
                video = read_video(self.doc, el, ns, raw)
                if video is not None:
                    videos.append(video)
            elif kind == "link":
                alternate = self._alternate(el, raw)
                if alternate is not None:
                    alternates.append(alternate)
            elif news_el is not None:
                self.doc.judge(
                    "NEWS802",
                    "<url> has more than one <news:news>; the first one was used",
                    el,
                    raw,
                    lost=True,  # a Url holds one
                )
            else:
                news_el = el
                news = self._news_item(el, ns, raw)
        if len(images) > limits.MAX_IMAGES:
            self.add(
                "IMG602",
                f"<url> has {len(images):,} images; Google reads at most "
                f"{limits.MAX_IMAGES:,}. The rest were ignored",
                line=self.line(el),
                loc=raw,
                lost=True,
            )
            del images[limits.MAX_IMAGES :]
        # Every part is a checked model object already (and the image count is capped
        # above), which is all Url.__post_init__ would check again.
        return trusted_url(
            url.loc,
            cast("str | None", url.lastmod),  # a built Url holds normalised values
            url.changefreq,
            cast("float | None", url.priority),
            tuple(images),
            tuple(videos),
            news,
            tuple(alternates),
        )

    def _image(self, el: etree._Element, ns: str, raw: str | None) -> Image | None:
        found, _ = fields(self.doc, el, ns, _IMAGE_FIELDS, "image:image", "IMG605", raw)
        loc = found.get("loc")
        if loc is None:
            self.doc.judge(
                "IMG601", "<image:image> has no <image:loc>; image skipped", el, raw, lost=True
            )
            return None
        if loc[0] is None:
            return None
        if not loc[0]:
            self.add(
                "IMG601",
                "Empty <image:loc>; image skipped",
                line=loc[1],
                loc=raw,
                at=loc[2],
                lost=True,
            )
            return None
        kw: dict[str, str] = {}
        for name in _IMAGE_OPTIONAL:
            text = optional(self.doc, found, name, "image", raw)
            if text is not None:
                kw[name] = text
        if not kw and self.doc.settings.fast:
            image = fast_image(loc[0])
            if image is not None:
                return image
        return self._checked_image(loc[0], loc[1], kw, found, raw)

    def _checked_image(
        self, loc: str, line: int | None, kw: dict[str, str], found: Fields, raw: str | None
    ) -> Image | None:
        while True:
            try:
                return Image(loc, **kw)
            except InvalidValue as exc:
                name = exc.field.removeprefix("image.")
                if name == "loc":
                    self.add(
                        "IMG603",
                        f"Invalid <image:loc>: {exc.detail}. Image skipped",
                        line=line,
                        loc=raw,
                        at=found["loc"][2],
                        lost=True,
                    )
                    return None
                self.doc.judge(
                    "IMG605",
                    f"Invalid <image:{name}>: {exc.detail}. The value was ignored",
                    found[name][2],
                    raw,
                    lost=True,
                )
                kw.pop(name)

    def _news_item(self, el: etree._Element, ns: str, raw: str | None) -> News | None:
        news = self._news_values(el, ns, raw)
        if news is not None:
            self._news += 1
            if self._news == limits.MAX_NEWS + 1:
                self.doc.judge(
                    "NEWS803",
                    f"The sitemap has more than {limits.MAX_NEWS:,} <news:news> entries; split it",
                    el,
                    raw,
                    lost=False,  # every one is read
                )
        return news

    def _news_values(self, el: etree._Element, ns: str, raw: str | None) -> News | None:
        doc = self.doc
        found, _ = fields(
            doc,
            el,
            ns,
            _NEWS_KNOWN,
            "news:news",
            "SM107",
            raw,
            containers=frozenset(["publication"]),
        )
        for name in [n for n in found if n in _NEWS_DEPRECATED]:
            self.doc.judge(
                "NEWS808",
                f"<news:{name}> is not in Google's current news sitemap reference; it was ignored",
                found[name][2],
                raw,
                lost=False,  # no field of the record holds it
            )
        publication = found.get("publication")
        pub: Fields = {}
        if publication is not None:
            pub, _ = fields(
                doc,
                publication[2],
                ns,
                frozenset(["name", "language"]),
                "news:publication",
                "SM107",
                raw,
            )
        values = self._news_required(found, pub, el, raw)
        if values is None:
            return None
        when = date(
            doc,
            values["publication_date"],
            "news:publication_date",
            found["publication_date"][1],
            raw,
            "NEWS805",
            at=found["publication_date"][2],
            keep=True,  # a coarse or usable off-spec date is kept as written (a warning)
        )
        if when is None:
            return None
        return self._news_model(values, when, found, pub, el, raw)

    def _news_model(
        self,
        values: dict[str, str],
        when: str,
        found: Fields,
        pub: Fields,
        el: etree._Element,
        raw: str | None,
    ) -> News | None:
        """The model's News of the values; a refused one skips it (reported), except a
        language that is usable although off Google's form: kept as written (NEWS804)."""
        language = values["language"]
        kept: InvalidValue | None = None  # the language's refusal, when it is kept all the same
        checked = when  # the date the model checks: a kept coarse date is not its form
        while True:
            try:
                news = News(values["name"], values["language"], checked, values["title"])
                break
            except InvalidValue as exc:
                item = _NEWS_ITEMS.get(exc.field)
                if item == "language" and kept is None and _LANGUAGE_TAG.fullmatch(language):
                    kept = exc
                    values["language"] = "en"  # the other values still go through the model
                    continue
                if item == "publication_date" and checked == when:
                    checked = "2000-01-01"  # date() read and reported it; kept as written
                    continue
                source = pub if item in ("name", "language") else found
                held = None if item is None else source.get(item)
                self.add(
                    _NEWS_RULES.get(exc.field, "NEWS801"),
                    f"Invalid <news:news>: {exc.detail}. News skipped",
                    line=self.line(el) if held is None else held[1],
                    loc=raw,
                    at=el if held is None else held[2],
                    lost=True,
                )
                return None
        if kept is None and news.publication_date == when:
            return news
        if kept is not None:
            self.doc.judge(
                "NEWS804",
                f"Invalid <news:language>: {kept.detail}. Kept as written",
                pub["language"][2],
                raw,
                lost=False,  # a usable language tag: en-US, pt-BR, pl_PL
            )
        # the date as the document wrote it (the model would write hh:mm as hh:mm:00)
        return trusted_news(news.publication_name, language, when, news.title)

    def _news_required(
        self,
        found: Fields,
        pub: Fields,
        el: etree._Element,
        raw: str | None,
    ) -> dict[str, str] | None:
        """Google: name and language of the publication, publication_date and title are
        required (NEWS801, NEWS807); None when one is missing or empty."""
        values: dict[str, str] = {}
        publication = found.get("publication")
        has_publication = publication is not None
        for key, source, what in (
            ("name", pub, "news:name"),
            ("language", pub, "news:language"),
            ("publication_date", found, "news:publication_date"),
            ("title", found, "news:title"),
        ):
            item = source.get(key)
            if item is None:
                missing = (
                    f"<{what}>" if has_publication or source is not pub else "<news:publication>"
                )
                holder = publication if has_publication and source is pub else None
                self.doc.judge(
                    "NEWS801",
                    f"<news:news> has no {missing}; news skipped",
                    el if holder is None else holder[2],
                    raw,
                    lost=True,
                )
                return None
            if item[0] is None:
                return None
            if not item[0]:
                self.doc.judge("NEWS807", f"Empty <{what}>; news skipped", item[2], raw, lost=True)
                return None
            values[key] = item[0]
        return values

    def _alternate(self, el: etree._Element, raw: str | None) -> Alternate | None:
        line = self.line(el)
        rel, hreflang, href, media = (el.get(a) for a in ("rel", "hreflang", "href", "media"))
        if rel is None or rel.strip() != "alternate":
            self.add(
                "HRE901",
                f'<xhtml:link> needs rel="alternate", not {rel!r}; it was ignored',
                line=line,
                loc=raw,
                at=el,
                attr=None if rel is None else "rel",
                lost=True,
            )
            return None
        if href is None:
            self.add(
                "HRE901",
                "<xhtml:link> has no href attribute; it was ignored",
                line=line,
                loc=raw,
                at=el,
                lost=True,
            )
            return None
        try:
            alternate = Alternate(hreflang, href.strip(), media)
        except InvalidValue as exc:
            rule = {"alternate.hreflang": "HRE902", "alternate.href": "HRE903"}.get(
                exc.field, "HRE901"
            )
            self.add(
                rule,
                f"Invalid <xhtml:link>: {exc.detail}. It was ignored",
                line=line,
                loc=raw,
                at=el,
                attr={"HRE902": "hreflang", "HRE903": "href"}.get(rule, "media"),
                lost=True,
            )
            return None
        if hreflang is None:
            # Google reads these too: a separate mobile URL (media="only screen and
            # (max-width: 640px)") and an app deep link (android-app://…).
            what = "a mobile URL" if media is not None else "an alternate"
            self.add(
                "HRE901",
                f"<xhtml:link> has no hreflang attribute: it is no language version. Kept "
                f"as {what}",
                line=line,
                loc=raw,
                at=el,
                lost=False,
            )
        return alternate
