"""io/child.py: launch, framing, the error round trip, a child that dies or hangs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitemapkit import errors
from sitemapkit.io.child import AsyncChild, Child, ChildError, ChildGone, ErrorRecord

TARGET = "tests.io.child_targets:main"
ALL_FIELDS = {"where": "a.xml", "line": 3, "column": 7, "field": "lastmod", "hint": "fix it"}


@pytest.fixture(autouse=True)
def _tests_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))


@pytest.fixture
def child() -> Iterator[Child]:
    with Child(TARGET, name="the test child") as c:
        yield c


def test_a_sitemap_error_keeps_its_class_and_every_field(child: Child) -> None:
    for name in ("SitemapError", "ParseError", "UnsafeXMLError", "LimitError", "InputError"):
        with pytest.raises(getattr(errors, name)) as info:
            child.request(("raise", name, "bad value", ALL_FIELDS))
        exc = info.value
        assert type(exc) is getattr(errors, name)
        assert exc.message == "bad value"
        assert (exc.where, exc.line, exc.column, exc.field, exc.hint) == tuple(ALL_FIELDS.values())
        assert str(exc) == "bad value (at a.xml:3:7, field lastmod)"
    assert child.request(("echo", 1)) == 1  # the child goes on after an error


def test_error_record_of_an_unknown_class_is_the_root_class() -> None:
    exc = ErrorRecord("NoSuchError", "m", where="w", field="f").exception()
    assert type(exc) is errors.SitemapError and (exc.where, exc.field) == ("w", "f")


def test_other_exceptions_come_back_as_child_error(child: Child) -> None:
    with pytest.raises(ChildError, match="ValueError") as info:
        child.request(("crash",))
    assert not isinstance(info.value, ChildGone)
    assert child.request(("echo", "still here")) == "still here"


def test_large_frames_and_stray_prints(child: Child) -> None:
    big = bytes(range(256)) * (96 << 10)  # 24 MiB
    assert child.request(("echo", big)) == big
    assert child.request(("print", [1, 2])) == [1, 2]
    child.send_bulk("tag", big)  # the bytes travel beside the request, not pickled
    assert child.receive() == ("tag", len(big), big[-3:])


def test_a_child_that_dies_raises_child_gone(child: Child) -> None:
    with pytest.raises(ChildGone, match=r"the test child exited unexpectedly \(exit code 3\)"):
        child.request(("die", 3))
    with pytest.raises(ChildGone) as info:
        child.request(("echo", 1))
    assert info.value.returncode == 3


def test_a_hanging_child_is_killed() -> None:
    child = Child(TARGET)
    child.send(("hang",))
    started = time.monotonic()
    child.close(grace=0.2)  # closing its input does not end a busy child: it is killed
    assert time.monotonic() - started < 5
    assert child.proc.returncode is not None and child.proc.returncode < 0


def test_async_child_pipelines_in_order_and_round_trips_errors() -> None:
    async def main() -> None:
        child = AsyncChild(TARGET)
        await child.start()
        try:
            futures = [child.send(("echo", i)) for i in range(50)]
            bad = child.send(("raise", "FetchError", "no", ALL_FIELDS))
            await child.drain()
            assert [await f for f in futures] == list(range(50))
            with pytest.raises(errors.FetchError) as info:
                await bad
            assert info.value.field == "lastmod" and info.value.line == 3
        finally:
            await child.close()

    asyncio.run(main())


def test_async_child_cancelled_while_hanging_then_closed() -> None:
    async def main() -> None:
        child = AsyncChild(TARGET, gone=lambda code: errors.ParseError(f"gone {code}"))
        await child.start()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):
                await child.request(("hang",))
        later = child.send(("echo", 1))  # owed by a child that will be killed
        started = time.monotonic()
        await child.close(grace=0.2)
        assert time.monotonic() - started < 5
        with pytest.raises(errors.ParseError, match="gone"):
            await later
        assert child.dead
        with pytest.raises(errors.ParseError):
            await child.send(("echo", 2))

    asyncio.run(main())


def test_async_child_that_dies_fails_what_it_owed() -> None:
    async def main() -> None:
        child = AsyncChild(TARGET)
        await child.start()
        try:
            first = child.send(("die", 5))
            second = child.send(("echo", 1))
            await child.drain()
            for fut in (first, second):
                with pytest.raises(ChildGone) as info:
                    await fut
                assert info.value.returncode == 5
        finally:
            await child.close()

    asyncio.run(main())
