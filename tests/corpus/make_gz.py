"""Build the corpus's gzip fixtures from their plain sources, reproducibly.

    python tests/corpus/make_gz.py

Every ``gz-src/<where>/<name>.src`` becomes ``<where>/<name>`` (``files/...`` or
``sites/<site>/...``) beside this script. The gzip header carries no file name and
mtime 0, so the same source gives the same bytes with the same zlib. Most fixtures
are one ordinary gzip member; the few listed in ``SPECIAL`` are built the way the
situation they reproduce was made (several members, a stream cut off).
"""

from __future__ import annotations

import gzip
import io
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "gz-src"


def member(data: bytes, level: int = 9) -> bytes:
    """One gzip member, no name, mtime 0."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=level, fileobj=buf, mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def members(parts: int) -> Callable[[bytes], bytes]:
    """Split the source into ``parts`` pieces at line ends, one member each
    (what appending to a .gz file several times produces)."""

    def build(data: bytes) -> bytes:
        lines = data.splitlines(keepends=True)
        step = max(1, -(-len(lines) // parts))
        chunks = [b"".join(lines[i : i + step]) for i in range(0, len(lines), step)]
        return b"".join(member(c) for c in chunks)

    return build


def cut_after(marker: bytes, nth: int) -> Callable[[bytes], bytes]:
    """Stored (level 0) gzip, cut at the shortest prefix that still decompresses to
    everything up to the end of the ``nth`` ``marker``: a download that stopped."""

    def build(data: bytes) -> bytes:
        pos = -1
        for _ in range(nth):
            pos = data.index(marker, pos + 1)
        want = data[: pos + len(marker)]
        whole = member(data, level=0)
        for size in range(len(whole)):
            d = zlib.decompressobj(31)
            if d.decompress(whole[:size]) == want:
                return whole[:size]
        raise ValueError("cut point not found")

    return build


SPECIAL: dict[str, Callable[[bytes], bytes]] = {
    "files/gz-multimember.xml.gz": members(2),
    "files/gz-multimember-3.txt.gz": members(3),
    "files/gz-truncated.xml.gz": cut_after(b"</url>", 10),
}


def main() -> int:
    built = 0
    for src in sorted(SRC.rglob("*.src")):
        rel = src.relative_to(SRC).as_posix()[: -len(".src")]
        data = src.read_bytes()
        out = SPECIAL.get(rel, member)(data)
        target = HERE / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != out:
            target.write_bytes(out)
        built += 1
    print(f"{built} gzip fixtures in {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
