"""A person's mistakes on the command line: one line ``bgnet VERB: error: ...`` and the exit code
of its kind (2: a bad argument, 3: an unusable input file), never a traceback; and the help every
verb gives."""
from __future__ import annotations

import importlib.metadata
import os
import socket
import subprocess
import sys

import pytest

from bgnet import cli
from bgnet.bots import load_bot
from bgnet.errors import EXIT_INPUT, EXIT_USAGE
from bgnet.play.advisor import Advisor
from bgnet.play.external import ExternalPlayer, start_in_thread

# A board line GNU Backgammon 1.07 sent (player 1 external, opening roll 2-1).
OPENING = ("board:gnubg:root:0:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:2:1:2:1"
           ":1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
QUICK = ["--games", "2", "--quiet"]  # two games of random bots: the mistake is found before them


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python3 -m bgnet.cli ARGS`` in a fresh process, as a person runs it."""
    return subprocess.run([sys.executable, "-m", "bgnet.cli", *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def call(capsys, *args: str) -> tuple[int, str, str]:
    """``bgnet ARGS`` through :func:`bgnet.cli.main` in this process: (exit code, out, err)."""
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line(err: str, verb: str, *words: str) -> None:
    """``err`` is one line ``bgnet VERB: error: ...`` holding each of ``words``."""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"bgnet {verb}: error: "), err
    for w in words:
        assert w in lines[0], (w, err)


@pytest.fixture(scope="module")
def bad_bots(tmp_path_factory):
    """A missing, an empty, a corrupt checkpoint, a corrupt exported bot and an empty folder."""
    d = tmp_path_factory.mktemp("bots")
    (d / "empty.pt").write_bytes(b"")
    (d / "garbage.pt").write_bytes(b"not a checkpoint\n" * 10)
    (d / "garbage.onnx").write_bytes(b"not a model\n" * 10)
    (d / "folder").mkdir()
    (d / "game.mat").write_text(" 0 point match\n\n Game 1\n A : 0     B : 0\n  1) 31: 8/5 6/5\n")
    return {name: str(d / name) for name in ("missing.pt", "empty.pt", "garbage.pt", "garbage.onnx",
                                             "folder", "game.mat")}


# ---------------------------------------------------------------------------------------------
# bad arguments: exit code 2


@pytest.mark.parametrize("extra", [[], ["--cube"], ["--match", "3", "--matches", "1"]])
def test_negative_seed_is_a_bad_argument(extra):
    games = [] if "--match" in extra else ["--games", "2"]
    r = run_cli("eval", "random", "random", "--seed", "-1", "--quiet", *games, *extra)
    assert r.returncode == EXIT_USAGE
    assert_one_line(r.stderr, "eval", "--seed", "from 0 up", "'-1'")
    assert r.stdout == ""


def test_play_refuses_a_negative_seed(capsys):
    code, _, err = call(capsys, "play", "--bot", "random", "--seed", "-1")
    assert code == EXIT_USAGE
    assert_one_line(err, "play", "--seed", "'-1'")


@pytest.mark.parametrize("option, path", [("--json", "/nonexistent/d/x.json"),
                                          ("--save-mat", "/nonexistent/x.mat")])
def test_an_output_path_is_checked_before_any_game(option, path, capsys):
    code, out, err = call(capsys, "eval", "random", "random", *QUICK, option, path)
    assert code == EXIT_USAGE
    assert_one_line(err, "eval", option, path, "no folder")
    assert "points per game" not in out  # refused before playing


def test_an_output_path_that_is_a_folder_is_refused(tmp_path, capsys):
    code, _, err = call(capsys, "eval", "random", "random", *QUICK, "--json", str(tmp_path))
    assert code == EXIT_USAGE
    assert_one_line(err, "eval", "is a folder")


@pytest.mark.parametrize("argv", [
    ["eval", "random", "random", *QUICK, "--device", "nope"],
    ["bench", "er", "--bot", "random", "--no-reference", "--limit", "5", "--device", "nope"],
    ["tournament", "random:1", "random:2", "--no-ref", "--games", "2", "--quiet",
     "--device", "nope"],
])
def test_an_unknown_device_is_an_error_not_ignored(argv, capsys):
    code, out, err = call(capsys, *argv)
    assert code == EXIT_USAGE
    assert_one_line(err, argv[0], "unknown device 'nope'", "cpu, cuda")
    assert out == ""


@pytest.mark.parametrize("argv, option", [
    (["eval", "random", "random", "--games", "100000000000000000000"], "--games"),
    (["eval", "random", "random", "--match", "3", "--matches", "1e20"], "--matches"),
    (["tournament", "random", "pubeval", "--no-ref", "--games", "2.5"], "--games"),
    (["rollout", "4HPwATDgc/ABMA", "31", "--trials", "100000000000"], "--trials"),
])
def test_a_count_too_large_to_run_is_refused_before_any_work(argv, option, capsys):
    code, _, err = call(capsys, *argv)
    assert code == EXIT_USAGE
    assert_one_line(err, argv[0], f"argument {option}: must be a whole number from 1 to")


@pytest.mark.parametrize("argv, option, words", [
    (["rollout", "4HPwATDgc/ABMA", "--workers", "1" + "0" * 30], "--workers", "at most 256"),
    (["eval", "random", "random", "--workers", "257"], "--workers", "at most 256 processes; got 257"),
    (["eval", "random", "random", "--batch", "99999999999"], "--batch", "at most 65,536 games"),
    (["bench", "er", "--bot", "random", "--workers", "\u0661"], "--workers", "whole number of processes"),
])
def test_an_oversize_process_or_batch_count_is_refused(argv, option, words, capsys):
    """10^30 workers were an OverflowError from multiprocessing; a huge batch an allocation."""
    code, _, err = call(capsys, *argv)
    assert code == EXIT_USAGE
    assert_one_line(err, argv[0], f"argument {option}: ", words)


@pytest.mark.parametrize("argv, got", [
    (["eval", "random", "random", "--match", "100000000000000000000", "--matches", "1"],
     "a match is 1 to 64 points long (GNU Backgammon's limit), or 0 for money play; got a number of 21 digits"),
    (["eval", "random", "random", "--match", "65", "--matches", "1"], "got 65"),
    (["eval", "random", "random", "--match", "0", "--matches", "1"], "a match is 1 to 64 points long; got 0"),
    (["play", "--match", "65"], "got 65"),
    (["play", "--match", "\u0663"], "written in the digits 0-9; got '\u0663'"),
])
def test_a_match_longer_than_gnubg_allows_is_a_usage_error(argv, got, capsys):
    """One bound on a match's length everywhere, GNU Backgammon's, said before any work."""
    code, out, err = call(capsys, *argv)
    assert code == EXIT_USAGE and out == ""
    assert_one_line(err, argv[0], "argument --match:", got)


def test_an_output_folder_inside_a_missing_one_is_refused(tmp_path, capsys):
    out = tmp_path / "no" / "such"
    code, _, err = call(capsys, "tournament", "random", "pubeval", "--no-ref", "--games", "2", "--out", str(out))
    assert code == EXIT_USAGE and not (tmp_path / "no").exists()
    assert_one_line(err, "tournament", f"there is no folder {str(tmp_path / 'no')!r}")


def test_an_unknown_bot_spec_lists_the_valid_ones(capsys):
    code, _, err = call(capsys, "eval", "random", "nope", *QUICK)
    assert code == EXIT_USAGE
    assert_one_line(err, "eval", "unknown bot 'nope'", "random, random:SEED, pubeval, gnubg:N (N = 0 to 3)",
                    ".pt", ".onnx")


@pytest.mark.parametrize("ply", ["\u0661", "9" * 5000])
def test_a_spec_s_ply_is_a_few_ascii_digits(capsys, ply):
    """'@١' was read as ply 1, and 5,000 nines were Python's own message about int()."""
    code, _, err = call(capsys, "eval", f"bgnet-default@{ply}", "random", *QUICK)
    assert code == EXIT_USAGE
    assert_one_line(err, "eval", "unknown bot 'bgnet-default@")
    assert "Exceeds the limit" not in err and len(err) < 600


def test_a_malformed_builtin_spec_is_a_bad_argument(capsys):
    code, _, err = call(capsys, "eval", "random:x", "random", *QUICK)
    assert code == EXIT_USAGE
    assert_one_line(err, "eval", "random:x")


def test_argparse_mistakes_are_one_line_too(capsys):
    code, _, err = call(capsys, "eval", "random", "random", "--bogus")
    assert code == EXIT_USAGE
    assert_one_line(err, "eval", "unrecognized arguments: --bogus", "bgnet eval --help")
    code, _, err = call(capsys, "bench")
    assert code == EXIT_USAGE
    assert_one_line(err, "bench", "bgnet bench er")


@pytest.mark.parametrize("verb", sorted(set(cli.COMMANDS) - {"train"}))  # train takes KEY=VALUE
def test_every_verb_answers_an_unknown_option_in_one_line(verb, capsys):
    code, _, err = call(capsys, *verb.split(), "--bogus")
    assert code == EXIT_USAGE
    assert_one_line(err, verb, f"bgnet {verb} --help")


def test_an_unknown_command_names_the_commands(capsys):
    code, _, err = call(capsys, "evaluate")
    assert code == EXIT_USAGE
    assert "unknown command 'evaluate'" in err and "eval" in err and len(err.splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# unusable input files: exit code 3


@pytest.mark.parametrize("name, words", [  # the loaders' own messages name the file
    ("missing.pt", ["no such bot file"]),
    ("empty.pt", []),
    ("garbage.pt", []),
    ("garbage.onnx", []),
    ("folder", ["is a folder with no checkpoint in it"]),
])
@pytest.mark.parametrize("verb", ["eval", "play", "serve-external", "bench", "tournament",
                                  "rollout", "analyze"])
def test_a_missing_or_corrupt_bot_file_is_an_input_error(verb, name, words, bad_bots, capsys):
    path = bad_bots[name]
    argv = {
        "eval": ["eval", path, "random", *QUICK],
        "play": ["play", "--bot", path],
        "serve-external": ["serve-external", "--port", "1", "--bot", path],  # refused before listening
        "bench": ["bench", "er", "--bot", path, "--no-reference", "--limit", "5"],
        "tournament": ["tournament", "random", path, "--no-ref", "--games", "2", "--quiet"],
        "rollout": ["rollout", "4HPwATDgc/ABMA", "--bot", path, "--trials", "1", "--quiet"],
        "analyze": ["analyze", bad_bots["game.mat"], "--bot", path, "--quiet"],
    }[verb]
    if verb == "tournament" and name == "folder":  # there a folder is a run's checkpoints, each a player
        words = ["no checkpoints (*.pt) in"]
    code, _, err = call(capsys, *argv)
    assert code == EXIT_INPUT
    assert_one_line(err, argv[0], path, *words)


def test_a_missing_bot_file_through_the_command():
    r = run_cli("eval", "runs/none/checkpoints/latest.pt", "random", *QUICK)
    assert r.returncode == EXIT_INPUT
    assert_one_line(r.stderr, "eval", "no such bot file: 'runs/none/checkpoints/latest.pt'")


def test_an_unreadable_benchmark_file_is_an_input_error(bad_bots, capsys):
    code, _, err = call(capsys, "bench", "er", "--file", bad_bots["garbage.pt"], "--bot", "random")
    assert code == EXIT_INPUT
    assert_one_line(err, "bench", bad_bots["garbage.pt"], "benchmark")


# ---------------------------------------------------------------------------------------------
# what is not a person's mistake keeps its traceback


def test_a_bug_keeps_its_traceback(monkeypatch):
    def broken(argv):
        raise ValueError("an internal inconsistency")  # a plain ValueError: a bug, not a mistake

    monkeypatch.setitem(cli.COMMANDS, "eval", (broken, "broken"))
    with pytest.raises(ValueError, match="internal inconsistency"):
        cli.main(["eval"])


def test_the_library_errors_map_to_their_kinds():
    from bgnet.engine.notation import IllegalMoveError
    from bgnet.nn.checkpoint import CheckpointError

    assert cli.user_error_code(CheckpointError("x")) == EXIT_INPUT
    assert cli.user_error_code(IllegalMoveError("x")) == EXIT_USAGE
    assert cli.user_error_code(FileNotFoundError("x")) == EXIT_INPUT
    assert cli.user_error_code(ValueError("x")) is None
    assert cli.user_error_code(RuntimeError("x")) is None


# ---------------------------------------------------------------------------------------------
# serve-external: a line it cannot read gets an error line, and the connection stays


@pytest.fixture()
def connection():
    server = start_in_thread(ExternalPlayer(Advisor(load_bot("random:1"), judge=None)))
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    f = sock.makefile("rwb")

    def ask(line: str) -> str:
        f.write(line.encode() + b"\n\0")  # as GNU Backgammon sends it: newline, then NUL
        f.flush()
        return f.readline().decode().rstrip("\n")

    yield ask
    sock.close()
    server.shutdown()
    server.server_close()


def test_a_huge_number_gets_an_error_line_and_the_connection_stays(connection):
    huge = OPENING.replace("board:gnubg:root:0:0:0:0:", "board:gnubg:root:0:0:0:-99999999999999999999:")
    assert huge != OPENING
    reply = connection(huge)
    assert reply.startswith("Error: ") and "out of range" in reply
    assert "/" in connection(OPENING)  # still answering: a move like 13/11 6/5


def test_a_blank_line_gets_an_error_line_and_the_connection_stays(connection):
    assert connection("").startswith("Error: empty line")
    assert connection("   ").startswith("Error: empty line")
    assert "/" in connection(OPENING)


def test_too_many_checkers_on_a_point_is_an_error_line(connection):
    line = OPENING.replace("board:gnubg:root:0:0:0:0:-2:", "board:gnubg:root:0:0:0:0:-16:")
    assert connection(line).startswith("Error: ") and "15 checkers" in connection(line)


# ---------------------------------------------------------------------------------------------
# help and version


MY_VERBS = [["eval"], ["bench"], ["bench", "er"], ["tournament"], ["play"], ["serve-external"],
            ["export"], ["widen"], ["deepen"], ["distill"], ["plot"], ["moves"], ["serve"], ["rollout"], ["analyze"]]


@pytest.mark.parametrize("verb", MY_VERBS, ids=" ".join)
def test_every_verb_has_help_with_an_example(verb, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main([*verb, "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    assert "example" in out and f"bgnet {verb[0]} " in out.split("example", 1)[1]


def test_top_level_help_lists_every_verb_with_an_example(capsys):
    code, out, _ = call(capsys, "--help")
    assert code == 0
    for name in cli.COMMANDS:
        assert any(line.split()[:1] == [name] and len(line.split()) > 1 for line in out.splitlines())
    assert "examples:" in out


def test_version():
    r = run_cli("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"bgnet {importlib.metadata.version('bgnet')}"


def test_a_caught_interrupt_exits_130_when_run_as_a_module(tmp_path):
    """A Ctrl-C that lands inside ``eval`` of a string (namedtuple does it while modules import)
    and that bgnet catches still ends ``python -m ...`` with exit code 130, not death by SIGINT."""
    package = tmp_path / "interrupted"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        "import sys\n"
        "import bgnet.cli\n"
        "def stop():\n"
        "    raise KeyboardInterrupt\n"
        "def main():\n"
        "    try:\n"
        "        eval('stop()')\n"
        "    except KeyboardInterrupt:\n"
        "        return bgnet.cli.EXIT_INTERRUPTED\n"
        "bgnet.cli.main = main\n"
        "sys.exit(bgnet.cli.run())\n")
    done = subprocess.run([sys.executable, "-m", "interrupted"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 130, done.stderr


def test_output_piped_into_a_reader_that_stopped_ends_quietly():
    """`bgnet --help | head -0`: the reader is gone before bgnet writes, and bgnet says nothing
    about a broken pipe."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        bgnet = subprocess.run([sys.executable, "-m", "bgnet.cli", "--help"], stdout=write_end,
                               stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert bgnet.returncode == 0, bgnet.stderr
    assert "Traceback" not in bgnet.stderr and "BrokenPipe" not in bgnet.stderr
