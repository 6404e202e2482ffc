"""The play family of verbs: ``bgnet play``, a person against a bot in the terminal
(:mod:`bgnet.play.terminal`), and ``bgnet ubgi``, a bot as an engine of the Universal Backgammon
Interface on standard input and output (:mod:`bgnet.play.ubgi`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bgnet.cli.arguments import (
    BOT_FORMS,
    ArgumentParser,
    load_bot_arg,
    match_length_arg,
    name_arg,
    output_file_arg,
    seed_arg,
)

# ---------------------------------------------------------------------------------------------
# bgnet play


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 up; got {text!r}")
    return int(text)


def _non_negative(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 up; got {text!r}")
    return int(text)


def play_main(argv: list[str]) -> int:
    """``bgnet play``: a person plays a bot in the terminal (see :mod:`bgnet.play.terminal`)."""
    from bgnet.play.advisor import Advisor
    from bgnet.play.terminal import PlaySession

    p = ArgumentParser(prog="bgnet play", description="Play a bot in the terminal.",
                       examples=("bgnet play", "bgnet play --match 5 --save my-match.mat",
                                 "bgnet play --bot gnubg:1 --games 3 --jacoby"))
    p.add_argument("--bot", help=f"the bot: {BOT_FORMS} (default: bgnet-default)")
    p.add_argument("--ply", type=_non_negative, help="search depth of a network bot (0, 1, 2) or gnubg")
    p.add_argument("--match", type=match_length_arg(0), default=0, metavar="N",
                   help="play an N-point match (default 0: money play)")
    p.add_argument("--games", type=_positive, default=1, help="games of a money session (default 1)")
    p.add_argument("--jacoby", action="store_true", help="money play with the Jacoby rule")
    p.add_argument("--seed", type=seed_arg, help="seed of the dice, from 0 up (default: random)")
    p.add_argument("--save", metavar="FILE.mat", type=output_file_arg,
                   help="save the match there after every game and on quitting (FILE.sgf: GNU "
                        "Backgammon's own format)")
    p.add_argument("--name", type=name_arg, default="You", help="your name in the saved match")
    p.add_argument("--hints", type=_positive, default=5, help="moves shown by hint (default 5)")
    p.add_argument("--cubeless-play", action="store_true",
                   help="the bot chooses and hints rank checker plays by cubeless money equity "
                        "(default: by the match's own measure, cubeful equity at the score or "
                        "cubeful money equity)")
    a = p.parse_args(argv)
    if a.save is not None and Path(a.save).exists():
        p.error(f"{a.save} already exists: choose another file for --save (bgnet play does not "
                "overwrite it)")
    bot = load_bot_arg(a.bot, ply=a.ply)
    session = PlaySession(Advisor(bot, cubeless_play=a.cubeless_play), match_length=a.match, games=a.games, seed=a.seed,
                          name=a.name, jacoby=a.jacoby, save_path=a.save, hints=a.hints)
    try:
        return session.run()
    except KeyboardInterrupt:
        print()
        session.interrupted()
        print("Bye.")
        return 130


# ---------------------------------------------------------------------------------------------
# bgnet ubgi


def ubgi_main(argv: list[str]) -> int:
    """``bgnet ubgi``: the bot as a UBGI engine on standard input and output (see
    :mod:`bgnet.play.ubgi`)."""
    from bgnet.bots import with_ply
    from bgnet.play.ubgi import UbgiEngine, serve

    p = ArgumentParser(
        prog="bgnet ubgi",
        description="Run a bot as an engine of the Universal Backgammon Interface (UBGI): commands "
                    "on standard input, answers on standard output (see docs/GUIDE.md).",
        examples=("bgnet ubgi", "bgnet ubgi --bot bgnet-deep --ply 1",
                  "printf 'ubgi\\nposition gnubgid 4HPwATDgc/ABMA\\ndice 3 1\\ngo\\nquit\\n' | bgnet ubgi"))
    p.add_argument("--bot", help="the bot (default: the bot shipped with bgnet); a spec as in bgnet play")
    p.add_argument("--ply", type=int, help="search depth of a network bot (0, 1, 2) or gnubg")
    p.add_argument("--jacoby", action=argparse.BooleanOptionalAction, default=True,
                   help="money games use the Jacoby rule (default: on; the Jacoby option changes it)")
    a = p.parse_args(argv)
    if a.ply is not None and not 0 <= a.ply <= 2:
        p.error(f"--ply must be 0, 1 or 2; got {a.ply}")

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    engine = UbgiEngine(with_ply(a.bot, None), load_bot_arg, ply=a.ply, jacoby=a.jacoby, version=_version(), log=log)
    return serve(engine, sys.stdin.buffer, sys.stdout)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bgnet")
    except PackageNotFoundError:
        return ""
