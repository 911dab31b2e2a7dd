"""io: JSON Lines inputs, one record a line in the shape of ``Url.to_record()``."""

from __future__ import annotations

import io
import json

from ...core.model import Url
from ...errors import InputError
from .record import add
from .sink import Input, Sink

__all__ = ["write_jsonl"]


def write_jsonl(w: Sink, src: Input) -> int:
    """Add the URLs of a JSON Lines input; return how many records of other kinds it skipped."""
    where, progress = src.where, src.progress
    skipped = 0
    for n, raw in enumerate(io.TextIOWrapper(src.stream, encoding="utf-8-sig"), 1):
        text = raw.strip()
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"invalid JSON: {exc.msg}", where=where, line=n, column=exc.colno
            ) from None
        except UnicodeDecodeError as exc:
            raise InputError(
                f"input is not valid UTF-8: {exc.reason}", where=where, line=n
            ) from None
        if not isinstance(obj, dict):
            raise InputError("each line must be a JSON object", where=where, line=n)
        if obj.get("kind", "url") != "url":
            skipped += 1
            continue
        loc = obj.get("loc")
        if isinstance(loc, str):
            obj["loc"] = w.resolve(loc)
        digest = obj.pop("content_hash", None)
        if digest is not None and not isinstance(digest, str):
            raise InputError(
                "content_hash must be a string", where=where, line=n, field="content_hash"
            )
        add(w, lambda obj=obj: Url.from_record(obj), where, n, digest)  # type: ignore[misc]
        if progress and not n % 10_000:
            progress(n)
    return skipped
