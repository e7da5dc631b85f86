"""A loopback HTTP server that an adapter feeds one wire event at a time, and the event loop
the client library runs on.

Client libraries that make their own requests (an agent framework's chat model, an SDK) are
driven through real HTTP: the adapter points the library at `LoopbackServer.url`, starts
the library's call, and hands the server each chunk of the response as the library's
provider would send it: one wire event per `feed`, as one HTTP chunk. After each one the
library runs until it waits on the socket again, and what it yielded meanwhile is that
chunk's delta, so text a library holds back shows as held back.

"Waits on the socket again" is found without timers: the server and the library share one
event loop, and the library has settled when its pending step is still pending once the
server has written the event and the loop went round `IDLE_TURNS` times in a row with
nothing else ready to run (or `SETTLE_TURNS` times in all). Each
harness thread has its own loop and server (`local()`): the harness may move an
implementation to a fresh thread after a timeout.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: Turns of the event loop after which a client that has not yielded is taken to wait for
#: more input: bytes written on the loopback are readable at once, and a client's way from
#: the socket to its own events (HTTP parser, SSE decoder, stream handler) takes a few turns.
SETTLE_TURNS = 64
#: Turns in a row with nothing but this waiting step to run after which the client is taken
#: to wait: bytes on the loopback are readable at once, so a turn with nothing ready means
#: nothing is on its way.
IDLE_TURNS = 3
#: The longest a whole call, or the end of a stream, may take, in seconds.
CALL_TIMEOUT = 30.0


@dataclass(slots=True)
class Exchange:
    """The answer to the next request: a whole body, or a body sent piece by piece."""

    content_type: str
    body: bytes | None = None
    pieces: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    #: What the client sent (method and path, then its body), once it has.
    request_line: str = ""
    request_body: bytes = b""
    #: Whether every piece handed over has been written to the socket.
    flushed: asyncio.Event = field(default_factory=asyncio.Event)


class LoopbackServer:
    """HTTP/1.1 on 127.0.0.1 answering each request with the next expected exchange."""

    def __init__(self) -> None:
        self._waiting: deque[Exchange] = deque()
        self._server: asyncio.Server | None = None
        #: The task that answers on each open connection, by its writer.
        self._connections: dict[asyncio.StreamWriter, asyncio.Task[Any]] = {}

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    def expect(self, content_type: str, body: bytes | None = None) -> Exchange:
        """The answer to the next request: `body` whole, or (None) the pieces put in the
        exchange's queue, chunked, until a None."""
        # Calls on a thread are made one after the other: an exchange still waiting belongs to
        # a call that never sent its request (a stream abandoned before its first event).
        self._waiting.clear()
        exchange = Exchange(content_type, body)
        self._waiting.append(exchange)
        return exchange

    async def stop(self) -> None:
        """Stop listening and end each open connection's task."""
        if self._server is not None:
            self._server.close()
        tasks = list(self._connections.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[writer] = task
        try:
            while await self._answer(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # Only `stop` cancels it, and it ends quietly: asyncio's stream server logs the
            # traceback of a handler that ends cancelled.
            pass
        finally:
            self._connections.pop(writer, None)
            writer.close()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        body = await reader.readexactly(length) if length else b""
        if not self._waiting:
            message = b"no response is expected"
            writer.write(_head("404 Not Found", "text/plain", len(message)) + message)
            await writer.drain()
            return True
        exchange = self._waiting.popleft()
        exchange.request_line, exchange.request_body = lines[0], body
        if exchange.body is not None:
            writer.write(_head("200 OK", exchange.content_type, len(exchange.body)) + exchange.body)
            await writer.drain()
            return True
        writer.write(_head("200 OK", exchange.content_type, None))
        while True:
            exchange.flushed.set()
            piece = await exchange.pieces.get()
            exchange.flushed.clear()
            if piece is None:
                writer.write(b"0\r\n\r\n")
                await writer.drain()
                exchange.flushed.set()
                return True
            if piece:
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()


def _head(status: str, content_type: str, length: int | None) -> bytes:
    size = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    return f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{size}\r\n\r\n".encode()


class Local:
    """One thread's event loop, its server, and the clients adapters built on that loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = LoopbackServer()
        self.loop.run_until_complete(self.server.start())
        self._clients: dict[str, Any] = {}

    def client(self, key: str, build: Callable[[str], Any]) -> Any:
        """The client `build(server URL)` made on this loop (built once per thread)."""
        if key not in self._clients:
            self._clients[key] = build(self.server.url)
        return self._clients[key]

    def run(self, call: Awaitable[T]) -> T:
        asyncio.set_event_loop(self.loop)
        return self.loop.run_until_complete(asyncio.wait_for(call, CALL_TIMEOUT))

    def whole(self, content_type: str, body: bytes, call: Callable[[], Awaitable[T]]) -> T:
        """`call()`'s result with the server answering its request with `body`."""
        self.server.expect(content_type, body)
        return self.run(call())

    def close(self) -> None:
        """End what is pending on the loop (the server's kept-alive connections, a stream
        left unfinished) and close it. Left to the collector at exit instead, each pending
        task is reported on standard error ("Task was destroyed but it is pending")."""
        self.loop.run_until_complete(self._end_pending())
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()

    async def _end_pending(self) -> None:
        await self.server.stop()
        # What else is pending (a library's step that waited for more of a stream) is
        # cancelled.
        pending = asyncio.all_tasks() - {asyncio.current_task()}
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


def _busy(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether callbacks other than the running one are ready (True when the loop does not
    say: then only `SETTLE_TURNS` ends the wait)."""
    ready = getattr(loop, "_ready", None)
    return ready is None or len(ready) > 0


async def _next(events: AsyncIterator[T]) -> T:
    return await anext(events)


_THREAD = threading.local()
#: Every thread's loop, kept for the life of the process: a loop collected with its server's
#: connections still open (its thread abandoned after a timeout) complains on standard error.
_KEPT: list[Local] = []


@atexit.register
def _close_kept() -> None:
    # A loop still running belongs to a thread abandoned in a call: it is left as it is.
    for kept in _KEPT:
        if not kept.loop.is_running() and not kept.loop.is_closed():
            kept.close()


def local() -> Local:
    """This thread's loop and server."""
    found: Local | None = getattr(_THREAD, "local", None)
    if found is None:
        found = _THREAD.local = Local()
        _KEPT.append(found)
    return found


class Streamed(Generic[T]):
    """One streamed call in progress: the events the library yields, a wire event at a time."""

    def __init__(self, content_type: str, start: Callable[[], AsyncIterator[T]]) -> None:
        self._local = local()
        self._content_type = content_type
        self._start = start
        # The request is made at the first event: a normalizer may be used for whole
        # messages only, and a stream expected earlier would take their requests.
        self._exchange: Exchange | None = None
        self._events: AsyncIterator[T] | None = None
        self._pending: asyncio.Task[T] | None = None
        # Every step of the library's generator runs in one context, as in one `async for`:
        # a context variable it sets in one step (a tracing span) is reset in a later one.
        self._context = contextvars.copy_context()
        self.ended = False

    def _started(self) -> tuple[Exchange, AsyncIterator[T]]:
        if self._exchange is None or self._events is None:
            self._exchange = self._local.server.expect(self._content_type)
            self._events = self._start()
        return self._exchange, self._events

    def send(self, piece: bytes) -> list[T]:
        """What the library yields once `piece` has been sent and it waits for more."""
        exchange, events = self._started()
        exchange.pieces.put_nowait(piece)
        return self._local.run(self._settle(exchange, events, to_end=False))

    def end(self, piece: bytes = b"") -> list[T]:
        """Send the last `piece` and end the body: what the library yields until it ends."""
        exchange, events = self._started()
        if piece:
            exchange.pieces.put_nowait(piece)
        exchange.pieces.put_nowait(None)
        return self._local.run(self._settle(exchange, events, to_end=True))

    async def _settle(
        self, exchange: Exchange, events: AsyncIterator[T], *, to_end: bool
    ) -> list[T]:
        yielded: list[T] = []
        while not self.ended:
            if self._pending is None:
                self._pending = self._local.loop.create_task(_next(events), context=self._context)
            if to_end:
                await asyncio.wait({self._pending})
            else:
                turns = idle = 0
                while not self._pending.done() and turns < SETTLE_TURNS and idle < IDLE_TURNS:
                    await asyncio.sleep(0)
                    # The count starts once the server has written everything it was given.
                    turns = turns + 1 if exchange.flushed.is_set() else 0
                    idle = idle + 1 if turns and not _busy(self._local.loop) else 0
                if not self._pending.done():
                    return yielded
            done, self._pending = self._pending, None
            try:
                yielded.append(done.result())
            except StopAsyncIteration:
                self.ended = True
        return yielded

    def request_body(self) -> bytes:
        """What the library sent (b"" before its first event)."""
        return b"" if self._exchange is None else self._exchange.request_body


__all__ = ["CALL_TIMEOUT", "Exchange", "Local", "LoopbackServer", "Streamed", "local"]
