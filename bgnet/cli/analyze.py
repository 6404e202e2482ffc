"""The analyze family of verbs: ``bgnet rollout`` (:mod:`bgnet.analyze.rollout`) and ``bgnet
analyze`` (:mod:`bgnet.analyze.analysis`).

A person's mistake ends the command with one line, ``bgnet VERB: error: MESSAGE``, and the exit
code of its kind (:mod:`bgnet.errors`): 2 for a bad argument, 3 for an input file that cannot be
used.
"""
from __future__ import annotations

import argparse
import json
import re
import sys

from bgnet.bots import with_ply
from bgnet.cli.arguments import (
    BOT_FORMS,
    MAX_TRIALS,
    MAX_WORKERS,
    ArgumentParser,
    at_most,
    count_arg,
    load_bot_arg,
    output_file_arg,
    seed_arg,
)
from bgnet.errors import BadArgument
from bgnet.formats.position import FORMATS as POSITION_FORMATS

BOT_HELP = f"the bot that plays (default: bgnet's shipped bot): {BOT_FORMS}"


def parse_dice(words: list[str]) -> tuple[int, int]:
    """The dice typed as one word or two (:func:`bgnet.formats.position.read_dice`)."""
    from bgnet.formats.position import read_dice

    try:
        return read_dice(" ".join(words))
    except ValueError as e:
        raise BadArgument(str(e)) from None


def parse_position(text: str, match_id: str | None):
    """(board, MatchContext or None) of a Position ID, ``POSITIONID:MATCHID`` or an XGID (the one
    reader of :mod:`bgnet.formats.position`); a bad one is a :class:`BadArgument`."""
    from bgnet.formats.position import check_in_play, read_position

    try:
        pos = read_position(text, match_id)
        check_in_play(pos.board)
    except ValueError as e:
        raise BadArgument(str(e)) from None
    return pos.board, pos.context


def show_position(position_id: str, match_id: str | None, fmt: str | None) -> str:
    """A position an output shows, written as ``--format`` asks (None: as it is given, a
    Position ID followed by its Match ID when there is one)."""
    if fmt is None:
        return position_id + (f":{match_id}" if match_id else "")
    from bgnet.engine.position_id import board_from_position_id
    from bgnet.formats.match_id import match_context_from_id
    from bgnet.formats.position import write_position

    ctx = match_context_from_id(match_id) if match_id else None
    return write_position(board_from_position_id(position_id), ctx, fmt)


# ---------------------------------------------------------------------------------------------
# bgnet rollout


def rollout_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="bgnet rollout",
                       examples=("bgnet rollout 4HPwATDgc/ABMA 31 --trials 1296",
                                 "bgnet rollout 4HPwATDgc/ABMA --cubeful --trials 2592 --workers 2 --json r.json"),
                description="Roll out a position before the roll, or the candidate moves of a roll, "
                            "with variance reduction (cycled first rolls, luck correction).")
    p.add_argument("position", help="GNU Backgammon Position ID, POSITIONID:MATCHID, or an XGID")
    p.add_argument("dice", nargs="*", help="the roll, e.g. 31 or 3 1: roll out the candidate moves")
    p.add_argument("--match-id", help="GNU Backgammon Match ID (cube, score, Crawford): cubeful rollout")
    p.add_argument("--bot", help=BOT_HELP)
    p.add_argument("--ply", type=int, help="search depth of the bot that plays the trials")
    p.add_argument("--trials", type=count_arg(MAX_TRIALS), default=1296, help="trials per position (default 1296)")
    p.add_argument("--truncate", type=int, metavar="P",
                   help="stop each trial after P plies and use the bot's evaluation")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the dice (default 0)")
    p.add_argument("--workers", type=at_most(MAX_WORKERS, "processes"), default=1,
                   help="share the trials among this many processes (same result)")
    p.add_argument("--cubeful", action="store_true",
                   help="play the cube in the trials (money play without a Match ID)")
    p.add_argument("--cubeless-play", action="store_true",
                   help="the bot chooses the trials' checker plays, and the candidate moves are "
                        "picked, by cubeless money equity even with a cube (default: by the "
                        "match's own measure)")
    p.add_argument("--top", type=int, default=5, help="with DICE: the N best moves at 0-ply (default 5)")
    p.add_argument("--move", action="append", metavar="MOVE",
                   help="with DICE: a move to roll out, e.g. '8/5 6/5' (repeatable; replaces --top)")
    p.add_argument("--no-luck", action="store_true", help="no luck correction")
    p.add_argument("--no-cycle", action="store_true", help="random first rolls instead of cycled ones")
    p.add_argument("--no-bearoff", action="store_true",
                   help="play bear-offs out instead of using the exact database")
    p.add_argument("--json", metavar="PATH", type=output_file_arg,
                   help="also write the result to this JSON file")
    p.add_argument("--format", choices=POSITION_FORMATS,
                   help="write the position as position-id, gnubg-id (POSITIONID:MATCHID) or xgid "
                        "(default: its Position ID, and its Match ID apart)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def rollout_main(argv: list[str]) -> int:
    """``bgnet rollout``; a person's mistake raises a :class:`bgnet.errors.UserError`, which
    :func:`bgnet.cli.main` prints in one line with its exit code."""
    from bgnet.analyze.rollout import (
        CubeSetup,
        RolloutSettings,
        rollout_moves,
        rollout_position,
    )
    from bgnet.engine.notation import IllegalMoveError

    a = rollout_parser().parse_args(argv)
    _check_rollout_args(a)
    board, ctx = parse_position(a.position, a.match_id)
    dice = parse_dice(a.dice) if a.dice else None
    if dice is None and ctx is not None and ctx.dice != (0, 0):
        dice = tuple(ctx.dice)
    spec = with_ply(a.bot, a.ply)
    bot = load_bot_arg(spec)
    settings = RolloutSettings(trials=a.trials, truncate=a.truncate, seed=a.seed, cycle=not a.no_cycle,
                               luck=not a.no_luck, bearoff=not a.no_bearoff, cubeful=a.cubeful,
                               cubeless_play=a.cubeless_play)
    cube = None
    if ctx is not None:
        if not ctx.is_money and min(ctx.away(0), ctx.away(1)) < 1:
            raise BadArgument(f"the Match ID's score {ctx.score} has already won the match")
        cube = CubeSetup(ctx.replace(dice=(0, 0)))
    try:
        if dice is None:
            result = rollout_position(bot, board, settings, cube, a.workers, spec, not a.quiet)
        else:
            result = rollout_moves(bot, board, dice[0], dice[1], settings, a.top, a.move, cube,
                                   a.workers, spec, not a.quiet)
    except IllegalMoveError as e:
        raise BadArgument(str(e)) from None
    finally:
        bot.close()
    if ctx is not None:
        from bgnet.formats.match_id import match_id

        result.match_id = match_id(ctx)
    print(format_rollout(result, a.format))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result.to_dict(), f, indent=2)
            f.write("\n")
        print(f"written to {a.json}")
    return 0


def _check_rollout_args(a) -> None:
    if a.trials < 1:
        raise BadArgument(f"--trials must be at least 1; got {a.trials}")
    if a.truncate is not None and a.truncate < 0:
        raise BadArgument(f"--truncate must be 0 or more plies; got {a.truncate}")
    if a.workers < 1:
        raise BadArgument(f"--workers must be at least 1; got {a.workers}")
    if a.top < 1:
        raise BadArgument(f"--top must be at least 1; got {a.top}")
    if a.move and not a.dice:
        raise BadArgument("--move names moves of a roll: give the DICE too")



def format_rollout(r, fmt: str | None = None) -> str:
    """The rollout as a few lines of text; ``fmt`` writes the position in that format (see
    :func:`show_position`)."""
    s = r.settings
    head = (f"rollout by {r.bot}: {s.trials} trials, seed {s.seed}"
            + (f", truncated at {s.truncate} plies" if s.truncate is not None else "")
            + (", cycled first rolls" if s.cycle else "") + (", luck correction" if s.luck else "")
            + (", cubeful" if s.cubeful else "")
            + (", checker plays by cubeless equity" if s.cubeful and s.cubeless_play else ""))
    head += ("" if s.cubeful else
             "\ncubeless: equities as if there were no cube (money play); --cubeful plays the cube "
             "in the trials and adds cubeful equities")
    lines = [head]
    if fmt is not None:
        shown = show_position(r.results[0].position_id, r.match_id, fmt)
        lines.append(f"{shown} to play {r.dice[0]}{r.dice[1]}" if r.dice else f"position {shown}")
    elif r.dice:
        lines.append(f"{r.results[0].position_id} to play {r.dice[0]}{r.dice[1]}"
                     + (f", Match ID {r.match_id}" if r.match_id else ""))
    else:
        lines.append(f"position {r.results[0].position_id}" + (f", Match ID {r.match_id}" if r.match_id else ""))
    lines.append(f"{'':24s}{'win':>7s} {'w.g':>6s} {'w.bg':>6s} {'l.g':>6s} {'l.bg':>6s}   "
                 f"{'cubeless equity':>16s}" + (f"   {'cubeful':>16s}" if s.cubeful else "")
                 + ("   diff" if r.dice else ""))
    for x in r.results:
        name = (x.move or "before the roll")[:22]
        p = x.probabilities
        row = (f"{name:<24s}{p[0]:7.3f} {p[1]:6.3f} {p[2]:6.3f} {p[3]:6.3f} {p[4]:6.3f}   "
               f"{x.equity:+7.3f} ± {x.equity_se:.3f}")
        if s.cubeful:
            row += f"   {x.cubeful_equity:+7.3f} ± {x.cubeful_equity_se:.3f}"
            if x.mwc is not None:
                row += f" (MWC {100 * x.mwc:.1f} %)"
        if r.dice:
            row += f"   {x.diff:+.3f} ± {x.diff_se:.3f}"
        lines.append(row)
    total = sum(x.trials for x in r.results)
    lines.append(f"{total} trials in {r.seconds:.1f} s: {r.trials_per_second:.0f} trials/s; "
                 "standard errors of the means")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# bgnet analyze


def analyze_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="bgnet analyze",
                       examples=("bgnet eval gnubg:0 pubeval --games 20 --save-mat s.mat",
                                 "bgnet analyze s.mat --bot gnubg:0 --html s.html --json s.json",
                                 "bgnet analyze match.sgf --format xgid",
                                 "bgnet analyze m.mat --bot bgnet-deep --ply 2 --workers 2",
                                 "bgnet eval bgnet-default pubeval --match 5 --matches 4 --save-mat m.mat "
                                 "&& bgnet analyze m.mat --html m.html"),
                description="Judge every checker play and cube decision of a match or money session "
                            "(.mat or GNU Backgammon's .sgf) with a bot: errors, luck, per-player "
                            "error rates and ratings.")
    p.add_argument("file", metavar="FILE", nargs="+", help=FILES_HELP + "; .sgf files as GNU "
                   "Backgammon saves matches too")
    p.add_argument("--bot", help=BOT_HELP.replace("plays", "judges"))
    p.add_argument("--ply", type=int, help="search depth of the judge")
    p.add_argument("--jacoby", action="store_true", help="a money session played with the Jacoby rule "
                   "(.mat files; a .sgf file says its rules itself)")
    p.add_argument("--cubeless-play", action="store_true",
                   help="judge checker plays by cubeless money equity, for sessions played without "
                        "the cube (default: by the measure the player faced, cubeful equity at the "
                        "score or cubeful money equity); cube decisions stay cubeful")
    p.add_argument("--top", type=int, default=10, help="list this many biggest mistakes (default 10)")
    p.add_argument("--format", choices=POSITION_FORMATS,
                   help="write the mistakes' positions as position-id, gnubg-id (the default: "
                        "POSITIONID:MATCHID) or xgid")
    p.add_argument("--json", metavar="PATH", type=output_file_arg,
                   help="write the whole analysis to this JSON file")
    p.add_argument("--html", metavar="PATH", type=output_file_arg,
                   help="write a self-contained HTML report to this file")
    p.add_argument("--workers", type=int, default=1,
                   help="share a file's games among this many processes (default 1); the figures "
                        "are the same")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


FILES_HELP = (".mat files as bgnet or GNU Backgammon writes them: one or several, a folder of them, or "
              "the name bgnet eval --save-mat was given (m.mat for m-001.mat, m-002.mat, ...); several "
              "make one report with each player's totals")


def analyze_main(argv: list[str]) -> int:
    """``bgnet analyze``; a person's mistake raises a :class:`bgnet.errors.UserError`, which
    :func:`bgnet.cli.main` prints in one line with its exit code. A file that stops before its
    match does is analysed as far as it goes, with a warning on standard error, and the report
    says it is unfinished."""
    from bgnet.analyze.analysis import Judge, Report, analyse_match, format_summary
    from bgnet.analyze.inputs import expand, read_match_file

    a = analyze_parser().parse_args(argv)
    if a.top < 0:
        raise BadArgument(f"--top must be 0 or more; got {a.top}")
    if a.workers < 1:
        raise BadArgument(f"--workers must be at least 1; got {a.workers}")
    files = expand(a.file)
    records = {f: read_match_file(f, jacoby=a.jacoby) for f in files}
    if a.jacoby and any(kind == "sgf" for _, kind in records.values()):
        raise BadArgument("--jacoby is for .mat files: a .sgf file says whether the Jacoby rule was "
                          "played (RU[Jacoby])")
    spec = with_ply(a.bot, a.ply)
    bot = load_bot_arg(spec)
    try:
        judge = Judge(bot, a.ply, cubeless_play=a.cubeless_play)
    except ValueError as e:
        raise BadArgument(str(e)) from None
    for name, (record, _) in records.items():
        why = record.unfinished()
        if why:
            print(f"bgnet analyze: warning: {name}: the match is unfinished: {why}; it is analysed "
                  "as far as it goes", file=sys.stderr)
    try:
        results = [analyse_match(records[name][0], judge, name, progress=not a.quiet, workers=a.workers,
                                 spec=spec) for name in files]
    finally:
        bot.close()
    for r in results:
        r.bot = spec
    result = results[0] if len(results) == 1 else Report(results)
    print(reformat_ids(format_summary(result, a.top), a.format))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result.to_dict(a.top), f, indent=1)
            f.write("\n")
        print(f"written to {a.json}")
    if a.html:
        from bgnet.analyze.report import write_html

        write_html(result, a.html)
        print(f"written to {a.html}")
    return 0


_GNUBG_ID_RE = re.compile(r"\(([A-Za-z0-9+/]{14}):([A-Za-z0-9+/]{12})\)")


def reformat_ids(text: str, fmt: str | None) -> str:
    """``text`` with every ``(POSITIONID:MATCHID)`` it shows written in format ``fmt`` (unchanged
    for None).

    >>> reformat_ids("best '8/5 6/5'  (4HPwATDgc/ABMA:cIkFAAAAAAAE)", "xgid")
    "best '8/5 6/5'  (XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10)"
    """
    if fmt is None:
        return text
    return _GNUBG_ID_RE.sub(lambda m: f"({show_position(m.group(1), m.group(2), fmt)})", text)
