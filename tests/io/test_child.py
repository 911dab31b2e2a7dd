"""io/child.py: both launches, framing, the error round trip, a child that dies or hangs,
cancellation and the end of the children."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitemapkit import errors
from sitemapkit.io.child import (
    AsyncChild,
    Child,
    ChildError,
    ChildGone,
    ErrorRecord,
    ForkUnsafe,
    close_all,
    ready,
)

from . import child_targets

TARGET = "tests.io.child_targets:main"
ALL_FIELDS = {"where": "a.xml", "line": 3, "column": 7, "field": "lastmod", "hint": "fix it"}


@pytest.fixture(autouse=True)
def _tests_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))


def _launch(how: str) -> Child:
    if how == "fork":
        return Child.fork(child_targets.handle, name="the test child")
    return Child(TARGET, name="the test child")


@pytest.fixture(params=["fresh", "fork"])
def child(request: pytest.FixtureRequest) -> Iterator[Child]:
    with _launch(request.param) as c:
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


class _OwnError(errors.InputError):
    """An error class of a caller's, with a field of its own."""

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message, where="w", field="f")
        self.extra = fields


def test_every_sitemap_error_pickles_whole() -> None:
    for exc in (
        errors.LimitError("too big", where="s.xml", line=3, column=9, field="loc", hint="h"),
        _OwnError("own", size=5),
    ):
        again = ErrorRecord.of(exc).exception()
        copy = pickle.loads(pickle.dumps(ErrorRecord.of(exc))).exception()
        assert again is exc
        assert type(copy) is type(exc) and str(copy) == str(exc)
        assert vars(copy) == vars(exc) and copy.args == exc.args


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


@pytest.mark.parametrize("how", ["fresh", "fork"])
def test_a_hanging_child_is_killed(how: str) -> None:
    child = _launch(how)
    child.send(("hang",))
    started = time.monotonic()
    child.close(grace=0.2)  # closing its input does not end a busy child: it is killed
    assert time.monotonic() - started < 5
    assert child.proc.returncode is not None and child.proc.returncode < 0


@pytest.mark.parametrize("how", ["fresh", "fork"])
def test_closing_cancels_the_request_being_answered(how: str) -> None:
    child = _launch(how)
    child.send(("until_cancelled",))
    time.sleep(0.2)
    started = time.monotonic()
    child.close(grace=10)  # it sees its input closed, answers (dropped) and exits
    assert time.monotonic() - started < 5
    assert child.proc.returncode == 0  # ended, not killed


@pytest.mark.parametrize("how", ["fresh", "fork"])
def test_a_reply_still_being_sent_at_the_end_is_read_and_dropped(how: str) -> None:
    child = _launch(how)
    child.send(("big", 8 << 20))  # more than a pipe holds: it blocks until read
    time.sleep(0.2)
    child.close(grace=10)
    assert child.proc.returncode == 0


def test_ready_tells_which_child_has_replied() -> None:
    busy, quick = Child.fork(child_targets.handle), Child.fork(child_targets.handle)
    try:
        busy.send(("until_cancelled",))
        quick.send(("echo", 1))
        assert ready([busy, quick], timeout=10) == [quick]
        assert quick.receive() == 1
        assert ready([busy, quick], timeout=0) == []
    finally:
        close_all([busy, quick], grace=10)
    assert (busy.proc.returncode, quick.proc.returncode) == (0, 0)


def test_a_forked_child_holds_no_end_of_another_childs_pipes() -> None:
    first = Child.fork(child_targets.handle)
    second = Child.fork(child_targets.handle)  # inherits this process's ends of first's pipes
    try:
        first.close(grace=10)  # ...and closed them: first sees the end of its input
        assert first.proc.returncode == 0
        assert second.request(("echo", 2)) == 2
    finally:
        second.close()


def test_a_forked_child_ignores_ctrl_c() -> None:
    with Child.fork(child_targets.handle) as child:
        os.kill(child.proc.pid, signal.SIGINT)  # at once: before it could set SIG_IGN
        time.sleep(0.1)
        assert child.request(("echo", "still here")) == "still here"


def test_fork_is_refused_while_another_thread_runs() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        with pytest.raises(ForkUnsafe, match="cannot fork: 2 threads run"):
            Child.fork(child_targets.handle)
    finally:
        stop.set()
        thread.join()
    with Child.fork(child_targets.handle) as child:  # one thread again: allowed
        assert child.request(("echo", 3)) == 3


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
