"""``bgnet serve``: a bot over HTTP (bgnet's own API and wildbg-compatible endpoints) and a page
to play it in the browser.

Layout of the package:

* :mod:`.service`: the one place bot code runs: a worker thread (bots are not thread-safe), a
  time limit per call and a limit on calls waiting, answered 504 and 503;
* :mod:`.positions`: reading positions, dice and IDs from requests, and writing moves and
  probabilities into answers;
* :mod:`.answers`: what the endpoints answer (ranked moves, evaluations, cube decisions, the
  bot's description), computed on the bot's thread;
* :mod:`.games`: the games people play on the page, one per visitor, each a
  :class:`~bgnet.play.table.Table` whose events go to the page;
* :mod:`.app`: the FastAPI application (:func:`create_app`);
* :mod:`.server`: uvicorn serving it, with a deadline for reading each request;

Every error a client causes is a 4xx answer ``{"message": "..."}`` that says what is wrong, as
wildbg answers; nothing a client sends gives a 500.
"""
from __future__ import annotations

# The connection limits of bgnet serve (see .server), here where the command line finds them
# without importing uvicorn.
REQUEST_TIMEOUT = 10.0  # seconds a client has to send a whole request, headers and body
KEEP_ALIVE = 5  # seconds an idle connection is kept after an answer (uvicorn's own default)


def create_app(*args, **kwargs):
    """See :func:`bgnet.play.web.app.create_app` (imported lazily: FastAPI is an optional extra)."""
    from bgnet.play.web.app import create_app as _create

    return _create(*args, **kwargs)


__all__ = ["create_app", "REQUEST_TIMEOUT", "KEEP_ALIVE"]
