"""io: objects that hold a resource until ``close()``, usable with ``with``/``async with``.

One ``__enter__``/``__exit__`` pair for every such object (a record iterator, a blocking
URL checker, a diff), so that "leaving the block closes it" is written once.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["AsyncCloseable", "Closeable"]


class Closeable:
    """Mixin: ``with obj:`` calls ``obj.close()`` at the end of the block.

    A class that must tell a failed block from a finished one overrides
    :meth:`_close_after_error` (by default it closes too).
    """

    __slots__ = ()

    def close(self) -> object:  # what it returns is the subclass's (the writer's result)
        raise NotImplementedError

    def _close_after_error(self) -> None:
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self._close_after_error()


class AsyncCloseable:
    """Mixin: ``async with obj:`` awaits ``obj.aclose()`` at the end of the block."""

    __slots__ = ()

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
