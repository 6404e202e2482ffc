"""The measure family of verbs: ``bgnet eval`` (two bots against each other), ``bgnet bench``
(the error-rate and cube benchmarks) and ``bgnet tournament``, over :mod:`bgnet.measure`."""
from __future__ import annotations

import argparse
import os
import sys

from bgnet.cli.arguments import (
    BOT_FORMS,
    MAX_BATCH,
    MAX_GAMES,
    MAX_MATCHES,
    MAX_WORKERS,
    ArgumentParser,
    at_most,
    count_arg,
    device_arg,
    load_bot_arg,
    match_length_arg,
    output_dir_arg,
    output_file_arg,
    seed_arg,
)
from bgnet.errors import BadInputFile

BOT_HELP = f"a bot: {BOT_FORMS}"


def eval_main(argv: list[str]) -> int:
    """``bgnet eval A B``: cubeless money games (``--games N``), money games with the cube
    (``--cube``) or whole matches (``--match N --matches M``); summary printed, optionally written
    as JSON and the games saved as ``.mat`` files."""
    p = ArgumentParser(
        prog="bgnet eval",
        description="Play two bots against each other: cubeless money games (A's points per "
                    "game), money games with the doubling cube (--cube), or whole matches to N "
                    "points with the cube and the Crawford rule (--match N: A's match win rate).",
        examples=("bgnet eval bgnet-default pubeval --games 1000",
                  "bgnet eval runs/my-run/checkpoints/latest.pt@1 gnubg:0 --cube --games 400 "
                  "--json out.json",
                  "bgnet eval bgnet-default gnubg:0 --match 7 --matches 100 "
                  "--save-mat games/m.mat",
                  "bgnet eval bgnet-default pubeval --match 5 --matches 1 --save-sgf m.sgf"),
    )
    p.add_argument("a", metavar="A", help=BOT_HELP)
    p.add_argument("b", metavar="B", help="the opponent, in the same forms as A")
    p.add_argument("--games", type=count_arg(MAX_GAMES), help="number of money games (default 1000; "
                   "rounded up to an even number with duplicate dice)")
    p.add_argument("--match", type=match_length_arg(1), metavar="N",
                   help="play whole matches to N points (cube, Crawford rule) instead of money games")
    p.add_argument("--matches", type=count_arg(MAX_MATCHES), metavar="M", help="number of matches with --match "
                   "(default 100)")
    p.add_argument("--cube", action="store_true", help="money games with the doubling cube")
    p.add_argument("--jacoby", action="store_true",
                   help="with --cube: gammons count single while the cube is centred")
    p.add_argument("--save-mat", metavar="FILE.mat", type=output_file_arg,
                   help="save the games as GNU Backgammon / Jellyfish .mat files: money games "
                        "as one session in FILE.mat, matches one file each (FILE-001.mat, ...; "
                        "FILE.mat itself for a single match)")
    p.add_argument("--save-sgf", metavar="FILE.sgf", type=output_file_arg,
                   help="save the games as GNU Backgammon .sgf files (load match), named as "
                        "--save-mat names them")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the dice (default 0)")
    p.add_argument("--json", metavar="PATH", type=output_file_arg,
                   help="also write the result to this JSON file")
    p.add_argument("--no-duplicate", action="store_true",
                   help="independent dice for every money game instead of mirrored pairs "
                        "(matches always use independent dice)")
    p.add_argument("--batch", type=at_most(MAX_BATCH, "games"),
                   help="games (or matches) in flight at once (default 2048 games, 256 matches)")
    p.add_argument("--workers", type=at_most(MAX_WORKERS, "processes"), default=1,
                   help="share the games (or matches) among this many processes, one core each: the "
                        "same games, duplicate pairs kept together, the same result and saved files "
                        "(default 1)")
    p.add_argument("--cubeless-play", action="store_true",
                   help="with --match or --cube: net bots choose their checker plays by cubeless "
                        "money equity, as without a cube (default: by the match's own measure, "
                        "cubeful match winning chances at the score or cubeful money equity)")
    p.add_argument("--cube-ply", type=int, choices=(0, 1, 2), metavar="N",
                   help="with --match or --cube: net bots make their cube decisions at this "
                        "depth (0, 1 or 2; 1: searched one roll ahead, cubeful after each roll; "
                        "default: a bot at 0-ply makes its close ones again at 1-ply, a deeper "
                        "bot uses its own depth)")
    _add_device(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    _check_eval_args(a, p)
    bot_a = load_bot_arg(a.a, a.device)
    try:
        bot_b = load_bot_arg(a.b, a.device)
        try:
            if a.cube_ply is not None and not (bot_a.searches or bot_b.searches):
                p.error(f"--cube-ply sets the depth of net bots' cube decisions; neither "
                        f"{bot_a.name} nor {bot_b.name} is one")
            result = _play_eval(a, bot_a, bot_b)
        finally:
            bot_b.close()
    finally:
        bot_a.close()
    print(result.summary())
    if a.json:
        result.to_json(a.json)
        print(f"written to {a.json}")
    return 0


def _check_eval_args(a: argparse.Namespace, p: argparse.ArgumentParser) -> None:
    """Refuse contradictory or out-of-range options; fill in the defaults that depend on the mode."""
    if a.match is not None:
        if a.cube:
            p.error("--match plays matches (always with the cube); --cube is for money games: "
                    "give one of them")
        if a.games is not None:
            p.error("--games counts money games; with --match give the number of matches as "
                    "--matches")
        a.matches = 100 if a.matches is None else a.matches
    elif a.matches is not None:
        p.error("--matches needs --match N (the match length)")
    if a.jacoby and not a.cube:
        p.error("--jacoby applies to money games with the cube: add --cube")
    if a.cubeless_play and not (a.cube or a.match is not None):
        p.error("--cubeless-play applies to play with the cube (--match or --cube); without it "
                "checker plays are always chosen by cubeless equity")
    if a.cube_ply is not None and not (a.cube or a.match is not None):
        p.error("--cube-ply applies to play with the cube (--match or --cube)")
    a.games = 1000 if a.games is None else a.games
    a.batch = (256 if a.match is not None else 2048) if a.batch is None else a.batch
    if a.batch < 1:
        p.error(f"--batch must be at least 1; got {a.batch}")
    if a.workers < 1:
        p.error(f"--workers must be at least 1; got {a.workers}")
    if a.save_mat and not a.save_mat.endswith(".mat"):
        p.error(f"--save-mat takes a file name ending in .mat; got {a.save_mat!r}")
    if a.save_sgf and not a.save_sgf.endswith(".sgf"):
        p.error(f"--save-sgf takes a file name ending in .sgf; got {a.save_sgf!r}")
    if a.match is None and not a.no_duplicate and a.games % 2:
        a.games += 1
        print(f"duplicate dice play games in pairs: playing {a.games} games", file=sys.stderr)


def _play_eval(a: argparse.Namespace, bot_a, bot_b):
    """Play what the options ask for; save the games when asked. Returns the result."""
    from bgnet.measure import cube_play
    from bgnet.measure.results import COLUMNS, MatchPlayResult, MoneyCubeResult

    duplicate, keep, quiet = not a.no_duplicate, bool(a.save_mat or a.save_sgf), a.quiet
    result: MatchPlayResult | MoneyCubeResult
    if a.match is not None and a.workers > 1:
        result = cube_play.play_matches_parallel(a.a, a.b, a.match, a.matches, a.workers,
                                                 seed=a.seed, progress=not quiet, batch=a.batch,
                                                 keep_records=keep, cubeless_play=a.cubeless_play,
                                                 cube_ply=a.cube_ply, device=a.device)
    elif a.match is not None:
        result = cube_play.play_matches(bot_a, bot_b, a.match, a.matches, seed=a.seed,
                                        progress=not quiet, batch=a.batch, keep_records=keep,
                                        cubeless_play=a.cubeless_play, cube_ply=a.cube_ply)
    elif (a.cube or keep) and a.workers > 1:
        # The same games as one process plays below, shared among the workers in duplicate pairs.
        result = cube_play.play_money_cube_parallel(
            a.a, a.b, a.games, a.workers, seed=a.seed, jacoby=a.jacoby, progress=not quiet,
            duplicate=duplicate, cube=a.cube, batch=a.batch, keep_records=keep,
            cubeless_play=a.cubeless_play, cube_ply=a.cube_ply, device=a.device)
    elif a.cube or keep:
        # Cubeless games to save are played through the rules engine with the cube left alone:
        # the same dice, and so for deterministic bots the same games, as the fast path below.
        result = cube_play.play_money_cube(bot_a, bot_b, a.games, seed=a.seed, jacoby=a.jacoby,
                                           progress=not quiet, duplicate=duplicate, cube=a.cube,
                                           batch=a.batch, keep_records=keep,
                                           cubeless_play=a.cubeless_play, cube_ply=a.cube_ply)
    elif a.workers > 1:
        from bgnet.measure.match import play_games_parallel

        return play_games_parallel(a.a, a.b, a.games, a.workers, seed=a.seed, duplicate=duplicate,
                                   batch=a.batch, progress=not quiet, device=a.device)
    else:
        from bgnet.measure.match import play_games

        return play_games(bot_a, bot_b, a.games, seed=a.seed, duplicate=duplicate, batch=a.batch,
                          progress=not quiet)
    for kind, path in ((".mat", a.save_mat), (".sgf", a.save_sgf)):
        if not path:
            continue
        paths = result.save_mat(path) if kind == ".mat" else _save_sgf(result.records, path)
        shown = str(paths[0]) if len(paths) == 1 else f"{paths[0]} ... {paths[-1]}"
        print(f"saved {len(paths)} {kind} file{'s' if len(paths) > 1 else ''}: {shown}")
    if a.match is None and not a.cube:
        from bgnet.measure.match import summarize

        # The cubeless summary and JSON, as without --save-mat.
        assert isinstance(result, MoneyCubeResult), "without --match the games are money games"
        return summarize(result.points, result.rows[:, COLUMNS.index("moves")],
                         result.seconds, result.bot_a, result.bot_b, a.seed, duplicate)
    return result


def _save_sgf(records, path: str) -> list:
    """The games as ``.sgf`` files, one a match (or one money session): ``path`` itself for one,
    else numbered from 1 next to it (``out.sgf`` -> ``out-001.sgf``, ...), as ``--save-mat``."""
    from bgnet.formats.mat import save_each
    from bgnet.formats.sgf import save_sgf

    assert records is not None, "games to save are played with keep_records"
    return save_each(records, path, save_sgf)


def _add_device(p) -> None:
    p.add_argument("--device", type=device_arg, default="cpu",
                   help="torch device for network bots: cpu, cuda, cuda:N or mps (default cpu)")


def _add_bots(p) -> None:
    p.add_argument("--bot", action="append", default=[], metavar="SPEC",
                   help=f"a bot to measure (repeatable): {BOT_HELP}")


def _add_json_device(p) -> None:
    p.add_argument("--json", metavar="PATH", type=output_file_arg,
                   help="also write the figures to this JSON file")
    _add_device(p)


ER_EXAMPLES = ("bgnet bench er --bot bgnet-default",
               "bgnet bench er --bot runs/my-run/checkpoints/latest.pt@1 --limit 500 "
               "--json er.json")


CUBE_EXAMPLES = ("bgnet bench cube --bot bgnet-deep",
                 "bgnet bench cube --bot bgnet-deep --ply 1 --bot gnubg:0 --json cube.json")

CUBE_FIT_EXAMPLES = ("bgnet bench cube-fit --bot bgnet-deep",
                     "bgnet bench cube-fit --bot bot.onnx --write bot.onnx",
                     "bgnet bench cube-fit --gnubg-probabilities")

CUBE_SPLIT_EXAMPLES = ("bgnet bench cube-split --bot bgnet-deep --opponent gnubg:0 --games 40000 --seed 79",)


def bench_main(argv: list[str]) -> int:
    """``bgnet bench er [--bot SPEC]``, ``bgnet bench cube --bot SPEC``: benchmarks, one
    subcommand each."""
    p = ArgumentParser(prog="bgnet bench", description="Benchmarks of playing strength.",
                       examples=ER_EXAMPLES + CUBE_EXAMPLES[:1])
    sub = p.add_subparsers(dest="what", metavar="{er,cube,cube-fit,cube-split}")
    er = sub.add_parser("er", help="checker-play error rate against GNU Backgammon's equities",
                        description="Mean equity lost per checker-play decision, in millipoints, "
                                    "measured on a shipped file of decisions whose every legal move "
                                    "was valued by GNU Backgammon at 1-ply, and the best of them "
                                    "at 2-ply (two rolls ahead) as well; gnubg 0-ply and pubeval "
                                    "are measured on the same decisions for comparison.",
                        examples=ER_EXAMPLES)
    _add_bots(er)
    er.add_argument("--file", help="benchmark file (.npz; default: the one shipped with bgnet)")
    er.add_argument("--no-reference", action="store_true",
                    help="do not measure gnubg 0-ply and pubeval alongside")
    er.add_argument("--reference", choices=("2-ply", "1-ply", "both"),
                    help="judge moves by GNU Backgammon's 2-ply equities (the best 5 moves at "
                         "1-ply within 0.16 searched two rolls ahead, the rest at 1-ply), by its "
                         "1-ply equities (every move), or both, one table each (the default, where "
                         "the file has both)")
    er.add_argument("--limit", type=int, help="use only the first N decisions")
    _add_json_device(er)
    er.add_argument("--workers", type=at_most(MAX_WORKERS, "processes"), default=1,
                    help="share the decisions among this many processes, one core each (same "
                         "losses; for deep search, default 1)")
    cube = sub.add_parser("cube", help="cube decisions against GNU Backgammon's",
                          description="How often a bot's doubles and takes agree with GNU "
                                      "Backgammon's cube decisions, and the equity each "
                                      "wrong one costs by its cubeful equities (thousandths of "
                                      "the cube per decision: millipoints in money play, mEMG "
                                      "in a match), measured on a shipped file of positions "
                                      "from bgnet-deep's money games and 7-point matches "
                                      "against gnubg 0-ply, doubling windows above all.",
                          examples=CUBE_EXAMPLES)
    _add_bots(cube)
    cube.add_argument("--ply", type=int, metavar="N",
                      help="value positions for cube decisions at this depth (net bots: 0, 1 "
                           "or 2; default: each bot's own)")
    cube.add_argument("--file", help="benchmark file (.npz; default: the one shipped with bgnet)")
    cube.add_argument("--reference", choices=("2-ply", "0-ply", "both"),
                      help="judge by GNU Backgammon's cube decisions at 2-ply (two rolls ahead, "
                           "as its analysis does by default), at 0-ply (its net alone: the "
                           "net of gnubg:0), or both, one table each (the default, where the "
                           "file has both)")
    cube.add_argument("--limit", type=int, help="use only the first N positions")
    _add_json_device(cube)
    fit = _cube_fit_parser(sub)
    split = _cube_split_parser(sub)
    a = p.parse_args(argv)
    if a.what == "cube":
        return _bench_cube(a, cube)
    if a.what == "cube-fit":
        return _bench_cube_fit(a, fit)
    if a.what == "cube-split":
        return _bench_cube_split(a, split)
    if a.what != "er":
        p.error("name the benchmark: 'bgnet bench er' (checker-play error rate), "
                "'bgnet bench cube' (cube decisions), 'cube-fit' or 'cube-split'")
    from bgnet.measure import er as er_mod

    benches = _er_benchmarks(er_mod, a.reference, a.file)
    if a.limit is not None:
        if a.limit < 1:
            er.error(f"--limit must be at least 1; got {a.limit}")
        benches = [b.head(a.limit) for b in benches]
    if a.workers < 1:
        er.error(f"--workers must be at least 1; got {a.workers}")
    specs = list(a.bot)
    if not a.no_reference:
        specs += [s for s in er_mod.REFERENCE_BOTS if s not in specs]
    if not specs:
        er.error("nothing to measure: give --bot SPEC, or drop --no-reference")
    bots = {}  # all loaded before any is measured: a bad spec fails before the work starts
    try:
        for spec in specs:
            bots[spec] = load_bot_arg(spec, a.device)
        choices = {spec: _er_choices(er_mod, spec, bot, benches[0], a) for spec, bot in bots.items()}
    finally:
        for bot in bots.values():
            bot.close()
    tables = []
    for bench in benches:  # each bot's choices scored against each reference
        losses = {spec: er_mod.losses_of(bench, c, spec) * 1000.0 for spec, c in choices.items()}
        rows = [er_mod.rate_row(loss, bench, spec) for spec, loss in losses.items()]
        ref = er_mod.REFERENCE_BOTS[0]  # the measured bots side by side with gnubg 0-ply
        if ref in losses:
            for row in rows:
                if row["bot"] != ref:
                    er_mod.add_paired(row, losses[row["bot"]], losses[ref], ref)
        print(er_mod.format_table(rows, bench))
        print(f"reference: {bench.reference}")
        tables.append((bench, rows))
    if a.json:
        er_mod.write_json(a.json, tables)
        print(f"written to {a.json}")
    return 0


def _bench_cube(a: argparse.Namespace, p: argparse.ArgumentParser) -> int:
    """``bgnet bench cube``: each bot's cube decisions on the benchmark's positions, judged by
    each reference asked for."""
    from tqdm import tqdm

    from bgnet.measure import cube_bench

    if not a.bot:
        p.error("nothing to measure: give --bot SPEC")
    if a.limit is not None and a.limit < 1:
        p.error(f"--limit must be at least 1; got {a.limit}")
    if a.ply is not None and a.ply < 0:
        p.error(f"--ply must be 0 or more; got {a.ply}")
    benches = _cube_benchmarks(cube_bench, a.reference, a.file)
    if a.limit is not None:
        benches = [b.head(a.limit) for b in benches]
    bots = {}  # all loaded before any is measured: a bad spec fails before the work starts
    decisions = {}
    try:
        for spec in a.bot:
            bots[spec] = load_bot_arg(spec, a.device)
        for spec, bot in bots.items():
            name = spec if a.ply is None else f"{spec} (cube at {a.ply}-ply)"
            with tqdm(total=len(benches[0]), desc=name, unit="position", disable=None,
                      leave=False) as bar:
                try:  # the decisions do not depend on the reference
                    decisions[name] = cube_bench.bot_decisions(bot, benches[0], a.ply, bar.update)
                except ValueError as e:  # a depth the bot does not have
                    p.error(str(e))
    finally:
        for bot in bots.values():
            bot.close()
    no_cube = [spec for spec, bot in bots.items() if not bot.can_evaluate]
    tables = []
    for bench in benches:
        rows, costs = [], []
        for name, (double, take) in decisions.items():
            rows.append(cube_bench.rate_row(bench, double, take, name))
            costs.append(cube_bench.position_costs(bench, double, take))
            if len(rows) > 1:  # each beside the first bot, on the same positions
                cube_bench.add_paired(rows[-1], costs[-1], costs[0], rows[0]["bot"])
        print(cube_bench.format_table(rows, bench))
        print(f"reference: {bench.reference}")
        if no_cube:  # measured as bgnet eval plays them, which a reader should not mistake for a cube
            print(f"{', '.join(no_cube)}: no cube play of its own; measured as bgnet eval plays it, "
                  "never doubling and taking every double")
        tables.append((bench, rows))
    if a.json:
        cube_bench.write_json(a.json, tables)
        print(f"written to {a.json}")
    return 0


def _cube_fit_parser(sub) -> argparse.ArgumentParser:
    fit = sub.add_parser("cube-fit", help="fit a bot's cube efficiencies to GNU Backgammon's decisions",
                         description="Fit a bot's cube efficiencies (Janowski's x: a contact value, "
                                     "a shift of the race and bear-off values) to GNU Backgammon's "
                                     "cube decisions on the positions of bench cube, the bot's own "
                                     "rule of decision unchanged: chosen on the even-numbered "
                                     "positions, reported on the odd-numbered ones too, beside the "
                                     "bot's present settings. --write stores the chosen ones in an "
                                     "exported bot, whose every cube decision then uses them.",
                         examples=CUBE_FIT_EXAMPLES)
    fit.add_argument("--bot", default="bgnet-deep", metavar="SPEC",
                     help=f"the bot to fit (default bgnet-deep): {BOT_HELP}")
    fit.add_argument("--reference", default="2-ply", choices=("2-ply", "0-ply"),
                     help="GNU Backgammon's decisions to fit (default 2-ply)")
    fit.add_argument("--limit", type=count_arg(10**6, minimum=2), metavar="N",
                     help="use only the first N positions (a quick look; the fit is on the even ones)")
    fit.add_argument("--write", metavar="BOT.onnx",
                     help="store the chosen efficiencies in this exported bot's metadata (the "
                          "bot's own file, or a copy of it)")
    fit.add_argument("--out", metavar="NEW.onnx", type=output_file_arg,
                     help="with --write: write the bot with them here instead of over BOT.onnx")
    fit.add_argument("--gnubg-probabilities", action="store_true",
                     help="decide from GNU Backgammon's own probabilities (the benchmark's) instead "
                          "of the bot's, at 0-ply: how far the cube model itself can agree")
    return fit


def _bench_cube_fit(a: argparse.Namespace, p: argparse.ArgumentParser) -> int:
    """``bgnet bench cube-fit``: the grid of :mod:`bgnet.measure.cube_fit`, one row per
    candidate, then the chosen efficiencies (stored with ``--write``)."""
    from bgnet.measure import cube_fit
    from bgnet.measure.cube_bench import load_benchmark

    if a.out and not a.write:
        p.error("--out names where --write writes; give --write BOT.onnx too")
    if a.write and a.gnubg_probabilities:
        p.error("--gnubg-probabilities measures the cube model, not a bot: it cannot --write")
    if a.write and not os.path.isfile(a.write):
        raise BadInputFile(f"--write {a.write}: no such exported bot file")
    bot = load_bot_arg(a.bot)
    bench = load_benchmark(reference=a.reference)
    if a.limit is not None:
        bench = bench.head(a.limit)
    met, own = bot.cube_settings()
    if a.gnubg_probabilities:
        name = f"{bot.name}'s cube model on GNU Backgammon's probabilities"
        decide = cube_fit.model_decider(bench, met)
    else:
        name = bot.name
        decide = cube_fit.bot_decider(bot, bench)
    print(f"{name}: cube decisions against GNU Backgammon at {a.reference} on {len(bench)} "
          "positions; chosen on the even-numbered, reported on the odd-numbered too")
    print(f"{'contact':>8s} {'race+':>6s}   {'fit':>14s}   {'held out':>14s}   {'all':>14s}")

    def row(contact: float | None, shift: float | None, found: dict) -> None:
        label = f"{'own':>8s} {'':>6s}" if contact is None else f"{contact:8.2f} {shift:+6.2f}"
        print(cube_fit.format_figures(label, found), flush=True)

    fit = cube_fit.fit_efficiency(decide, bench, own, row)
    held, present = fit.best_figures["held out"], fit.own["held out"]
    print(f"chosen: {fit.best} (cost per decision on the held-out half {held[1]:.2f}, the bot's own "
          f"settings {present[1]:.2f}; agreement {100 * held[0]:.1f} % against {100 * present[0]:.1f} %)")
    if a.write:
        from dataclasses import asdict

        from bgnet.cube import DEFAULT_MET
        from bgnet.export.onnx_export import set_metadata

        path = set_metadata(a.write, {"cube": {"met": met or DEFAULT_MET,
                                               "efficiency": asdict(fit.best)}}, a.out)
        print(f"written to {path}")
    return 0


def _cube_split_parser(sub) -> argparse.ArgumentParser:
    split = sub.add_parser("cube-split", help="where a bot loses money games with the cube: checker "
                                              "plays or cube decisions",
                           description="Play two money sessions with the cube against the "
                                       "opponent on duplicate dice: the bot's cube decisions with "
                                       "the opponent's checker plays, then the bot's checker plays "
                                       "with the opponent's cube decisions. Beside 'bgnet eval BOT "
                                       "OPP --cube' on the same seed they say which half a "
                                       "deficit comes from. Both bots must value positions.",
                           examples=CUBE_SPLIT_EXAMPLES)
    split.add_argument("--bot", default="bgnet-deep", metavar="SPEC",
                       help=f"the bot to split (default bgnet-deep): {BOT_HELP}")
    split.add_argument("--opponent", default="gnubg:0", metavar="SPEC",
                       help="the opponent, which lends its checker plays and cube decisions "
                            "(default gnubg:0)")
    split.add_argument("--games", type=count_arg(MAX_GAMES, minimum=2), default=40000,
                       help="games of each session, even: duplicate dice (default 40000)")
    split.add_argument("--seed", type=seed_arg, default=79, help="seed of the dice (default 79)")
    return split


def _bench_cube_split(a: argparse.Namespace, p: argparse.ArgumentParser) -> int:
    """``bgnet bench cube-split``: the two sessions of :mod:`bgnet.measure.cube_split`."""
    import time

    from bgnet.measure.cube_play import play_money_cube
    from bgnet.measure.cube_split import split_players

    if a.games % 2:
        p.error(f"--games must be even (duplicate dice play the games in pairs); got {a.games}")
    bot, opponent = load_bot_arg(a.bot), load_bot_arg(a.opponent)
    for label, player in split_players(bot, opponent).items():
        t = time.perf_counter()
        r = play_money_cube(player, opponent, a.games, seed=a.seed, progress=False)
        print(f"{label:21s} ({player.name} vs {opponent.name}): {r.ppg:+.3f} ± {r.ppg_ci95:.3f} ppg "
              f"over {a.games} games ({time.perf_counter() - t:.0f} s)", flush=True)
    return 0


def _cube_benchmarks(cube_bench, asked: str | None, path: str | None) -> list:
    """The benchmark's positions with each reference asked for (the deeper one first); a file
    that cannot be used raises BadInputFile."""
    import zipfile

    refs: tuple[str, ...]
    if asked == "both" or (asked is None and cube_bench.has_deep_reference(path)):
        refs = ("2-ply", "0-ply")
    else:
        refs = (asked or "0-ply",)
    path = path or cube_bench.DEFAULT_PATH
    try:
        return [cube_bench.load_benchmark(path, r) for r in refs]
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as e:
        if path in str(e):  # load_benchmark's own message, which says what is wrong
            raise BadInputFile(str(e)) from None
        raise BadInputFile(f"{path!r} is not a readable cube benchmark (.npz file: "
                           f"{type(e).__name__})") from None


def _er_benchmarks(er_mod, asked: str | None, path: str | None) -> list:
    """The benchmark's decisions with each reference asked for; a file that cannot be used
    raises BadInputFile."""
    import zipfile

    try:
        return [er_mod.load_benchmark(path, r) for r in _er_references(er_mod, asked, path)]
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as e:
        path = path or er_mod.DEFAULT_PATH
        if path in str(e):  # load_benchmark's own message, which says what is wrong
            raise BadInputFile(str(e)) from None
        raise BadInputFile(f"{path!r} is not a readable error-rate benchmark (.npz file: "
                           f"{type(e).__name__})") from None


def _er_references(er_mod, asked: str | None, path: str | None) -> tuple[str, ...]:
    """The references to score against: the deeper one first."""
    if asked == "both" or (asked is None and er_mod.has_deep_reference(path)):
        return ("2-ply", "1-ply")
    return (asked or "1-ply",)


def _er_choices(er_mod, spec: str, bot, bench, a):
    """The moves the bot named ``spec`` (loaded as ``bot``) chooses on the benchmark's
    decisions; with workers, each process loads it from its spec."""
    from tqdm import tqdm

    # The bar shows itself only on a terminal.
    with tqdm(total=len(bench), desc=spec, unit="decision", disable=None, leave=False) as bar:
        if a.workers > 1:
            return er_mod.decision_choices_parallel(spec, bench, a.workers, a.device,
                                                    bar.update)[0]
        return er_mod.decision_choices(bot, bench, bar.update)


def tournament_main(argv: list[str]) -> int:
    """``bgnet tournament RUN_DIR | SPEC ...``: round robin, ratings, plot, TensorBoard log."""
    p = ArgumentParser(
        prog="bgnet tournament",
        description="Round robin between the checkpoints of a run (or listed bots) and reference "
                    "opponents: Elo-like ratings with error bars, a PNG of rating against training "
                    "games, and a TensorBoard log.",
        examples=("bgnet tournament runs/my-run --games 400",
                  "bgnet tournament a.onnx b.onnx --ref pubeval --games 1000 --out cmp"),
    )
    p.add_argument("sources", nargs="+", metavar="RUN_DIR_OR_BOT",
                   help=f"a run directory (its checkpoints take part), or {BOT_HELP}")
    p.add_argument("--games", type=count_arg(MAX_GAMES), default=400, help="games per pair (default 400)")
    p.add_argument("--ref", action="append", metavar="SPEC",
                   help="reference opponent (repeatable; default: pubeval and gnubg:0)")
    p.add_argument("--no-ref", action="store_true", help="no reference opponents")
    p.add_argument("--max-checkpoints", type=int, default=8,
                   help="at most this many checkpoints per run, evenly spaced (default 8)")
    p.add_argument("--out", type=output_dir_arg,
                   help="output folder (default: RUN_DIR/tournament, or ./tournament)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the dice (default 0)")
    _add_device(p)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    a = p.parse_args(argv)
    if a.games < 2:
        p.error(f"--games must be at least 2; got {a.games}")
    from bgnet.measure import tournament as t

    refs = () if a.no_ref else tuple(a.ref or t.DEFAULT_REFERENCES)
    run_dirs = [s for s in a.sources if os.path.isdir(s)]
    out = a.out or (f"{run_dirs[0].rstrip('/')}/tournament" if run_dirs else "tournament")
    if a.out is None:
        try:
            output_dir_arg(out)  # the default, checked as --out is
        except argparse.ArgumentTypeError as e:
            p.error(f"{e} (--out)")
    players = t.players_from(a.sources, refs, a.max_checkpoints)
    result = t.run_tournament(players, a.games, seed=a.seed, progress=not a.quiet,
                              load=lambda spec: load_bot_arg(spec, a.device))
    print(result.table())
    paths = t.write_outputs(result, out)
    print(f"written {paths['json']}, {paths['png']} and the TensorBoard log {paths['tensorboard']}")
    return 0
