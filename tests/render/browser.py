"""Headless Chromium for the report's tests: the rendered DOM, screenshots, a pixel.

Debian's ``chromium`` package (the Makefile's set-up installs it). When it is missing the
tests that need it fail, saying how to install it: they never skip.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

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
            preexec_fn=lambda: os.nice(10),
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
