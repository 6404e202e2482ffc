""".mat files of played games, imported by GNU Backgammon: the moves it reads back are the moves
played (a match through ``bgnet play``, and a bot-against-bot match of engine game records)."""
from __future__ import annotations

import numpy as np
import pytest

from bgnet.bots import load_bot
from bgnet.engine.game import DOUBLED, ROLL, Match
from bgnet.engine.position_id import board_from_position_id, position_id
from bgnet.formats.mat import save_mat
from bgnet.play.advisor import Advisor
from bgnet.play.terminal import PlaySession

pytestmark = pytest.mark.gnubg


def _apply(board: np.ndarray, steps) -> np.ndarray:
    out = board.copy()
    for a, b in steps:
        out[1, a - 1] -= 1
        if b:
            out[1, b - 1] += 1
            if out[0, 24 - b] == 1:
                out[0, 24 - b], out[0, 24] = 0, out[0, 24] + 1
    return out


def played(match: Match) -> list:
    """Per game: the score, winner, points, and every move (player, dice, position before and
    after) and cube action, as played."""
    out = []
    for g in match.games:
        r = g.record
        acts = [(a.player, a.kind, tuple(sorted(a.dice)), position_id(a.board),
                 position_id(_apply(a.board, a.steps)))
                if a.kind == "move" else (a.player, a.kind)
                for a in r.actions if a.kind in ("move", "double", "take", "drop")]
        out.append((r.score, r.winner, r.points, acts))
    return out


def read_back(gnubg) -> list:
    """The same from GNU Backgammon's record of the imported match ('X' is player 0)."""
    out = []
    for g in gnubg.match(analysis=False, boards=True, statistics=False, verbose=False)["games"]:
        info = g["info"]
        acts = []
        for a in g["game"]:
            who = "XO".index(a["player"])
            if a["action"] == "move":
                before = board_from_position_id(a["board"])
                after = _apply(before, a.get("move") or ())
                acts.append((who, "move", tuple(sorted(a["dice"])), a["board"], position_id(after)))
            elif a["action"] in ("double", "take", "drop"):
                acts.append((who, a["action"]))
        winner = "XO".index(info["winner"]) if info.get("winner") else None
        out.append(((info["score-X"], info["score-O"]), winner, info.get("points-won", 0), acts))
    return out


@pytest.fixture(scope="module")
def gnubg():
    module = pytest.importorskip("gnubg")
    module.command("set sound enable off")
    return module


def follow_first_hint(session: PlaySession):
    """A person who plays the bot's favourite move, rolls, and takes every double."""
    def read_line(prompt: str) -> str | None:
        game = session.match.game
        if prompt.startswith("Your move"):
            return session.advisor.ranked_moves(game.board, *game.dice)[0].notation
        if game.phase == DOUBLED:
            return "take"
        if game.phase == ROLL:
            return "roll"
        return "no"
    return read_line


def test_a_match_through_bgnet_play_reads_back_in_gnubg(gnubg, tmp_path):
    pytest.importorskip("gnubg_nn")
    path = tmp_path / "played.mat"
    lines = []
    session = PlaySession(Advisor(load_bot("gnubg:0")), match_length=5, seed=21, name="Ann",
                          save_path=path, write=lines.append)
    session.read_line = follow_first_hint(session)
    assert session.run() == 0 and session.match.over
    gnubg.command(f"import mat {path}")
    ours = played(session.match)
    assert read_back(gnubg) == ours
    assert sum(len(g[3]) for g in ours) > 40


def test_bot_against_bot_records_read_back_in_gnubg(gnubg, tmp_path):
    """Engine game records in general: two bots play a match with the cube (doubles, takes and
    drops decided by GNU Backgammon's net) and GNU Backgammon reads the file to the same game."""
    pytest.importorskip("gnubg_nn")
    players = [Advisor(load_bot("pubeval")), Advisor(load_bot("random:4"))]
    m = Match(5, seed=9, names=("pubeval", "random"))
    while not m.over:
        g = m.new_game()
        g.opening_roll()
        while not g.over:
            me = players[g.turn]
            if g.phase == DOUBLED:
                g.take() if me.wants_take(g.board, g.context()) else g.drop()
            elif g.phase == ROLL and g.may_double() and me.wants_double(g.board, g.context()):
                g.double()
            else:
                if g.phase == ROLL:
                    g.roll()
                choice = me.choose(g.board, *g.dice)
                g.play(None if choice is None else choice[0])
    path = save_mat(m, tmp_path / "bots.mat")
    gnubg.command(f"import mat {path}")
    assert read_back(gnubg) == played(m)
    assert any(a[1] == "double" for g in played(m) for a in g[3])
