"""Headless Chromium for the report's tests: the rendered DOM, screenshots, a pixel.

Debian's ``chromium`` package (the Makefile's set-up installs it). When it is missing the
tests that need it fail, saying how to install it: they never skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",  # the tests run as root on CI, where the sandbox refuses to start
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-extensions",
    "--hide-scrollbars",
]


class Chromium:
    """One Chromium binary; each call is a fresh browser with a profile under ``home``."""

    def __init__(self, binary: str, home: Path) -> None:
        self.binary = binary
        self.home = home
        self.runs = 0

    def _run(self, *args: str) -> bytes:
        self.runs += 1
        profile = self.home / f"profile-{self.runs}"
        done = subprocess.run(
            [self.binary, *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            timeout=120,
            check=False,
            # at a lower priority: the tests beside it that time loopback requests come first
            preexec_fn=lambda: os.nice(19),
        )
        if done.returncode != 0:
            raise AssertionError(f"chromium failed ({done.returncode}): {done.stderr[-2000:]!r}")
        return done.stdout

    def dom(self, url: str, *, dark: bool = False) -> str:
        """The page's DOM once its scripts ran (``--dump-dom``)."""
        extra = ["--force-dark-mode"] if dark else []
        return self._run(*extra, "--dump-dom", url).decode("utf-8")

    def screenshot(
        self, url: str, png: Path, *, size: str = "1280,1800", dark: bool = False
    ) -> bytes:
        """A PNG of the page as a person sees it at ``size`` (width,height)."""
        extra = ["--force-dark-mode"] if dark else []
        self._run(*extra, f"--window-size={size}", f"--screenshot={png}", url)
        return png.read_bytes()


def chromium_or_fail(home: Path) -> Chromium:
    binary = shutil.which("chromium")
    if binary is None:
        pytest.fail(
            "chromium is not installed, and the report's tests render the page in it: "
            "run `make unit` as root (its set-up runs `apt-get install -y "
            "--no-install-recommends chromium`), or install Debian's chromium package",
            pytrace=False,
        )
    return Chromium(binary, home)


def first_pixel(png: bytes) -> tuple[int, int, int]:
    """The top-left pixel's RGB of an 8-bit RGB(A) PNG: whatever a row's filter, the first
    pixel of the first row is stored as it is (its neighbours above and left are zero)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, depth, colour = 8, b"", 0, 0
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            depth, colour = data[8], data[9]
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    assert depth == 8 and colour in (2, 6), (depth, colour)
    raw = zlib.decompressobj().decompress(idat, 16)
    return raw[1], raw[2], raw[3]  # raw[0] is the row's filter type


class _Pipe:
    """The DevTools protocol over ``--remote-debugging-pipe``: JSON messages ending in NUL,
    commands on the browser's fd 3, answers and events on its fd 4."""

    def __init__(self, binary: str, profile: Path) -> None:
        commands, self._send = os.pipe()
        self._recv, answers = os.pipe()

        def fds() -> None:
            os.dup2(commands, 3)
            os.dup2(answers, 4)
            os.nice(19)

        self.proc = subprocess.Popen(
            [binary, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=fds,
        )
        os.close(commands)
        os.close(answers)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send a command; return its result (the events before it are kept)."""
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._send, json.dumps(message).encode() + b"\0")
        while True:
            got = self._next()
            if got.get("id") == self._id:
                assert "error" not in got, got
                return dict(got.get("result", {}))
            self.events.append(got)

    def wait(self, method: str) -> dict[str, Any]:
        """The first event ``method`` (one already received, or the next)."""
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            got = self._next()
            self.events.append(got)
            if got.get("method") == method:
                return got

    def _next(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._recv], [], [], 60)
            assert ready, "chromium did not answer within 60 s"
            chunk = os.read(self._recv, 1 << 16)
            assert chunk, "chromium closed its pipe"
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return dict(json.loads(message))

    def close(self) -> None:
        with contextlib.suppress(OSError, AssertionError):
            self.call("Browser.close")
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._send)
        os.close(self._recv)


def requests_of(chromium: Chromium, url: str) -> tuple[list[str], str]:
    """Every URL the page at ``url`` requested until it loaded and its scripts ran, and
    the value of ``data-filter`` on its root then (the filter script's mark)."""
    chromium.runs += 1
    pipe = _Pipe(chromium.binary, chromium.home / f"profile-{chromium.runs}")
    try:
        target = pipe.call("Target.createTarget", url="about:blank")["targetId"]
        session = pipe.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        pipe.call("Network.enable", session)
        pipe.call("Page.enable", session)
        pipe.call("Page.navigate", session, url=url)
        pipe.wait("Page.loadEventFired")
        mark = pipe.call(
            "Runtime.evaluate", session, expression="document.documentElement.dataset.filter"
        )["result"].get("value", "")
        seen = [
            e["params"]["request"]["url"]
            for e in pipe.events
            if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == session
        ]
        return seen, str(mark)
    finally:
        pipe.close()
