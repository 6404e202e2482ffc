"""Running the application under uvicorn, with a deadline for reading each request.

uvicorn closes a connection left idle after an answer (its ``timeout_keep_alive``), but sets no
timer before the first answer: a client that connects and sends nothing, or half a request's
headers, or half its body, is kept as long as it likes, and a thousand such clients hold a
thousand open files. :class:`RequestDeadline` is uvicorn's own h11 protocol with one timer more:
from the moment a connection opens, and from the first byte of each later request on it, the
client has ``request_timeout`` seconds to send the whole request, headers and body. Past that the
connection is closed, after a 408 answer when part of a request had come (a connection that sent
nothing is closed without a word, as browsers open some in advance). The deadline does not move
as bytes trickle in, so sending slowly gains nothing. What the server does once the request is in
is not limited here: the bot's own time limit does that (:mod:`.service`).

>>> RequestDeadline.request_timeout, KEEP_ALIVE
(10.0, 5)
"""
from __future__ import annotations

import asyncio
import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from bgnet.play.web import KEEP_ALIVE, REQUEST_TIMEOUT


class RequestDeadline(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request is not in within
    :attr:`request_timeout` seconds (see the module docstring). :func:`deadline_protocol` makes
    one with another limit."""

    request_timeout: float = REQUEST_TIMEOUT

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._partial = False  # bytes of a request have come, and the request is not complete
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and not self._request_in():  # a new request's first bytes
            self._arm()
        self._partial = True
        super().data_received(data)
        self._settle()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start on a request already received (pipelined)
        if self._deadline is None and self._next_request_started():
            self._arm()
            self._partial = True
        self._settle()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    # -- the timer -------------------------------------------------------------------------------

    def _request_in(self) -> bool:
        """Whether the request of this cycle has been read in full (or the connection is done)."""
        return self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)

    def _next_request_started(self) -> bool:
        return self.conn.their_state is h11.SEND_BODY or bool(self.conn.trailing_data[0])

    def _settle(self) -> None:
        if self._request_in():
            self._disarm()
            self._partial = False

    def _nothing_answered(self) -> bool:
        """Whether no answer to the request being read has begun (the last cycle's may have)."""
        state = self.conn.our_state
        return state is h11.IDLE or (state is h11.SEND_RESPONSE and not self.cycle.response_started)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self._partial and self._nothing_answered():
            self.transport.write(_timeout_answer(self.request_timeout))
        self.transport.close()


def _timeout_answer(seconds: float) -> bytes:
    body = json.dumps({"message": f"the request did not arrive in full within {seconds:g} s: the "
                                  "connection is closed"}).encode()
    head = (f"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode()
    return head + body


def deadline_protocol(seconds: float) -> type[RequestDeadline]:
    """:class:`RequestDeadline` with a deadline of ``seconds``, as uvicorn's ``http`` setting."""
    if not seconds > 0:
        raise ValueError(f"the request deadline is a number of seconds above 0; got {seconds!r}")
    return type("RequestDeadline", (RequestDeadline,), {"request_timeout": float(seconds)})


def server(app, host: str, port: int, *, request_timeout: float = REQUEST_TIMEOUT,
           keep_alive: int = KEEP_ALIVE, log_level: str = "warning"):
    """A ``uvicorn.Server`` for ``app`` on ``host:port`` whose connections keep the deadline
    (``server.run()`` serves until interrupted)."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, http=deadline_protocol(request_timeout),
                            timeout_keep_alive=keep_alive, log_level=log_level)
    return uvicorn.Server(config)


__all__ = ["RequestDeadline", "deadline_protocol", "server", "REQUEST_TIMEOUT", "KEEP_ALIVE"]
