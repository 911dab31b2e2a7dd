"""Read every case of the corpus with ``sitemapkit read`` and compare with cases.tsv.

    python tests/corpus/check.py [--sitemapkit PATH] [--only ID_OR_PREFIX ...] [-v]

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
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

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


def run_case(sk: str, row: dict[str, str]) -> list[str]:
    """The differences between what the reader gave and the row (empty: correct)."""
    path = HERE / row["file"]
    if not path.exists():
        return [f"missing fixture {row['file']} (run make_gz.py)"]
    cmd = [sk, "read", str(path), "--format", "jsonl"]
    if row["served_url"]:
        cmd += ["--published-at", row["served_url"]]
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
        problems = run_case(args.sitemapkit, row)
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
