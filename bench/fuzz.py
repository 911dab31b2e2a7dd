"""The mutation fuzzer of issue #16 §3: no exception but sitemapkit's own, no hang, no blow-up.

    .venv/bin/python bench/fuzz.py [--inputs 50000] [--seed 1 --seed 2] [--jobs 2]
                                   [--time-cap 30] [--memory-cap 2048] [--out DIR] [--json]

Mutated documents are made from the valid seeds in ``tests/data/valid`` and the corpus cases
that read cleanly (``tests/corpus/cases.tsv``, exit 0): byte flips, truncations, inserted
tags, entities, CDATA, DOCTYPEs, BOMs, NULs, invalid UTF-8, duplicated and nested elements,
huge attributes, deep nesting, gzip wrapping and corrupted gzip, declared encodings (UTF-7,
Shift_JIS, UTF-16 with and without a BOM, latin-1), lone surrogates as character references
in a loc, an ``xmlns`` or an attribute, dates at the edges of the calendar, and a loc of up
to a million spaces or odd characters. Input ``i`` of seed ``s`` is made from
``random.Random(f"{s}:{i}")`` alone, so any input can be made again from its two numbers.

Each input goes to a child process (``io/child.py``, forked; a fresh one every
``RECYCLE`` inputs and after every hang) whose address space is capped (``--memory-cap``
MiB, ``RLIMIT_AS``: a blow-up is a ``MemoryError``, or the targets of one input raising
its resident set by more than ``--rss-cap`` MiB above what it held, the input included)
and which is killed when one input
takes longer than ``--time-cap`` seconds (a hang). There every input goes through the
parser fed in three pieces, ``sitemapkit.read`` (offline) and ``sitemapkit.validate`` (the
network refused), and by turns through one of ``loads`` (tolerant), ``loads`` (strict) and
``read_file``; one input in ``CLI_EVERY`` through the command in-process as ``sitemapkit
read --offline``, another as ``sitemapkit validate --no-follow``. A failure is any
exception that is not a :class:`sitemapkit.SitemapError` (and any from ``validate``, which
never raises for bad input), a traceback on the command's stderr, or its usage exit status
2 for a file. A failure is minimised (chunks removed while the same failure stays, in the
same kind of child) and written to ``--out`` (the bytes, and what failed and how).

The report: inputs, failures by kind and place, hangs, inputs slower than ``SLOW`` seconds,
the largest resident set a child reached (and the input that raised it most), the time.
The suite runs a short version (``tests/test_fuzz_mutation.py``); ``make fuzz`` the full one.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import gzip
import io
import json
import os
import random
import re
import resource
import sys
import tempfile
import time
import traceback
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import sitemapkit as sk  # noqa: E402 - the source tree beside this file
from sitemapkit.cli.main import run as cli_run  # noqa: E402
from sitemapkit.core.parse import SitemapParser  # noqa: E402
from sitemapkit.io import child as kids  # noqa: E402
from sitemapkit.reader import ReadReport  # noqa: E402
from sitemapkit.validation.fetcher import Fetched  # noqa: E402

NOW: Final = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
PUBLISHED: Final = "https://www.example.com/sitemap.xml"
RECYCLE: Final = 400  # inputs a child serves before a fresh one (its peak RSS is per child)
CLI_EVERY: Final = 4  # the command costs most: every 4th input goes through read, validate
SLOW: Final = 2.0  # seconds: an input slower than this is listed (not a failure)
#: The largest huge value (attribute, loc, nesting) a mutation makes: ``--max-size``, which
#: the suite's short run lowers (a fork's child inherits it).
MAX_SIZE = [1 << 20]

# -- seeds -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Seed:
    name: str  # the file name a mutated input is written under (robots.txt is told by it)
    data: bytes  # plain: gzip seeds are unpacked, the mutations may wrap them again


def load_seeds(root: Path = ROOT) -> list[Seed]:
    """The valid documents of tests/data/valid and the corpus cases that read cleanly."""
    paths = sorted(p for p in (root / "tests/data/valid").rglob("*") if p.is_file())
    corpus = root / "tests/corpus"
    with (corpus / "cases.tsv").open(newline="", encoding="utf-8") as rows:
        for row in csv.DictReader(rows, delimiter="\t"):
            path = corpus / row["file"]
            if row["exit"] == "0" and path.is_file():
                paths.append(path)
    seeds = []
    for path in paths:
        data = path.read_bytes()
        name = path.name
        if data[:2] == b"\x1f\x8b":
            with contextlib.suppress(OSError, EOFError, zlib.error):
                data = gzip.decompress(data)
            name = name.removesuffix(".gz")
        seeds.append(Seed(name, data))
    return seeds


# -- mutations -------------------------------------------------------------------------------

Mutation = Callable[[random.Random, bytes], bytes]

_TAGS: Final = (
    b"<url>", b"</url>", b"<loc>", b"</loc>", b"<sitemap>", b"</sitemap>", b"<urlset>",
    b"</urlset>", b"<sitemapindex>", b"<lastmod>", b"</lastmod>", b"<priority>",
    b"<image:image>", b"<image:loc>", b"<video:video>", b"<news:news>",
    b'<xhtml:link rel="alternate" hreflang="en" href="x"/>', b'<x:y xmlns:x="urn:x">',
    b"<a/>", b"<?pi data?>", b"<!-- c -->", b"<!--", b"-->", b"<", b">", b"</", b"/>",
)  # fmt: skip
_ENTITIES: Final = (
    b"&amp;", b"&lt;", b"&gt;", b"&quot;", b"&apos;", b"&nbsp;", b"&foo;", b"&", b"&#",
    b"&#0;", b"&#x0;", b"&#65;", b"&#x41;", b"&#x110000;", b"&#xFFFE;", b"&#xFFFF;",
    b"&#xD800;", b"&#xDFFF;", b"&#xDBFF;&#xDC00;", b"&#99999999999;", b"&#x1F600;", b"&#-1;",
)  # fmt: skip
_DOCTYPES: Final = (
    b"<!DOCTYPE urlset>",
    b'<!DOCTYPE urlset SYSTEM "http://example.com/x.dtd">',
    b'<!DOCTYPE urlset SYSTEM "file:///etc/passwd">',
    b'<!DOCTYPE u [<!ENTITY e "x">]>',
    b'<!DOCTYPE u [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>',
    b'<!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    b'<!DOCTYPE u [<!ENTITY % p "x"> %p;]>',
    b"<!DOCTYPE",
)
_BOMS: Final = (
    b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff",
)  # fmt: skip
_BAD_UTF8: Final = (
    b"\xff", b"\xfe", b"\x80", b"\xc0\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80",
    b"\xed\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xef\xbf\xbe",
)  # fmt: skip
_ENCODINGS: Final = (
    "UTF-7", "Shift_JIS", "UTF-16", "UTF-16LE", "UTF-16BE", "latin-1", "ISO-8859-1",
    "windows-1252", "EUC-JP", "GB18030", "big5", "UTF-32", "ISO-2022-JP", "ebcdic",
    "cp037", "no-such-encoding", "", "UTF-8\x00",
)  # fmt: skip
_DATES: Final = (
    b"9999-12-31", b"9999-12-31T23:59:59-12:00", b"0001-01-01T00:00:00+14:00",
    b"0001-01-01", b"0000-01-01", b"9999", b"9999-12", b"0001", b"10000-01-01",
    b"9999-12-31T23:59:59Z", b"9999-12-31T24:00:00Z", b"2024-02-30", b"2024-13-01",
    b"2024-01-01T25:61:61+99:99", b"2024-01-01T00:00:00.123456789012Z", b"1969-12-31",
    b"2024-01-01T00:00:00+14:01", b"-0001-01-01", b"2024-1-1", b"0001-01-01T00:00-12:00",
)  # fmt: skip
_NUMBERS: Final = (
    b"NaN", b"inf", b"-inf", b"1e309", b"-0", b"0.50000000000000000001", b"1" * 400, b"",
)  # fmt: skip
_ODD: Final = (
    " ", "%", "%zz", '"', "<", "\u00e9", "\u4e2d", "\U0001f600", "\t", "\u2028", "\ufeff",
    "\x7f", "#", "?", "\\", "[", "]", "\u0301",
)  # fmt: skip
_ELEMENT: Final = re.compile(rb"<([A-Za-z][\w:.-]*)\b[^<>]*>[^<]*</\1>")
_START_TAG: Final = re.compile(rb"<[A-Za-z][\w:.-]*")
_TEXT_OF: Final = re.compile(
    rb"(<(?:[\w]+:)?(loc|lastmod|publication_date|priority|changefreq|title)\b[^<>]*>)([^<]*)(<)"
)


def _at(rnd: random.Random, data: bytes) -> int:
    return rnd.randint(0, len(data))


def _insert(data: bytes, at: int, piece: bytes) -> bytes:
    return data[:at] + piece + data[at:]


def flip(rnd: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rnd.choice((1, 1, 2, 8, 64))):
        if buf:
            buf[rnd.randrange(len(buf))] ^= 1 << rnd.randrange(8)
    return bytes(buf)


def truncate(rnd: random.Random, data: bytes) -> bytes:
    return data[: _at(rnd, data)]


def insert_tag(rnd: random.Random, data: bytes) -> bytes:
    return _insert(data, _at(rnd, data), rnd.choice(_TAGS))


def entity(rnd: random.Random, data: bytes) -> bytes:
    return _insert(data, _at(rnd, data), rnd.choice(_ENTITIES))


def cdata(rnd: random.Random, data: bytes) -> bytes:
    inner = rnd.choice((b"https://example.com/c", b"]]", b"<loc>", b"\xe2\x80\x83", b""))
    piece = rnd.choice((b"<![CDATA[" + inner + b"]]>", b"<![CDATA[" + inner, b"]]>"))
    return _insert(data, _at(rnd, data), piece)


def doctype(rnd: random.Random, data: bytes) -> bytes:
    piece = rnd.choice(_DOCTYPES)
    end = data.find(b"?>")
    at = end + 2 if end >= 0 and rnd.random() < 0.7 else _at(rnd, data)
    return _insert(data, at, piece)


def bom(rnd: random.Random, data: bytes) -> bytes:
    piece = rnd.choice(_BOMS) * rnd.choice((1, 1, 2))
    return _insert(data, 0 if rnd.random() < 0.7 else _at(rnd, data), piece)


def nul(rnd: random.Random, data: bytes) -> bytes:
    return _insert(data, _at(rnd, data), b"\x00" * rnd.choice((1, 1, 3, 1000)))


def bad_utf8(rnd: random.Random, data: bytes) -> bytes:
    return _insert(data, _at(rnd, data), rnd.choice(_BAD_UTF8))


def _element(rnd: random.Random, data: bytes) -> re.Match[bytes] | None:
    found = list(_ELEMENT.finditer(data))
    return rnd.choice(found) if found else None


def duplicate(rnd: random.Random, data: bytes) -> bytes:
    m = _element(rnd, data)
    if m is None:
        return flip(rnd, data)
    return data[: m.end()] + m.group(0) * rnd.choice((1, 2, 100)) + data[m.end() :]


def nest(rnd: random.Random, data: bytes) -> bytes:
    m = _element(rnd, data)
    if m is None:
        return insert_tag(rnd, data)
    whole = m.group(0)
    close = whole.rindex(b"</")
    inner = whole[:close] + rnd.choice((whole, b"<url>" + whole + b"</url>")) + whole[close:]
    return data[: m.start()] + inner + data[m.end() :]


def huge_attribute(rnd: random.Random, data: bytes) -> bytes:
    tags = list(_START_TAG.finditer(data))
    at = rnd.choice(tags).end() if tags else _at(rnd, data)
    size = min(rnd.choice((1 << 10, 1 << 16, 1 << 20)), MAX_SIZE[0])
    value = rnd.choice((b"a", b"&#xD800;", b"\xc3\xa9", b" ")) * (size // 8)
    return _insert(data, at, b' huge="' + value + b'"')


def deep(rnd: random.Random, data: bytes) -> bytes:
    depth = min(rnd.choice((100, 300, 1000, 10_000, 100_000)), MAX_SIZE[0] // 10)
    name = rnd.choice((b"a", b"url", b"loc", b"x:y"))
    piece = b"<" + name + b">"
    closed = rnd.random() < 0.5
    nested = piece * depth + (b"</" + name + b">") * depth * closed
    return _insert(data, _at(rnd, data), nested)


def gzip_wrap(rnd: random.Random, data: bytes) -> bytes:
    packed = gzip.compress(data, mtime=0)
    return rnd.choice((packed, packed + packed, gzip.compress(packed, mtime=0)))


def gzip_corrupt(rnd: random.Random, data: bytes) -> bytes:
    packed = bytearray(gzip.compress(data, mtime=0))
    how = rnd.randrange(5)
    if how == 0:
        return bytes(packed[: rnd.randint(2, len(packed))])
    if how == 1:  # the CRC or the length
        packed[-rnd.randint(1, 8)] ^= 0xFF
    elif how == 2 and len(packed) > 12:  # the stream
        packed[rnd.randrange(10, len(packed) - 8)] ^= 1 << rnd.randrange(8)
    elif how == 3:  # the header's flags
        packed[3] = rnd.randrange(256)
    else:
        return bytes(packed) + bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 40)))
    return bytes(packed)


def encoding(rnd: random.Random, data: bytes) -> bytes:
    name = rnd.choice(_ENCODINGS)
    decl = f'<?xml version="1.0" encoding="{name}"?>'.encode("latin-1")
    body = re.sub(rb"^(\xef\xbb\xbf)?<\?xml[^>]*\?>", b"", data, count=1)
    text = decl + body
    if name.upper().startswith("UTF-16") or name == "UTF-32":
        codec = {"UTF-16": "utf-16", "UTF-32": "utf-32"}.get(name, name.lower())
        try:
            encoded = text.decode("utf-8").encode(codec)
        except UnicodeError:
            return text
        if rnd.random() < 0.5 and encoded[:2] in (b"\xff\xfe", b"\xfe\xff"):
            encoded = encoded[4:] if encoded[:4] in (b"\xff\xfe\x00\x00",) else encoded[2:]
        return encoded
    if name in ("latin-1", "ISO-8859-1") and rnd.random() < 0.5:
        return text.decode("utf-8", "replace").encode("latin-1", "replace")
    return text


def surrogate(rnd: random.Random, data: bytes) -> bytes:
    ref = rnd.choice((b"&#xD800;", b"&#xDFFF;", b"&#55296;", b"&#xDBFF;"))
    where = rnd.randrange(3)
    if where == 0:  # in a loc (or another text)
        found = list(_TEXT_OF.finditer(data))
        if found:
            m = rnd.choice(found)
            text = ref if rnd.random() < 0.5 else m.group(3) + ref
            return data[: m.start(3)] + text + data[m.end(3) :]
    if where == 1:  # in an xmlns
        new, n = re.subn(rb'xmlns(:\w+)?="[^"]*"', rb'xmlns\1="' + ref + b'"', data, count=1)
        if n:
            return new
    tags = list(_START_TAG.finditer(data))
    at = rnd.choice(tags).end() if tags else 0
    return _insert(data, at, b' a="' + ref + b'"')


def _replace_text(rnd: random.Random, data: bytes, kinds: tuple[bytes, ...], value: bytes) -> bytes:
    found = [m for m in _TEXT_OF.finditer(data) if m.group(2) in kinds]
    if not found:
        return data
    m = rnd.choice(found)
    return data[: m.start(3)] + value + data[m.end(3) :]


def date_edge(rnd: random.Random, data: bytes) -> bytes:
    kinds = (b"lastmod", b"publication_date")
    return _replace_text(rnd, data, kinds, rnd.choice(_DATES))


def number_edge(rnd: random.Random, data: bytes) -> bytes:
    return _replace_text(rnd, data, (b"priority", b"changefreq"), rnd.choice(_NUMBERS))


def huge_loc(rnd: random.Random, data: bytes) -> bytes:
    size = min(rnd.choice((1000, 100_000, 1_000_000)), MAX_SIZE[0])
    odd = rnd.choice(_ODD) if rnd.random() < 0.5 else "".join(rnd.sample(_ODD, 6))
    text = ("https://www.example.com/" + odd * (size // len(odd)))[:size]
    value = text.replace("&", "&amp;").replace("<", "&lt;").encode("utf-8")
    if b"<loc>" not in data:
        return data + b"\n" + value  # a text sitemap: one more line
    return _replace_text(rnd, data, (b"loc",), value)


def splice(rnd: random.Random, data: bytes) -> bytes:
    a, b = sorted((_at(rnd, data), _at(rnd, data)))
    return data[:a] + data[b:] + data[a:b] if rnd.random() < 0.5 else data[:b] + data[a:]


MUTATIONS: Final[dict[str, Mutation]] = {
    f.__name__: f
    for f in (
        flip, truncate, insert_tag, entity, cdata, doctype, bom, nul, bad_utf8, duplicate,
        nest, huge_attribute, deep, gzip_wrap, gzip_corrupt, encoding, surrogate, date_edge,
        number_edge, huge_loc, splice,
    )
}  # fmt: skip
_LAST: Final = ("gzip_wrap", "gzip_corrupt")  # the bytes of a gzip are not mutated as XML


def make_input(seeds: list[Seed], seed: int, index: int) -> tuple[Seed, bytes, list[str]]:
    """Input ``index`` of ``seed``: its seed, its bytes and the mutations applied."""
    rnd = random.Random(f"{seed}:{index}")
    base = rnd.choice(seeds)
    names = [rnd.choice(list(MUTATIONS)) for _ in range(1 + min(3, int(rnd.expovariate(1.2))))]
    names.sort(key=lambda n: n in _LAST)  # stable: a gzip wraps what the others made
    data = base.data
    for name in names:
        data = MUTATIONS[name](rnd, data)
    return base, data, names


# -- the targets, in a child -------------------------------------------------------------------


class _Refused:
    """The validator's fetcher: the network is refused (a finding, not a fetch)."""

    def fetch(self, url: str, *, max_bytes: int) -> Fetched:
        raise sk.FetchError(f"the fuzzer fetches nothing: {url!r}", where=url)


def signature(exc: BaseException) -> str:
    """``Kind at file:line in function`` of the innermost frame in sitemapkit (else the last)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/sitemapkit/" in f.filename] or frames
    if not ours:
        return type(exc).__name__
    f = ours[-1]
    where = f.filename.split("/sitemapkit/")[-1]
    return f"{type(exc).__name__} at {where}:{f.lineno} in {f.name}"


def _three_pieces(data: bytes, name: str) -> None:
    parser = SitemapParser(source=name)
    cut = sorted(random.Random(len(data)).sample(range(len(data) + 1), 2)) if data else [0, 0]
    for piece in (data[: cut[0]], data[cut[0] : cut[1]], data[cut[1] :]):
        parser.feed(piece)
    parser.close()


def _targets(path: str, data: bytes, index: int) -> Iterator[tuple[str, Callable[[], object]]]:
    """What input ``index`` goes through: every input through the parser (in three pieces),
    ``read`` and ``validate``; by turns through one of the other readers and the command."""
    yield "parser", lambda: _three_pieces(data, path)
    yield "read", lambda: list(sk.read(path, offline=True, report=ReadReport()))
    yield (
        "validate",
        lambda: sk.validate(
            path, published_at=PUBLISHED, now=NOW, fetcher=_Refused(), max_findings=50
        ),
    )
    turn = index % 3
    if turn == 0:
        yield "loads", lambda: sk.loads(data, strict=False)
    elif turn == 1:
        yield "loads-strict", lambda: sk.loads(data, strict=True)
    else:
        yield "read_file", lambda: list(sk.read_file(path, published_at=PUBLISHED))
    if index % CLI_EVERY == 0:
        yield "cli-read", lambda: _command(["read", "--offline", path])
    elif index % CLI_EVERY == CLI_EVERY // 2:
        yield "cli-validate", lambda: _command(["validate", "--no-follow", path])


class CommandFailed(Exception):
    """The command printed a traceback or exited as for a usage error."""


def _command(argv: list[str]) -> None:
    out, err = io.TextIOWrapper(io.BytesIO()), io.TextIOWrapper(io.BytesIO(), errors="replace")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_run(argv)
    err.flush()
    text = err.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]
    if "Traceback" in text or code == 2:
        last = text.strip().splitlines()[-1:] or [""]
        raise CommandFailed(f"exit {code}: {last[0][:200]}")


@dataclass(frozen=True, slots=True)
class Checked:
    failures: list[tuple[str, str, str]]  # (target, signature, message)
    seconds: float
    maxrss_kib: int
    #: the targets' peak resident set above the child's before them (the input's own bytes,
    #: up to 150 MB for a duplicated huge loc, are not the targets' doing)
    rise_kib: int = 0


def _resident() -> tuple[int, int]:
    """(VmRSS, VmHWM) of this process in KiB, from /proc (ru_maxrss where there is none)."""
    try:
        with open("/proc/self/status", "rb") as fh:
            status = dict(line.split(b":", 1) for line in fh if b":" in line)
        return int(status[b"VmRSS"].split()[0]), int(status[b"VmHWM"].split()[0])
    except (OSError, KeyError, ValueError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak, peak


def _reset_peak() -> None:
    """Start the high-water mark again from the present resident set (Linux: clear_refs 5)."""
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


def check(name: str, data: bytes, index: int, *, folder: str | None = None) -> Checked:
    """The targets of input ``index`` (written as ``name`` in a fresh folder); what failed."""
    start = time.perf_counter()
    failures = []
    _reset_peak()
    before, _ = _resident()
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        for target, call in _targets(path, data, index):
            try:
                call()
            except sk.SitemapError as exc:
                if target == "validate":  # documented: never raises for bad input
                    failures.append((target, signature(exc), str(exc)[:300]))
            except (Exception, RecursionError) as exc:
                where = f"CommandFailed in {target}" if isinstance(exc, CommandFailed) else None
                failures.append((target, where or signature(exc), str(exc)[:300]))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return Checked(failures, time.perf_counter() - start, rss, _resident()[1] - before)


@dataclass(frozen=True, slots=True)
class Job:
    """A request to the child: input ``index`` of ``seed``, or ``data`` written as ``name``
    (through the targets of input ``index``)."""

    seed: int = 0
    index: int = 0
    name: str = ""
    data: bytes = b""


def _handler(seeds: list[Seed], memory_mib: int) -> Callable[[Any], object]:
    limited = []

    def handle(job: Job) -> Checked:
        if not limited:  # in the child, once: the parent keeps its own limits
            cap = memory_mib << 20
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            limited.append(True)
        if job.name:
            return check(job.name, job.data, job.index, folder=_scratch())
        seed, data, _ = make_input(seeds, job.seed, job.index)
        return check(seed.name, data, job.index, folder=_scratch())

    return handle


def _scratch() -> str | None:
    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


# -- the run, in the parent --------------------------------------------------------------------


@dataclass(slots=True)
class Stats:
    inputs: int = 0
    failures: Counter[str] = field(default_factory=Counter)  # "target: signature" -> inputs
    first: dict[str, tuple[int, int]] = field(default_factory=dict)  # -> (seed, index)
    messages: dict[str, str] = field(default_factory=dict)
    hangs: list[tuple[int, int]] = field(default_factory=list)
    gone: list[tuple[int, int, str]] = field(default_factory=list)  # children that died
    blowups: list[tuple[int, int, int]] = field(default_factory=list)  # over --rss-cap
    slow: list[tuple[float, int, int]] = field(default_factory=list)
    peak_kib: int = 0
    peak_rise: tuple[int, int, int] = (0, 0, 0)  # KiB the peak rose by, at (seed, index)
    mutations: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


@dataclass(slots=True)
class _Slot:
    child: kids.Child
    served: int = 0
    rss: int = 0
    job: tuple[int, int] | None = None
    started: float = 0.0


@dataclass(frozen=True, slots=True)
class Caps:
    time: float = 30.0  # seconds an input may take
    memory_mib: int = 2048  # the child's address space
    rss_mib: int = 512  # the targets raising the resident set by more than this: a blow-up


def fuzz(
    seeds: list[Seed],
    seed: int,
    count: int,
    jobs: int,
    caps: Caps,
    stats: Stats,
    deadline: float = float("inf"),
) -> None:
    """Inputs ``0 .. count-1`` of ``seed`` through ``jobs`` children; the figures in ``stats``.
    No input is started after ``deadline`` (``time.perf_counter()``)."""
    handle = _handler(seeds, caps.memory_mib)
    todo = iter(range(count))
    slots: list[_Slot] = []
    start = time.perf_counter()
    more = True
    try:
        while more or any(s.job for s in slots):
            while more and (len(slots) < jobs or any(s.job is None for s in slots)):
                slot = next((s for s in slots if s.job is None), None)
                if slot is None:
                    slot = _Slot(kids.Child.fork(handle, name="the fuzz child"))
                    slots.append(slot)
                index = next(todo, None) if time.perf_counter() < deadline else None
                if index is None:
                    more = False
                    break
                if index and index % 1000 == 0:
                    print(f"fuzz: seed {seed}: {index:,} inputs, {_tally(stats)}", file=sys.stderr)
                slot.child.send(Job(seed, index))
                slot.job, slot.started = (seed, index), time.perf_counter()
                stats.mutations.update(make_input(seeds, seed, index)[2])
            busy = [s for s in slots if s.job is not None]
            if not busy:
                break
            wait = max(0.0, min(s.started for s in busy) + caps.time - time.perf_counter())
            ready = {id(c) for c in kids.ready([s.child for s in busy], wait)}
            for slot in busy:
                if id(slot.child) in ready:
                    _take(slot, stats, caps)
                elif time.perf_counter() - slot.started > caps.time:
                    assert slot.job is not None
                    stats.hangs.append(slot.job)
                    print(f"fuzz: a hang at {slot.job} (over {caps.time:g} s)", file=sys.stderr)
                    stats.inputs += 1
                    _renew(slot, handle)
            for slot in slots:
                if slot.job is None and slot.served >= RECYCLE:
                    _renew(slot, handle)
    finally:
        kids.close_all([s.child for s in slots])
        stats.seconds += time.perf_counter() - start


def _tally(stats: Stats) -> str:
    failed = sum(stats.failures.values())
    return f"{failed} failures, {len(stats.hangs)} hangs, at {time.strftime('%H:%M:%S')}"


def _renew(slot: _Slot, handle: Callable[[Any], object]) -> None:
    slot.child.kill()
    slot.child = kids.Child.fork(handle, name="the fuzz child")
    slot.served, slot.rss, slot.job = 0, 0, None


def _take(slot: _Slot, stats: Stats, caps: Caps) -> None:
    assert slot.job is not None
    seed, index = slot.job
    stats.inputs += 1
    slot.served += 1
    try:
        reply = slot.child.receive()
    except kids.ChildGone as exc:
        stats.gone.append((seed, index, str(exc)))
        print(f"fuzz: the child of ({seed}, {index}) is gone: {exc}", file=sys.stderr)
        slot.served = RECYCLE  # renewed once idle
        slot.job = None
        return
    except kids.ChildError as exc:  # the handler itself failed (making the input)
        reply = Checked([("make_input", "ChildError", str(exc)[:300])], 0.0, slot.rss)
    slot.job = None
    assert isinstance(reply, Checked)
    for target, sig, message in reply.failures:
        key = f"{target}: {sig}"
        if key not in stats.first:  # said at once: a long run's kinds are known early
            said = f"fuzz: new failure at ({seed}, {index}): {key}: {message[:200]}"
            print(said, file=sys.stderr)
        stats.failures[key] += 1
        stats.first.setdefault(key, (seed, index))
        stats.messages.setdefault(key, message)
    if reply.seconds > SLOW:
        stats.slow.append((reply.seconds, seed, index))
    if reply.rise_kib > stats.peak_rise[0]:
        stats.peak_rise = (reply.rise_kib, seed, index)
    slot.rss = reply.maxrss_kib
    stats.peak_kib = max(stats.peak_kib, reply.maxrss_kib)
    if reply.rise_kib > caps.rss_mib << 10:
        stats.blowups.append((seed, index, reply.rise_kib))
        slot.served = RECYCLE  # a fresh child: the peak of this one stays high


# -- minimising a failure --------------------------------------------------------------------


def minimise(
    seeds: list[Seed], key: str, seed: int, index: int, caps: Caps, *, budget: float = 120.0
) -> tuple[str, bytes]:
    """The smallest input found (chunks removed, halving) that fails with the same ``key``."""
    base, data, _ = make_input(seeds, seed, index)
    handle = _handler(seeds, caps.memory_mib)
    holder = [kids.Child.fork(handle, name="the minimising child")]
    deadline = time.perf_counter() + budget

    def fails(candidate: bytes) -> bool:
        child = holder[0]
        child.send(Job(index=index, name=base.name, data=candidate))
        if not kids.ready([child], caps.time):
            child.kill()
            holder[0] = kids.Child.fork(handle, name="the minimising child")
            return False
        try:
            reply = child.receive()
        except kids.ChildError:
            holder[0] = kids.Child.fork(handle, name="the minimising child")
            return False
        assert isinstance(reply, Checked)
        return any(f"{t}: {s}" == key for t, s, _ in reply.failures)

    try:
        if not fails(data):
            return base.name, data  # it needs the child's history: kept whole
        chunk = max(1, len(data) // 2)
        while chunk >= 1 and time.perf_counter() < deadline:
            at = 0
            while at < len(data) and time.perf_counter() < deadline:
                candidate = data[:at] + data[at + chunk :]
                if fails(candidate):
                    data = candidate
                else:
                    at += chunk
            chunk //= 2
    finally:
        holder[0].close()
    return base.name, data


def _slug(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", key).strip("-")[:80]


def save(out: Path, key: str, name: str, data: bytes, origin: tuple[int, int], msg: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    stem = _slug(key)
    (out / f"{stem}.bin").write_bytes(data)
    about = {"key": key, "name": name, "seed": origin[0], "index": origin[1], "message": msg}
    (out / f"{stem}.json").write_text(json.dumps(about, indent=1) + "\n", encoding="utf-8")


# -- the command line --------------------------------------------------------------------------


def summary(stats: Stats, seeds: list[int]) -> dict[str, object]:
    """The figures of a run, as the report prints them (and ``--json`` writes them)."""
    return {
        "seeds": seeds,
        "inputs": stats.inputs,
        "failures": dict(stats.failures.most_common()),
        "first": {k: list(v) for k, v in stats.first.items()},
        "messages": stats.messages,
        "hangs": [list(h) for h in stats.hangs],
        "children_gone": [list(g) for g in stats.gone],
        "memory_blowups": [list(b) for b in stats.blowups],
        "slow": [[round(s, 2), a, b] for s, a, b in sorted(stats.slow, reverse=True)[:10]],
        "slow_count": len(stats.slow),
        "peak_rss_mib": round(stats.peak_kib / 1024, 1),
        "peak_rise": {"mib": round(stats.peak_rise[0] / 1024, 1), "at": stats.peak_rise[1:]},
        "mutations": dict(sorted(stats.mutations.items())),
        "seconds": round(stats.seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", type=int, default=50_000, help="inputs per seed")
    ap.add_argument("--seed", type=int, action="append", help="repeatable (default: 1 and 2)")
    ap.add_argument("--jobs", type=int, default=2, help="children working at once")
    ap.add_argument("--time-cap", type=float, default=30.0, help="seconds an input may take")
    ap.add_argument("--memory-cap", type=int, default=2048, help="MiB of address space a child")
    ap.add_argument(
        "--rss-cap", type=int, default=512, help="MiB one input's targets may add to the RSS"
    )
    ap.add_argument("--out", type=Path, help="folder for the minimised failures")
    ap.add_argument("--minimise-time", type=float, default=120.0, help="seconds per failure")
    ap.add_argument("--max-time", type=float, help="seconds: no input is started after them")
    ap.add_argument("--max-size", type=int, default=MAX_SIZE[0], help="largest huge value")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    MAX_SIZE[0] = args.max_size
    seeds = load_seeds()
    caps = Caps(args.time_cap, args.memory_cap, args.rss_cap)
    stats = Stats()
    chosen = args.seed or [1, 2]
    # split between the seeds: each gets its share of the time
    share = (args.max_time or float("inf")) / len(chosen)
    for seed in chosen:
        fuzz(seeds, seed, args.inputs, args.jobs, caps, stats, time.perf_counter() + share)
    if args.out is not None:
        for key, (seed, index) in stats.first.items():
            name, data = minimise(seeds, key, seed, index, caps, budget=args.minimise_time)
            save(args.out, key, name, data, (seed, index), stats.messages[key])
    figures = summary(stats, chosen)
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        _print(figures, len(seeds))
    bad = stats.failures or stats.hangs or stats.gone or stats.blowups
    return 1 if bad else 0


def _print(figures: dict[str, Any], seeds: int) -> None:
    print(
        f"{figures['inputs']:,} inputs from {seeds} seeds (seeds {figures['seeds']}),"
        f" {figures['seconds']} s; peak RSS of a child {figures['peak_rss_mib']} MiB"
        f" (largest rise {figures['peak_rise']['mib']} MiB at {figures['peak_rise']['at']})"
    )
    failures: dict[str, int] = figures["failures"]
    print(f"failures: {sum(failures.values())} inputs, {len(failures)} kinds")
    for key, n in failures.items():
        print(f"  {n:6}  {key}  first {figures['first'][key]}: {figures['messages'][key][:120]}")
    for label in ("hangs", "children_gone", "memory_blowups"):
        print(f"{label.replace('_', ' ')}: {len(figures[label])} {figures[label][:5]}")
    print(f"slow (> {SLOW} s): {figures['slow_count']} {figures['slow'][:5]}")


if __name__ == "__main__":
    sys.exit(main())
