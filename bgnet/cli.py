"""The ``bgnet`` command: one subcommand per thing a user does."""
from __future__ import annotations

import argparse
import sys


def _cmd_moves(argv: list[str]) -> int:
    from bgnet.engine.api import legal_moves

    p = argparse.ArgumentParser(prog="bgnet moves", description="List every legal move of a position.")
    p.add_argument("position_id", help="GNU Backgammon Position ID (14 characters)")
    p.add_argument("dice", help="the roll, e.g. 31 or 3-1")
    a = p.parse_args(argv)
    digits = [c for c in a.dice if c.isdigit()]
    if len(digits) != 2 or not all("1" <= c <= "6" for c in digits):
        p.error(f"dice must be two numbers from 1 to 6, e.g. 31; got {a.dice!r}")
    try:
        moves = legal_moves(a.position_id, int(digits[0]), int(digits[1]))
    except ValueError as e:
        p.error(str(e))
    if not moves:
        print("no legal move: the turn passes")
    for i, (text, pid) in enumerate(moves, 1):
        print(f"{i:4d}. {text:<28s} {pid}")
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


def _cmd_serve_external(argv: list[str]) -> int:
    from bgnet.play.external import serve_main

    return serve_main(argv)


def _cmd_rollout(argv: list[str]) -> int:
    from bgnet.analyze.cli import rollout_main

    return rollout_main(argv)


def _cmd_analyze(argv: list[str]) -> int:
    from bgnet.analyze.cli import analyze_main

    return analyze_main(argv)


COMMANDS = {
    "train": (_cmd_train, "train a bot by self-play (Hydra overrides, e.g. model=h160 train.games=100000)"),
    "moves": (_cmd_moves, "list the legal moves of a position"),
    "eval": (_cmd_eval, "play two bots against each other (points per game, 95 % interval)"),
    "bench": (_cmd_bench, "benchmarks: 'bench er' = checker-play error rate"),
    "export": (_cmd_export, "export a checkpoint as an ONNX bot that plays without torch (--out bot.onnx)"),
    "tournament": (_cmd_tournament, "rate a run's checkpoints and reference bots against each other"),
    "play": (_cmd_play, "play a bot in the terminal (--bot PATH, --match N, --save FILE.mat)"),
    "serve-external": (_cmd_serve_external, "let GNU Backgammon play a bot as an external player (--port P)"),
    "rollout": (_cmd_rollout, "roll out a position or the candidate moves of a roll (--trials N)"),
    "analyze": (_cmd_analyze, "judge every checker play and cube decision of a .mat file"),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: bgnet <command> [args]\n\ncommands:")
        for name, (_, help_) in COMMANDS.items():
            print(f"  {name:<16s} {help_}")
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"bgnet: unknown command {name!r}; try 'bgnet --help'", file=sys.stderr)
        return 2
    try:
        return COMMANDS[name][0](rest) or 0
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error for the user.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
