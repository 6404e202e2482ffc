"""Running bot code for the server: one worker thread, a time limit, a limit on waiting calls.

Bots keep scratch buffers and caches, so they are not safe to call from several threads at once;
every call that touches the bot (moves, evaluations, the page's games, which ask the bot to move)
goes through :meth:`BotService.call`, which runs it on a single worker thread. The event loop
stays free meanwhile, so the server keeps answering other requests (static files, errors, games
waiting for a person).

Two limits keep it responsive under load: at most ``max_waiting`` calls may be queued or running
(more get :class:`Busy`, HTTP 503), and a caller waits at most ``timeout`` seconds
(:class:`TooSlow`, HTTP 504). A call that runs past its time limit cannot be stopped; it finishes
in the background and its answer is dropped.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import functools

from bgnet.errors import shortened


class ApiError(Exception):
    """A request the server cannot answer: ``status`` (HTTP) and a message that says why."""

    def __init__(self, status: int, message: str):
        # a message quotes what was sent: a hostile 100 kB parameter is not echoed
        message = shortened(message)
        super().__init__(message)
        self.status = status
        self.message = message


class Busy(ApiError):
    def __init__(self, waiting: int):
        super().__init__(503, f"the server is busy ({waiting} bot calls waiting): try again shortly")


class TooSlow(ApiError):
    def __init__(self, seconds: float):
        super().__init__(504, f"the bot took longer than the server's limit of {seconds:g} s: "
                              "try a lower ply")


class BotService:
    """The bot and the thread it runs on. ``timeout``: seconds a caller waits for an answer;
    ``max_waiting``: calls queued or running before new ones are refused."""

    def __init__(self, bot, *, timeout: float = 30.0, max_waiting: int = 64):
        if timeout <= 0:
            raise ValueError(f"the time limit must be above 0 seconds; got {timeout}")
        if max_waiting < 1:
            raise ValueError(f"at least one bot call must be allowed to wait; got {max_waiting}")
        self.bot = bot
        self.timeout = float(timeout)
        self.max_waiting = int(max_waiting)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="bot")
        self._waiting = 0

    @property
    def waiting(self) -> int:
        """Calls queued or running now."""
        return self._waiting

    async def call(self, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` on the bot's thread; its exceptions are raised here."""
        if self._waiting >= self.max_waiting:
            raise Busy(self._waiting)
        self._waiting += 1
        future = self._pool.submit(functools.partial(fn, *args, **kwargs))
        loop = asyncio.get_running_loop()
        # Counted until the work itself ends, not when the caller gives up waiting.
        future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._done))
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.timeout)
        except asyncio.TimeoutError:
            raise TooSlow(self.timeout) from None

    def call_now(self, fn, *args, **kwargs):
        """Run ``fn`` on the bot's thread and wait for it (outside the event loop: start-up)."""
        return self._pool.submit(functools.partial(fn, *args, **kwargs)).result()

    def _done(self) -> None:
        self._waiting -= 1

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
