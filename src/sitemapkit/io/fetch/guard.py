"""io.fetch: ``refuse_private=True``: refuse hosts that resolve to non-public addresses.

For server-side use (off by default). Every host is resolved before connecting, and refused
when any of its addresses is private, loopback, link-local, multicast or otherwise not
global. The check and the connection resolve separately, so DNS rebinding within that gap
is not prevented, and a proxy from the environment resolves on its own.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

from ...errors import FetchError

__all__ = ["Guard", "Unresolved", "is_public"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def is_public(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class Unresolved(Exception):
    """The host could not be resolved (worth another try); ``error`` says why."""

    def __init__(self, error: FetchError) -> None:
        super().__init__(error.message)
        self.error = error


class Guard:
    """Decides once per host whether it may be fetched."""

    def __init__(self) -> None:
        self._verdicts: dict[str, str | None] = {}

    async def check(self, url: str) -> None:
        """Raise FetchError when ``url``'s host is not public, Unresolved when unknown."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        if host in self._verdicts:
            reason = self._verdicts[host]
        else:
            reason = await self._resolve(host, parts.port or 0)
            self._verdicts[host] = reason
        if reason is not None:
            raise FetchError(
                f"Refused to fetch {url!r}: {reason}",
                where=url,
                hint="refuse_private=True blocks private, loopback and link-local addresses",
            )

    @staticmethod
    async def _resolve(host: str, port: int) -> str | None:
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(
                    host, port, type=socket.SOCK_STREAM
                )
            except OSError as exc:
                raise Unresolved(FetchError(f"Cannot resolve {host!r}: {exc}")) from exc
            addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
        for ip in addresses:
            if not is_public(ip):
                return f"{host!r} resolves to the non-public address {str(ip)!r}"
        return None
