"""One reader for a position in any of its three spellings (Position ID, POSITIONID:MATCHID,
XGID): the formats round-trip on random legal positions, and every verb and endpoint that takes a
position gives the same answer whichever spelling it was handed."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgnet import cli
from bgnet.bots import default_bot_path
from bgnet.engine.board import start_position
from bgnet.engine.game import Game
from bgnet.engine.position_id import position_id
from bgnet.engine.state import CENTERED, GAME_PLAYING, MatchContext
from bgnet.formats.position import (
    DEFAULT_CONTEXT,
    FORMATS,
    PositionFormatError,
    after_move_context,
    format_of,
    read_position,
    write_position,
)

needs_bot = pytest.mark.skipif(default_bot_path() is None, reason="needs the shipped bot")
START = "4HPwATDgc/ABMA"


def random_position(seed: int, plies: int) -> tuple[np.ndarray, int]:
    """A position of random play: (board of the player on roll, that player), ``plies`` turns
    after the opening or the last position before the game ends."""
    rng = np.random.default_rng(seed)
    g = Game(rng=rng)
    g.opening_roll()
    board, player = g.board, g.roller
    for _ in range(plies):
        after, _ = g.legal_moves()
        g.play(after[int(rng.integers(len(after)))] if len(after) else None)
        if g.over:
            break
        board, player = g.board, g.roller
        g.roll()
    return board, player


@st.composite
def positions(draw):
    """(board, context) of a legal moment of a game: the board from random play, and a cube,
    score and turn that a match or money session can reach, as both IDs can hold them."""
    board, on_roll = random_position(draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 120)))
    length = draw(st.sampled_from([0, 0, 1, 3, 5, 7, 11, 25]))
    score = (draw(st.integers(0, max(length - 1, 0))), draw(st.integers(0, max(length - 1, 0)))) \
        if length else (draw(st.integers(0, 40)), draw(st.integers(0, 40)))
    crawford = bool(length) and length - max(score) == 1 and draw(st.booleans())
    cube = 1 if crawford else 1 << draw(st.integers(0, 6))
    owner = CENTERED if cube == 1 else draw(st.sampled_from([0, 1]))
    doubled = not crawford and draw(st.booleans()) and owner != 1 - on_roll
    dice = (0, 0)
    if not doubled and draw(st.booleans()):
        a, b = draw(st.integers(1, 6)), draw(st.integers(1, 6))
        dice = (max(a, b), min(a, b))  # as both IDs write them
    ctx = MatchContext(cube_value=cube, cube_owner=owner, player_on_roll=on_roll, crawford=crawford,
                       game_state=GAME_PLAYING, turn=1 - on_roll if doubled else on_roll,
                       double_offered=doubled, dice=dice, match_length=length, score=score,
                       jacoby=length == 0 and draw(st.booleans()))
    return board, ctx


@given(positions())
@settings(max_examples=300, deadline=None)
def test_every_format_round_trips(case):
    board, ctx = case
    for fmt in FORMATS:
        text = write_position(board, ctx, fmt)
        assert format_of(text) == fmt
        back = read_position(text)
        assert back.written == fmt
        assert np.array_equal(back.board, board)
        assert back.context == (None if fmt == "position-id" else ctx), (fmt, text)


@given(positions())
@settings(max_examples=100, deadline=None)
def test_one_format_converts_to_the_others(case):
    """Reading one spelling and writing another gives what writing the other gives directly."""
    board, ctx = case
    texts = {fmt: write_position(board, ctx, fmt) for fmt in FORMATS}
    for source in ("gnubg-id", "xgid"):
        pos = read_position(texts[source])
        for target in FORMATS:
            assert write_position(pos.board, pos.context, target) == texts[target]
    # Without XGID= the prefix is optional; GNU Backgammon's labelled copy and a space also read.
    assert read_position(texts["xgid"].removeprefix("XGID=")).context == ctx
    pid, mid = texts["gnubg-id"].split(":")
    for copied in (f"Position ID: {pid}\n Match ID   : {mid}", f"{pid} {mid}", f"  {pid}:{mid}\n"):
        assert read_position(copied).context == ctx


def test_a_bare_position_id_is_written_with_the_default_context():
    assert write_position(start_position(), None, "gnubg-id") == f"{START}:cAkAAAAAAAAE"
    assert read_position(START).context is None
    assert read_position(START).context_or_default() == DEFAULT_CONTEXT
    assert read_position(write_position(start_position(), None, "xgid")).context == DEFAULT_CONTEXT
    # The context after a move: the other player on roll, no dice.
    after = after_move_context(MatchContext(player_on_roll=1, turn=1, dice=(3, 1), match_length=7))
    assert (after.player_on_roll, after.turn, after.dice, after.match_length) == (0, 0, (0, 0), 7)


@pytest.mark.parametrize("text, match_id, words", [
    ("", None, "no position given"),
    ("4HPwATDgc/ABM", None, "14 characters"),
    ("4HPwATDgc/AB!A", None, "not base64"),
    ("4HPwATDgc/ABMA:cAkAAAAAAAA", None, "12 characters"),
    ("4HPwATDgc/ABMA:cAkAAAAAAAAE:x", None, "POSITIONID:MATCHID"),
    ("4HPwATDgc/ABMA:cAkAAAAAAAAE", "MAEAAAAAAAAE", "two different Match IDs"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "cAkAAAAAAAAE", "carries its own"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:77:0:0:0:0:10", None, "field 5"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0", None, "10 fields"),
])
def test_bad_positions_say_what_is_wrong(text, match_id, words):
    with pytest.raises(PositionFormatError, match=words):
        read_position(text, match_id)


def test_a_match_id_given_apart_joins_a_position_id():
    pos = read_position(START, "cInlACAAIAAE")
    assert pos.written == "gnubg-id" and pos.dice() == (3, 1) and pos.context.score == (2, 4)
    assert read_position(f"{START}:cInlACAAIAAE", "cInlACAAIAAE").context == pos.context


# ---------------------------------------------------------------------------------------------
# every verb: the same answer whichever format it was handed


def spellings(board, ctx) -> list[str]:
    return [write_position(board, ctx, fmt) for fmt in ("gnubg-id", "xgid")] + [
        write_position(board, ctx, "xgid").removeprefix("XGID=")]


def moves_outputs(board, ctx) -> dict[str, set[str]]:
    """``bgnet moves``'s output in each --format, for every spelling of (board, ctx); a bare
    Position ID (with the dice apart) only where it holds all the output shows."""
    seen: dict[str, set[str]] = {}
    bare = [position_id(board), f"{ctx.dice[0]}{ctx.dice[1]}"]
    for fmt in FORMATS:
        for args in [["--", text] for text in spellings(board, ctx)] + [bare] * (fmt == "position-id"):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):  # an XGID may start with '-': hence '--'
                assert cli.main(["moves", "--format", fmt, *args]) == 0
            seen.setdefault(fmt, set()).add(out.getvalue())
    return seen


@given(positions())
@settings(max_examples=25, deadline=None)
def test_moves_answers_alike(case):
    board, ctx = case
    ctx = ctx.replace(dice=(5, 2), double_offered=False, turn=ctx.player_on_roll)
    assert all(len(outs) == 1 for outs in moves_outputs(board, ctx).values())


def test_moves_writes_each_format():
    board, on_roll = random_position(7, 12)
    ctx = MatchContext(player_on_roll=on_roll, turn=on_roll, dice=(6, 4), match_length=7, score=(3, 5))
    seen = moves_outputs(board, ctx)
    assert all(len(outs) == 1 for outs in seen.values()), seen
    # Each format writes the next positions with the opponent on roll, the dice gone.
    xg = next(iter(seen["xgid"])).splitlines()
    nxt = read_position(xg[1].split()[-1])
    assert nxt.context.player_on_roll == 1 - on_roll and nxt.context.dice == (0, 0)
    assert xg[0].startswith("position " + write_position(board, ctx, "xgid"))


@needs_bot
def test_rollout_answers_alike(capsys):
    """A Position ID with --match-id, POSITIONID:MATCHID and the XGID give the same rollout."""
    board, on_roll = random_position(3, 20)
    ctx = MatchContext(player_on_roll=on_roll, turn=on_roll, match_length=5, score=(1, 2))
    pid, mid = write_position(board, ctx, "gnubg-id").split(":")
    quick = ["--trials", "36", "--quiet", "--seed", "4"]
    outs = []
    for args in ([pid, "--match-id", mid], [f"{pid}:{mid}"], [write_position(board, ctx, "xgid")]):
        assert cli.main(["rollout", *args, *quick]) == 0
        out = capsys.readouterr().out.splitlines()
        outs.append([line for line in out if " trials in " not in line])  # all but the timing
    assert outs[0] == outs[1] == outs[2]
    assert cli.main(["rollout", pid, "--match-id", mid, *quick, "--format", "xgid"]) == 0
    assert f"position {write_position(board, ctx, 'xgid')}" in capsys.readouterr().out


def test_the_web_api_answers_alike():
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    if default_bot_path() is None:
        pytest.skip("needs the shipped bot")
    from fastapi.testclient import TestClient

    from bgnet.play.web.app import create_app

    board, on_roll = random_position(11, 9)
    ctx = MatchContext(player_on_roll=on_roll, turn=on_roll, dice=(4, 1), match_length=9, score=(4, 6))
    with TestClient(create_app(seed=3)) as client:
        answers = []
        for name in ("position_id", "xgid"):
            for text in spellings(board, ctx):
                r = client.get("/api/v1/moves", params={name: text, "limit": 30})
                assert r.status_code == 200, r.text
                answers.append(r.json())
        # A bare Position ID with its Match ID apart (the score ranks the moves: it must be given).
        r = client.get("/api/v1/moves", params={"position_id": position_id(board), "dice": "41",
                                                "match_id": spellings(board, ctx)[0][15:],
                                                "limit": 30})
        assert r.status_code == 200, r.text
        answers.append(r.json())
        assert all(a == answers[0] for a in answers)
        cubes = [client.get("/api/v1/cube", params={"position_id": text}).json()
                 for text in spellings(board, ctx)]
        cubes.append(client.get("/api/v1/cube", params={"position_id": position_id(board),
                                                        "match_id": spellings(board, ctx)[0][15:]}).json())
        assert all(c == cubes[0] for c in cubes), cubes
        r = client.get("/api/v1/evaluate", params={"position_id": "4HPwATDgc/ABMA:cAkAAAAAAA"})
        assert r.status_code == 400 and "12 characters" in r.json()["message"]
