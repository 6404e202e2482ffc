"""Match ID: round trips, bad input, and agreement with GNU Backgammon's own encoder."""
from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgnet.engine.state import CENTERED, MAX_MATCH_LENGTH, MatchContext
from bgnet.formats.match_id import match_context_from_id, match_id

GNUBG_PROGRAM = shutil.which("gnubg") or next(
    (p for p in ("/usr/games/gnubg", "/usr/local/games/gnubg") if Path(p).exists()), None)


@st.composite
def contexts(draw):
    length = draw(st.sampled_from([0, 0, 1, 3, 5, 7, 11, 25, MAX_MATCH_LENGTH]))
    if length:
        score = (draw(st.integers(0, length - 1)), draw(st.integers(0, length - 1)))
    else:
        score = (draw(st.integers(0, 500)), draw(st.integers(0, 500)))
    rolled = draw(st.booleans())
    dice = (draw(st.integers(1, 6)), draw(st.integers(1, 6))) if rolled else (0, 0)
    return MatchContext(
        cube_value=1 << draw(st.integers(0, 15)),
        cube_owner=draw(st.sampled_from([CENTERED, 0, 1])),
        player_on_roll=draw(st.integers(0, 1)),
        crawford=draw(st.booleans()) if length else False,
        game_state=draw(st.integers(0, 4)),
        turn=draw(st.integers(0, 1)),
        double_offered=draw(st.booleans()),
        resignation=draw(st.integers(0, 3)),
        dice=dice,
        match_length=length,
        score=score,
        jacoby=draw(st.booleans()) if length == 0 else False,
    )


@given(contexts(), st.booleans())
@settings(max_examples=200, deadline=None)
def test_round_trip(ctx, bit):
    mid = match_id(ctx, jacoby_bit=bit)
    assert len(mid) == 12
    back = match_context_from_id(mid, jacoby=None if bit else ctx.jacoby)
    # The higher die is written first, as GNU Backgammon writes it.
    assert back == ctx.replace(dice=tuple(sorted(ctx.dice, reverse=True)))


@pytest.mark.parametrize("length", [MAX_MATCH_LENGTH + 1, 8000, 32767])
def test_a_match_longer_than_the_bound_is_refused_on_reading(length):
    """The field holds 15 bits, but a match is at most 64 points long, as everywhere in bgnet
    (GNU Backgammon's own limit): the writer writes what it is given, the reader refuses it."""
    mid = match_id(MatchContext(match_length=length, score=(3, 5)))
    with pytest.raises(ValueError, match=f"Match ID '{mid}': a match is 1 to 64 points long .*got {length}"):
        match_context_from_id(mid)
    assert match_context_from_id(match_id(MatchContext(match_length=MAX_MATCH_LENGTH))).match_length == 64


def test_higher_die_first():
    a = MatchContext(dice=(1, 3), match_length=7)
    assert match_id(a) == match_id(a.replace(dice=(3, 1)))
    assert match_context_from_id(match_id(a)).dice == (3, 1)


def test_jacoby_bit_only_changes_bit_66():
    money = MatchContext()
    assert match_context_from_id(match_id(money)).jacoby is False
    assert match_context_from_id(match_id(money.replace(jacoby=True))).jacoby is True
    # Match play always sets the bit, whatever the flag says, and reads back without Jacoby.
    m = MatchContext(match_length=5)
    assert match_id(m) == match_id(m.replace(jacoby=True))
    assert match_context_from_id(match_id(m)).jacoby is False
    # An ID without the bit (older versions) reads the same apart from the flag.
    plain = match_id(m, jacoby_bit=False)
    assert plain != match_id(m)
    assert match_context_from_id(plain) == match_context_from_id(match_id(m))
    # The caller may override the flag.
    assert match_context_from_id(match_id(money), jacoby=True).jacoby is True


@pytest.mark.parametrize("bad, words", [
    ("MAEAAAAAAAA", "12 characters"),
    ("MAEAAAAAAAAAA", "12 characters"),
    ("MAEAAAAAAA!A", "not base64"),
    (None, "string"),
])
def test_bad_text(bad, words):
    with pytest.raises(ValueError, match=words):
        match_context_from_id(bad)


def _id_with(**fields) -> str:
    """An ID with raw field values (bit positions as in the module docstring)."""
    where = {"owner": 4, "state": 8, "die1": 15, "die2": 18, "extra": 67}
    value = 3 << 4 | 1 << 8  # centred cube, playing
    for name, v in fields.items():
        shift = where[name]
        if name in ("owner", "state"):
            value &= ~((3 if name == "owner" else 7) << shift)
        value |= v << shift
    big = int.from_bytes(value.to_bytes(9, "little"), "big")
    b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return "".join(b64[(big >> (6 * (11 - i))) & 63] for i in range(12))


@pytest.mark.parametrize("fields, words", [
    ({"owner": 2}, "cube owner code 2"),
    ({"state": 5}, "game state 5"),
    ({"die1": 7, "die2": 3}, "die shows 7"),
    ({"die1": 4}, "one die is rolled"),
    ({"extra": 1}, "beyond 66"),
])
def test_bad_fields(fields, words):
    with pytest.raises(ValueError, match=words):
        match_context_from_id(_id_with(**fields))


@pytest.mark.parametrize("change, words", [
    ({"cube_value": 3}, "power of two"),
    ({"cube_value": 1 << 16}, "power of two"),
    ({"cube_owner": 2}, "cube owner"),
    ({"dice": (7, 1)}, "dice"),
    ({"dice": (0, 3)}, "both dice"),
    ({"match_length": 1 << 15}, "match length"),
    ({"score": (-1, 0)}, "score"),
    ({"turn": 2}, "turn"),
    ({"game_state": 9}, "game state"),
    ({"resignation": 4}, "resignation"),
])
def test_writer_rejects(change, words):
    with pytest.raises(ValueError, match=words):
        match_id(MatchContext().replace(**change))


# ---------------------------------------------------------------------------------------------
# against GNU Backgammon


def _grid(n: int = 1500, seed: int = 7) -> list[MatchContext]:
    """Edge cases and a seeded random sample of contexts."""
    rng = random.Random(seed)
    out = [MatchContext(), MatchContext(jacoby=True), MatchContext(match_length=7, score=(3, 5),
           cube_value=4, cube_owner=1, player_on_roll=1, turn=1, dice=(3, 1))]
    for _ in range(n):
        length = rng.choice([0, 0, 1, 2, 5, 7, 13, 25, 255, 32767])
        score = ((rng.randrange(length), rng.randrange(length)) if length
                 else (rng.randrange(1000), rng.randrange(1000)))
        out.append(MatchContext(
            cube_value=1 << rng.randrange(16), cube_owner=rng.choice([CENTERED, 0, 1]),
            player_on_roll=rng.randrange(2), crawford=bool(length) and rng.random() < 0.3,
            game_state=rng.randrange(5), turn=rng.randrange(2),
            double_offered=rng.random() < 0.3, resignation=rng.randrange(4),
            dice=rng.choice([(0, 0), (rng.randint(1, 6), rng.randint(1, 6))]),
            match_length=length, score=score, jacoby=length == 0 and rng.random() < 0.5))
    return out


def _gnubg_id(gnubg, ctx: MatchContext) -> str:
    """The Match ID GNU Backgammon's encoder writes for the same fields."""
    # cube_info() of a match looks the score up in gnubg's match equity table, which ends at 64
    # points: the grid's longer matches (255, 32767) would read past it (a crash, depending on
    # what lies there). So build a money cube and set the match fields, which match_id() only
    # encodes, directly.
    ci = gnubg.cube_info(ctx.cube_value, ctx.cube_owner, ctx.player_on_roll, 0, (0, 0), 0, 0)
    ci["matchto"] = ctx.match_length
    ci["score"] = ctx.score  # cube_info() zeroes a money session's score; the program keeps it
    ci["crawford"] = int(ctx.crawford)
    ci["jacoby"] = int(ctx.jacoby and ctx.is_money)  # gnubg's cube info has Jacoby off in matches
    pi = gnubg.pos_info(ctx.turn, ctx.resignation, int(ctx.double_offered), ctx.game_state, ctx.dice)
    return gnubg.match_id(ci, pi)


@pytest.mark.gnubg
def test_same_ids_as_gnubg():
    gnubg = pytest.importorskip("gnubg")
    grid = _grid()
    for ctx in grid:
        theirs = _gnubg_id(gnubg, ctx)
        assert match_id(ctx) == theirs, ctx
        if ctx.match_length > MAX_MATCH_LENGTH:  # written, not read: see the test above
            with pytest.raises(ValueError, match="64 points"):
                match_context_from_id(theirs)
            continue
        assert match_context_from_id(theirs) == ctx.replace(dice=tuple(sorted(ctx.dice, reverse=True)))


@pytest.mark.gnubg
def test_gnubg_reads_our_ids():
    """GNU Backgammon's own reader (``set matchid``) gets back the cube, score and dice we wrote."""
    gnubg = pytest.importorskip("gnubg")
    for c in ("set sound enable off", "set player 0 human", "set player 1 human",
              "set automatic roll off", "new match 7"):
        gnubg.command(c)
    cases = [
        MatchContext(cube_value=4, cube_owner=1, player_on_roll=1, turn=1, dice=(3, 1),
                     match_length=7, score=(3, 5)),
        MatchContext(cube_value=2, cube_owner=0, player_on_roll=0, turn=0, dice=(6, 6),
                     match_length=9, score=(0, 5)),
        MatchContext(player_on_roll=0, turn=0, dice=(2, 1), match_length=9, score=(0, 8),
                     crawford=True),
        MatchContext(cube_value=1, player_on_roll=1, turn=1, match_length=5, score=(4, 3)),
    ]
    for ctx in cases:
        gnubg.command(f"set matchid {match_id(ctx)}")
        ci, pi = gnubg.cube_info(), gnubg.pos_info()
        got = (ci["cube"], ci["cubeowner"], ci["move"], ci["matchto"], tuple(ci["score"]),
               bool(ci["crawford"]), tuple(pi["dice"]))
        want = (ctx.cube_value, ctx.cube_owner, ctx.player_on_roll, ctx.match_length, ctx.score,
                ctx.crawford, ctx.dice)
        assert got == want


@pytest.mark.skipif(GNUBG_PROGRAM is None, reason="the GNU Backgammon program (Debian package "
                    "'gnubg') is not installed; the PyPI module tests above cover the encoding")
def test_same_ids_as_gnubg_program(tmp_path):
    """Set a context with the program's commands and read the Match ID off its board display."""
    commands = ["set automatic roll off", "set player 0 human", "set player 1 human",
                "new match 7", "set score 3 5", "set cube value 4", "set cube owner 1",
                "set turn 1", "set dice 3 1", "show board",
                "new match 9", "set score 8 2", "set crawford on", "set turn 0", "set dice 6 2",
                "show board"]
    out = subprocess.run([GNUBG_PROGRAM, "-t", "-q"], input="\n".join(commands) + "\n",
                         capture_output=True, text=True, timeout=60).stdout
    shown, armed = [], False
    for line in out.splitlines():  # the ID displayed after each "set dice" is the one we built
        if "dice have been set" in line:
            armed = True
        elif armed and "Match ID" in line:
            shown.append(line.split(":")[1].strip())
            armed = False
    want = [
        MatchContext(cube_value=4, cube_owner=1, player_on_roll=1, turn=1, dice=(3, 1),
                     match_length=7, score=(3, 5)),
        MatchContext(player_on_roll=0, turn=0, dice=(6, 2), match_length=9, score=(8, 2),
                     crawford=True),
    ]
    assert shown == [match_id(c) for c in want]
