"""The serve family of verbs: ``bgnet serve``, the HTTP server and play page for a bot (see
:mod:`bgnet.play.web`), and ``bgnet serve-external``, a bot as GNU Backgammon's external player
(see :mod:`bgnet.play.external`).

``bgnet serve`` listens on the loopback address unless ``--host`` names another; any other
address is served with a warning, since the page and the API have no login. The page's games
are kept in an SQLite file (``--db``, by default in the user's data folder; see
:mod:`bgnet.play.web.database`), so a restart resumes them; ``--no-db`` keeps them in memory.
"""
from __future__ import annotations

import argparse
import ipaddress
import socket
import sys

from bgnet.cli.arguments import BOT_FORMS, ArgumentParser, load_bot_arg
from bgnet.errors import EXIT_USAGE, BadArgument, BadInputFile
from bgnet.play.web import KEEP_ALIVE, REQUEST_TIMEOUT

PROG = "bgnet serve"


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a whole number from 1 to 65535; got {text!r}")
    return int(text)


def _ply(text: str) -> int:
    if text not in ("0", "1", "2", "3"):
        raise argparse.ArgumentTypeError(f"a ply is 0, 1 or 2 (gnubg: 0..3); got {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0 < v <= 3600:
        raise argparse.ArgumentTypeError(f"a time limit is a number of seconds above 0, at most "
                                         f"3600; got {text!r}")
    return v


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 up; got {text!r}")
    return int(text)


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=PROG, description="Serve a bot over HTTP: bgnet's API, wildbg's /move "
                       "and /eval, a page to play it at /, the API described at /docs.",
                       examples=("bgnet serve                      # then open http://127.0.0.1:8080/",
                                 "bgnet serve --bot bgnet-default --ply 2 --port 8081"))
    p.add_argument("--bot", help=f"the bot: {BOT_FORMS} (default: bgnet-default)")
    p.add_argument("--ply", type=_ply, help="search depth of a network bot (0, 1, 2) or gnubg")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=_port, default=8080, help="port (default 8080)")
    p.add_argument("--timeout", type=_seconds, default=30.0,
                   help="seconds a request waits for the bot before a 504 answer (default 30)")
    p.add_argument("--max-waiting", type=_positive, default=64,
                   help="bot calls queued before requests get a 503 answer (default 64)")
    p.add_argument("--request-timeout", type=_seconds, default=REQUEST_TIMEOUT, metavar="SECONDS",
                   help=f"seconds a client has to send a whole request, headers and body, before "
                        f"the connection is closed (default {REQUEST_TIMEOUT:g}); an idle "
                        f"connection is closed {KEEP_ALIVE} s after its last answer")
    p.add_argument("--max-games", type=_positive, default=500,
                   help="games kept for the play page; the longest idle is dropped (default 500)")
    p.add_argument("--db", metavar="PATH",
                   help="the SQLite file that keeps the page's games across restarts, written "
                        "after every change and restored at start (default: bgnet/games.sqlite "
                        "in the user's data folder, $XDG_DATA_HOME or ~/.local/share); a file "
                        "that is damaged, not bgnet's, or in use by another server is refused")
    p.add_argument("--no-db", action="store_true",
                   help="keep the games in memory only: a restart loses them")
    p.add_argument("--seed", type=int, help="seed of the page's dice (default: random)")
    p.add_argument("--cubeless-play", action="store_true",
                   help="rank and choose checker plays by cubeless money equity even where a "
                        "request or game gives the cube and score (default: by the match's own "
                        "measure there)")
    return p


def check_host(host: str) -> bool:
    """Whether ``host`` is a loopback address (``localhost`` counts); BadArgument if it is no
    address at all."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        raise BadArgument(f"--host takes an IP address such as 127.0.0.1 or 0.0.0.0; "
                          f"got {host!r}") from None


def load(spec: str | None, ply: int | None):
    """The bot to serve and the ply its answers search at by default (None for a bot without a
    search depth), resolved and loaded as every verb loads a bot
    (:func:`bgnet.cli.arguments.load_bot_arg`)."""
    bot = load_bot_arg(spec, ply=ply)
    return bot, (ply if bot.searches else None)


def check_free(host: str, port: int) -> None:
    """BadArgument when nothing can listen on ``host:port`` (taken, or not this machine's)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            raise BadArgument(f"cannot listen on {host} port {port}: {e.strerror or e}; "
                              "choose another --port (or --host)") from None


def serve_main(argv: list[str]) -> int:
    a = parser().parse_args(argv)
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        print(f"{PROG}: error: the server needs FastAPI and uvicorn: pip install 'bgnet[serve]'",
              file=sys.stderr)
        return EXIT_USAGE
    if a.no_db and a.db is not None:
        parser().error("give --db PATH or --no-db, not both")
    from bgnet.play.web.app import create_app
    from bgnet.play.web.database import GameDatabase, default_path
    from bgnet.play.web.server import server

    database = None
    try:
        if not check_host(a.host):
            print(f"{PROG}: warning: listening on {a.host}: anyone who can reach this machine "
                  "can use the bot and the play page (there is no login)", file=sys.stderr)
        check_free(a.host, a.port)
        database = None if a.no_db else GameDatabase(a.db if a.db is not None else default_path())
        bot, ply = load(a.bot, a.ply)
        app = create_app(bot, ply=ply, timeout=a.timeout, max_waiting=a.max_waiting,
                         max_games=a.max_games, seed=a.seed, cubeless_play=a.cubeless_play,
                         database=database)
    except (BadArgument, BadInputFile) as e:
        if database is not None:
            database.close()
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return e.exit_code
    shown = f"[{a.host}]" if ":" in a.host else a.host
    kept = "in memory only" if database is None else \
        f"in {database.path} ({app.state.games.restored} restored)"
    print(f"Serving {bot.name} at http://{shown}:{a.port}/ (API described at /docs); games "
          f"kept {kept}. Ctrl-C stops.", file=sys.stderr)
    try:
        server(app, a.host, a.port, request_timeout=a.request_timeout).run()
    finally:
        if database is not None:
            database.close()
    return 0


def serve_external_main(argv: list[str]) -> int:
    """``bgnet serve-external``: the bot as GNU Backgammon's external player (see
    :mod:`bgnet.play.external`)."""
    from bgnet.play.advisor import Advisor
    from bgnet.play.external import ExternalPlayer, ExternalServer

    p = ArgumentParser(
        prog="bgnet serve-external",
        description="Play a bot inside GNU Backgammon as an external player: run this, then in "
                    "GNU Backgammon 'set player 1 external localhost:PORT' and start a game.",
        examples=("bgnet serve-external --port 31000",
                  "bgnet serve-external --port 31000 --bot bgnet-default --ply 1"))
    p.add_argument("--port", type=int, required=True, help="TCP port to listen on")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--bot", help="the bot (default: the bot shipped with bgnet); see bgnet play --help")
    p.add_argument("--ply", type=int, help="search depth of a network bot (0, 1, 2) or gnubg")
    p.add_argument("--jacoby", action=argparse.BooleanOptionalAction, default=True,
                   help="money games use the Jacoby rule (GNU Backgammon's default: on)")
    p.add_argument("--cubeless-play", action="store_true",
                   help="choose checker plays by cubeless money equity (default: by the match's "
                        "own measure, cubeful match winning chances at the score or cubeful money "
                        "equity)")
    p.add_argument("--verbose", action="store_true", help="print every line received and answered")
    a = p.parse_args(argv)
    if not 0 < a.port < 65536:
        p.error(f"--port must be from 1 to 65535; got {a.port}")
    bot = load_bot_arg(a.bot, ply=a.ply)
    log = (lambda line, reply: print(f"<- {line}\n-> {reply}", flush=True)) if a.verbose else None
    advisor = Advisor(bot, cubeless_play=a.cubeless_play)
    try:
        server = ExternalServer((a.host, a.port), ExternalPlayer(advisor, jacoby=a.jacoby, log=log))
    except OSError as e:
        raise BadArgument(f"cannot listen on {a.host}:{a.port}: {e.strerror or e}") from None
    if advisor.note:
        print(f"Note: {advisor.note}.")
    print(f"{bot.name} is listening on {a.host}:{server.port}. In GNU Backgammon type:\n"
          f"  set player 1 external {a.host}:{server.port}\n  new match 5\n"
          "Stop with Ctrl-C.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nStopped.")
    finally:
        server.server_close()
    return 0
