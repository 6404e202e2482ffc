"""The ``bgnet`` command: one subcommand (verb) per thing a user does.

:func:`main` is the one place where a person's mistakes become messages: an exception that means
one (a :class:`bgnet.errors.UserError`, which every such error class of the library derives
from, or a missing file) is printed as one line,
``bgnet VERB: error: MESSAGE``, and the command exits with the code of its kind (see
:mod:`bgnet.errors`). Any other exception is a bug and keeps its traceback.

The verbs' parsers share :mod:`bgnet.arguments` (one-line parser errors, help with examples,
argument types checked before any work starts, and loading a bot named on the command line).
"""
from __future__ import annotations

import sys

from bgnet.arguments import error_line, user_error_code
from bgnet.errors import EXIT_INTERRUPTED, EXIT_USAGE, require


def _cmd_moves(argv: list[str]) -> int:
    """``bgnet moves POSITION [DICE]``: a header, then every legal move with the next position
    (the opponent on roll), written as ``--format`` asks (Position IDs by default, whatever
    POSITION's format). POSITION is a Position ID, ``POSITIONID:MATCHID`` or an XGID; one that
    carries dice needs no DICE. A person's mistake is
    one line on standard error and exit code 2."""
    from bgnet.arguments import ArgumentParser
    from bgnet.engine.api import game_over, legal_moves
    from bgnet.errors import BadArgument
    from bgnet.formats.position import FORMATS, after_move_context, read_position, write_position

    p = ArgumentParser(prog="bgnet moves", description="List every legal move of a position.",
                       examples=("bgnet moves 4HPwATDgc/ABMA 31",
                                 "bgnet moves 4HPwATDgc/ABMA:cInlACAAIAAE",
                                 "bgnet moves XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10 "
                                 "--format xgid"))
    p.add_argument("position", help="the player on roll to move: a GNU Backgammon Position ID (14 "
                                    "characters), POSITIONID:MATCHID, or an XGID")
    p.add_argument("dice", nargs="?", help="the roll, e.g. 31 or 3-1 (optional when the position "
                                           "carries dice)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="how to write the positions: position-id (the default), gnubg-id "
                        "(POSITIONID:MATCHID) or xgid")

    def one_line_error(message: str):
        raise BadArgument(message)

    a = p.parse_args(argv)
    try:
        pos = read_position(a.position)
    except ValueError as e:
        one_line_error(str(e))
    if a.dice is not None:
        digits = [c for c in a.dice if c.isdigit()]
        if len(digits) != 2 or not all("1" <= c <= "6" for c in digits) or len(a.dice.strip()) > 3:
            one_line_error(f"dice must be two numbers from 1 to 6, e.g. 31 or 3-1; got {a.dice!r}")
        d1, d2 = int(digits[0]), int(digits[1])
    elif pos.dice() is not None:
        d1, d2 = pos.dice()
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


def _cmd_eval(argv: list[str]) -> int:
    from bgnet.evaluate.cli import eval_main

    return eval_main(argv)


def _cmd_bench(argv: list[str]) -> int:
    from bgnet.evaluate.cli import bench_main

    return bench_main(argv)


def _cmd_tournament(argv: list[str]) -> int:
    from bgnet.evaluate.cli import tournament_main

    return tournament_main(argv)


def _cmd_export(argv: list[str]) -> int:
    from bgnet.export.onnx_export import export_main

    return export_main(argv)


def _cmd_train(argv: list[str]) -> int:
    from bgnet.train.app import main as train_main

    return train_main(argv)


def _cmd_play(argv: list[str]) -> int:
    from bgnet.play.terminal import play_main

    return play_main(argv)


def _cmd_serve(argv: list[str]) -> int:
    from bgnet.play.web.cli import serve_main

    return serve_main(argv)


def _cmd_serve_external(argv: list[str]) -> int:
    from bgnet.play.external import serve_main

    return serve_main(argv)


def _cmd_ubgi(argv: list[str]) -> int:
    from bgnet.play.ubgi import ubgi_main

    return ubgi_main(argv)


def _cmd_rollout(argv: list[str]) -> int:
    from bgnet.analyze.cli import rollout_main

    return rollout_main(argv)


def _cmd_analyze(argv: list[str]) -> int:
    from bgnet.analyze.cli import analyze_main

    return analyze_main(argv)


def _cmd_widen(argv: list[str]) -> int:
    from bgnet.train.surgery import widen_main

    return widen_main(argv)


def _cmd_distill(argv: list[str]) -> int:
    from bgnet.train.distill import distill_main

    return distill_main(argv)


def _cmd_deepen(argv: list[str]) -> int:
    from bgnet.train.surgery import deepen_main

    return deepen_main(argv)


def _cmd_average(argv: list[str]) -> int:
    from bgnet.train.surgery import average_main

    return average_main(argv)


def _cmd_plot(argv: list[str]) -> int:
    from bgnet.train.curves import plot_main

    return plot_main(argv)


# What each verb needs beyond bgnet's own dependencies (numpy, numba, onnxruntime, tqdm): the
# training extra brings torch, Hydra, TensorBoard and matplotlib.
TRAINING = ("torch",)
NEEDS = {"train": ("torch", "hydra", "omegaconf", "tensorboard"), "export": ("torch", "onnx"),
         "widen": TRAINING, "deepen": TRAINING, "average": TRAINING, "distill": TRAINING,
         "plot": ("matplotlib", "tensorboard")}

COMMANDS = {
    "train": (_cmd_train, "train a bot by self-play (Hydra overrides, e.g. model=h160 train.games=100000)"),
    "moves": (_cmd_moves, "list the legal moves of a position"),
    "eval": (_cmd_eval, "play two bots against each other (points per game, 95 % interval)"),
    "bench": (_cmd_bench, "benchmarks: 'bench er' = checker-play error rate, 'bench cube' = cube decisions"),
    "export": (_cmd_export, "export a checkpoint as an ONNX bot that plays without torch (--out bot.onnx)"),
    "tournament": (_cmd_tournament, "rate a run's checkpoints and reference bots against each other"),
    "play": (_cmd_play, "play a bot in the terminal (--bot PATH, --match N, --save FILE.mat)"),
    "serve": (_cmd_serve, "play a bot in the browser and query it over HTTP (--bot, --port; wildbg's /move)"),
    "serve-external": (_cmd_serve_external, "let GNU Backgammon play a bot as an external player (--port P)"),
    "ubgi": (_cmd_ubgi, "run a bot as a UBGI engine on standard input and output (--bot, --ply)"),
    "rollout": (_cmd_rollout, "roll out a position or the candidate moves of a roll (--trials N)"),
    "analyze": (_cmd_analyze, "judge every checker play and cube decision of a .mat file"),
    "widen": (_cmd_widen, "widen a hidden layer of a checkpoint's net, same function, to train on (--contact N)"),
    "deepen": (_cmd_deepen, "insert an identity hidden layer into a checkpoint to train on (--after K)"),
    "average": (_cmd_average, "average the weights of a run's last checkpoints into one net (--last N --out OUT)"),
    "distill": (_cmd_distill, "fit a checkpoint's net to its own 1-ply values of close candidates (--decisions N)"),
    "plot": (_cmd_plot, "draw a run's learning curve from its TensorBoard log (--out PNG)"),
}

# ---------------------------------------------------------------------------------------------
# a person's mistakes

EXAMPLES = (
    "bgnet play --match 5",
    "bgnet eval checkpoints/bgnet-default.onnx pubeval --games 1000",
    "bgnet train model=h160 train.games=100000",
)


def usage() -> str:
    """``bgnet --help``: the verbs, one line each, and a few examples."""
    lines = ["usage: bgnet [--version] <command> [args]   ('bgnet <command> --help' for its options)",
             "", "commands:"]
    lines += [f"  {name:<16s} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "examples:"] + [f"  {e}" for e in EXAMPLES]
    return "\n".join(lines)


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return f"bgnet {installed('bgnet')}"
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "bgnet (version unknown: not installed)"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else EXIT_USAGE
    if argv[0] in ("-V", "--version"):
        print(version())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"bgnet: error: unknown command {name!r}; the commands are "
              f"{', '.join(COMMANDS)} (see 'bgnet --help')", file=sys.stderr)
        return EXIT_USAGE
    try:
        if not {"-h", "--help"} & set(rest):
            if name in NEEDS:
                require(NEEDS[name], "train", f"bgnet {name}")
            _say_if_compiling()
        return COMMANDS[name][0](rest) or 0
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error for the user.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"\nbgnet {name}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:
        code = user_error_code(e)
        if code is None:
            raise  # a bug: its traceback says where
        print(f"bgnet {name}: error: {error_line(e)}", file=sys.stderr)
        return code


def _say_if_compiling() -> None:
    """The first start compiles the kernels for about a minute: say so instead of going quiet."""
    from bgnet.engine.compiled import first_compile_note

    note = first_compile_note()
    if note:
        print(note, file=sys.stderr, flush=True)


def run() -> int:
    """The ``bgnet`` program: :func:`main`, after which a late Ctrl-C (while the interpreter shuts
    down, the work done) no longer turns a finished command into a death by signal."""
    import signal

    code = main()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return code

