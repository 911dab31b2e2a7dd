"""Read every case of the corpus with ``sitemapkit read`` and compare with cases.tsv.

    python tests/corpus/check.py [--sitemapkit PATH] [--only ID_OR_PREFIX ...] [--serve] [-v]

Not a pytest module (no ``test_`` name): a report of how the reader does on the
corpus. Per row it runs::

    sitemapkit read FILE --format jsonl [--published-at SERVED_URL] [--no-follow]

``--no-follow`` is added when the expected kind is ``sitemap`` (the row's records are
the index's or robots.txt's own entries, not its children). It then compares the
kind of every record, the record count, the first and last ``loc`` and the exit
code, plus the field checks written in the note as ``{first.FIELD=VALUE}``,
``{last.FIELD=VALUE}`` (exact; ``null`` for a missing value; numbers compared as
numbers) or ``{first.FIELD^=PREFIX}`` (the value starts with PREFIX). FIELD is a
dotted path into the JSON record (``news.publication.language``,
``alternates.0.href``). One line per failing case, a summary per class (the
note's prefix before ``:``), and ``N of M cases read correctly``. Exit status 0
when every case passes, else 1.

With ``--serve`` the site rows are read over HTTP instead: each site folder is
served on 127.0.0.1 (a missing file is a 404), its origin in every body rewritten
to the local one, and the target is the served URL (a robots.txt URL, an index URL
or the site root) on that origin.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CHECK = re.compile(r"\{(first|last)\.([\w.]+)(\^?=)([^}]*)\}")
TIMEOUT = 60


def field(record: dict[str, Any], path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        if isinstance(value, list):
            if not part.isdigit() or int(part) >= len(value):
                return None
            value = value[int(part)]
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def same(value: Any, op: str, expected: str) -> bool:
    if op == "^=":
        return isinstance(value, str) and value.startswith(expected)
    if expected == "null":
        return value is None
    if isinstance(value, bool) or value is None:
        return str(value).lower() == expected.lower()
    if isinstance(value, (int, float)):
        try:
            return float(expected) == float(value)
        except ValueError:
            return False
    return str(value) == expected


@contextmanager
def serve(folder: Path, origin: str) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 with ``origin`` rewritten to the local origin."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            rel = urlsplit(self.path).path.lstrip("/")
            path = (folder / rel).resolve()
            if not rel or not path.is_file() or folder.resolve() not in path.parents:
                self.send_error(404)
                return
            body = path.read_bytes()
            gz = body[:2] == b"\x1f\x8b"
            if gz:
                body = gzip.decompress(body)
            body = body.replace(origin.encode(), local.encode())
            if gz:
                body = gzip.compress(body, mtime=0)
            self.send_response(200)
            ctype = "text/plain" if path.suffix == ".txt" else "application/xml"
            self.send_header("Content-Type", "application/gzip" if gz else ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    local = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield local
    finally:
        server.shutdown()
        server.server_close()


def run_case(sk: str, row: dict[str, str], served: bool = False) -> list[str]:
    """The differences between what the reader gave and the row (empty: correct)."""
    path = HERE / row["file"]
    if not path.exists():
        return [f"missing fixture {row['file']} (run make_gz.py)"]
    if served and row["file"].startswith("sites/"):
        parts = urlsplit(row["served_url"])
        origin = f"{parts.scheme}://{parts.netloc}"
        with serve(HERE / "sites" / Path(row["file"]).parts[1], origin) as local:
            moved = {k: v.replace(origin, local) for k, v in row.items()}
            return compare(sk, [moved["served_url"]], moved)
    target = [str(path)]
    if row["served_url"]:
        target += ["--published-at", row["served_url"]]
    return compare(sk, target, row)


def compare(sk: str, target: list[str], row: dict[str, str]) -> list[str]:
    cmd = [sk, "read", *target, "--format", "jsonl"]
    if row["kind"] == "sitemap":
        cmd.append("--no-follow")
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT, cwd=REPO)
    except subprocess.TimeoutExpired:
        return [f"timed out after {TIMEOUT}s"]
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            problems.append(f"not JSON on stdout: {line[:80]!r}")
            break
    want_count = int(row["count"])
    if proc.returncode != int(row["exit"]):
        problems.append(f"exit {proc.returncode}, want {row['exit']}")
    if len(records) != want_count:
        problems.append(f"count {len(records)}, want {want_count}")
    kinds = sorted({str(r.get("kind")) for r in records})
    if records and kinds != [row["kind"]]:
        problems.append(f"kind {'/'.join(kinds)}, want {row['kind']}")
    first = records[0].get("loc", "") if records else ""
    last = records[-1].get("loc", "") if records else ""
    if first != row["first_loc"]:
        problems.append(f"first {first!r}, want {row['first_loc']!r}")
    if last != row["last_loc"] and want_count != 1:
        problems.append(f"last {last!r}, want {row['last_loc']!r}")
    for which, name, op, expected in CHECK.findall(row["note"]):
        if not records:
            problems.append(f"{which}.{name}: no record")
            continue
        value = field(records[0] if which == "first" else records[-1], name)
        if not same(value, op, expected):
            problems.append(f"{which}.{name} {value!r}, want {op}{expected!r}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sitemapkit", default=str(REPO / ".venv" / "bin" / "sitemapkit"))
    parser.add_argument("--only", nargs="*", default=[], help="case ids or id prefixes")
    parser.add_argument("--serve", action="store_true", help="read sites over HTTP")
    parser.add_argument("-v", "--verbose", action="store_true", help="also list passing cases")
    args = parser.parse_args()

    with open(HERE / "cases.tsv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if args.only:
        rows = [r for r in rows if any(r["id"].startswith(p) for p in args.only)]

    total: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    for row in rows:
        cls = row["note"].split(":", 1)[0]
        total[cls] += 1
        problems = run_case(args.sitemapkit, row, served=args.serve)
        if problems:
            print(f"FAIL {row['id']} [{cls}]: " + "; ".join(problems))
        else:
            passed[cls] += 1
            if args.verbose:
                print(f"ok   {row['id']} [{cls}]")
    print()
    for cls in total:
        print(f"  {cls:<14} {passed[cls]:>3} of {total[cls]:>3}")
    ok = sum(passed.values())
    print(f"{ok} of {len(rows)} cases read correctly")
    return 0 if ok == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
