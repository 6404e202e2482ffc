"""The positions family of verbs: ``bgnet moves``, the legal moves of a position."""
from __future__ import annotations

from typing import NoReturn

from bgnet.cli.arguments import ArgumentParser


def moves_main(argv: list[str]) -> int:
    """``bgnet moves POSITION [DICE]``: a header, then every legal move with the next position
    (the opponent on roll), written as ``--format`` asks (Position IDs by default, whatever
    POSITION's format). POSITION is a Position ID, ``POSITIONID:MATCHID`` or an XGID; one that
    carries dice needs no DICE. A person's mistake is
    one line on standard error and exit code 2."""
    from bgnet.engine.api import game_over, legal_moves
    from bgnet.errors import BadArgument
    from bgnet.formats.position import FORMATS, after_move_context, read_dice, read_position, write_position

    p = ArgumentParser(prog="bgnet moves", description="List every legal move of a position.",
                       examples=("bgnet moves 4HPwATDgc/ABMA 31",
                                 "bgnet moves 4HPwATDgc/ABMA:cInlACAAIAAE",
                                 "bgnet moves XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10 "
                                 "--format xgid"))
    p.add_argument("position", help="the player on roll to move: a GNU Backgammon Position ID (14 "
                                    "characters), POSITIONID:MATCHID, or an XGID")
    p.add_argument("dice", nargs="*", help="the roll, e.g. 31, 3-1 or 3 1 (optional when the "
                                           "position carries dice)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="how to write the positions: position-id (the default), gnubg-id "
                        "(POSITIONID:MATCHID) or xgid")

    def one_line_error(message: str) -> NoReturn:
        raise BadArgument(message)

    a = p.parse_args(argv)
    try:
        pos = read_position(a.position)
    except ValueError as e:
        one_line_error(str(e))
    if a.dice:
        try:
            d1, d2 = read_dice(" ".join(a.dice))
        except ValueError as e:
            one_line_error(str(e))
    elif (carried := pos.dice()) is not None:
        d1, d2 = carried
    else:
        one_line_error("give the dice after the position, e.g. 'bgnet moves 4HPwATDgc/ABMA 31'")
    d1, d2 = max(d1, d2), min(d1, d2)
    fmt = a.format or "position-id"
    ctx = pos.context_or_default().replace(dice=(d1, d2), double_offered=False)
    ctx = ctx.replace(turn=ctx.player_on_roll)
    after_ctx = after_move_context(ctx)
    pid = write_position(pos.board, None, "position-id")
    head = f"position {write_position(pos.board, ctx, fmt)}  dice {d1}{d2}"
    if game_over(pos.board):
        print(f"{head}: the game is over (a side has borne off all its checkers)")
        return 0

    def shown(next_id: str) -> str:
        if fmt == "position-id":
            return next_id
        from bgnet.engine.position_id import board_from_position_id

        return write_position(board_from_position_id(next_id), after_ctx, fmt)

    moves = legal_moves(pid, d1, d2)
    if moves[0][0] == "":
        print(f"{head}: no legal move, the turn passes")
        print(f"next position, the opponent on roll: {shown(moves[0][1])}")
        return 0
    print(f"{head}: {len(moves)} legal move{'s' if len(moves) != 1 else ''} "
          "(next positions have the opponent on roll)")
    for i, (text, next_id) in enumerate(moves, 1):
        print(f"{i:4d}. {text:<28s} {shown(next_id)}")
    return 0
