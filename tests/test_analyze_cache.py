"""The search's afterstates kept through a game (bgnet.bots.cache) and games judged in several
processes: the analysis gives the figures of the plain one."""
from __future__ import annotations

import json

import numpy as np
import pytest

from bgnet.analyze.analysis import Judge, analyse_record, format_summary
from bgnet.bots import default_bot_path, load_bot
from bgnet.bots.cache import AfterstateTable, CachedEvaluator
from bgnet.engine.movegen import ROLLS, generate_batch
from bgnet.engine.position_id import position_id

needs_bot = pytest.mark.skipif(default_bot_path() is None, reason="needs the shipped bot")


def _boards(count: int, seed: int = 0) -> np.ndarray:
    """Positions of random games (checkers on the bar and borne off among them), side on roll
    in ``board[1]``."""
    from bgnet.engine.board import game_result, start_position
    from bgnet.engine.movegen import generate

    rng = np.random.default_rng(seed)
    out = []
    board = start_position()
    while len(out) < count:
        out.append(board)
        after, _ = generate(board, *rng.integers(1, 7, size=2))
        moved = after[rng.integers(len(after))] if len(after) else board
        board = start_position() if game_result(moved) else np.ascontiguousarray(moved[::-1])
    return np.stack(out)


def _afterstates(boards: np.ndarray):
    """Every afterstate of every roll of ``boards``, with the index of the board each came from."""
    parents = np.repeat(boards, len(ROLLS), axis=0)
    after, _, off = generate_batch(parents, np.tile(ROLLS, (len(boards), 1)))
    parent_of = np.repeat(np.arange(len(parents)) // len(ROLLS), np.diff(off))
    return after, parent_of


def test_the_tables_key_is_gnu_backgammons_position_key():
    """Each board is keyed by the bits of its Position ID (each side's half apart), which tell
    every board apart: boards found are the same board, and a board is never taken for another."""
    import base64

    boards = _boards(300)
    after, _ = _afterstates(boards[:40])
    every = np.concatenate([boards, after])
    table = AfterstateTable()
    out = np.zeros((len(every), 5), np.float32)
    slots, state = table.find(every, out)
    ids = [position_id(b) for b in every]
    first_slot: dict[str, int] = {}
    for pid, slot in zip(ids, slots):
        assert first_slot.setdefault(pid, int(slot)) == slot  # one slot for a board ...
    assert len(set(first_slot.values())) == len(first_slot)  # ... and one board for a slot
    assert len(table) == len(first_slot) and (state == 1).sum() == len(first_slot)
    assert len(table.keys()) == len(table)
    for k in range(0, len(every), 7):
        value = int.from_bytes(base64.b64decode(ids[k] + "=="), "little")
        first_side = int(every[k, 0].sum()) + 25  # the opponent's bits: a 1 a checker, a 0 a slot
        w0, w1, w2 = (int(w) for w in table.slots[slots[k], :3])
        assert w0 | (w1 & 0xFF) << 32 == value & ((1 << first_side) - 1)
        assert w1 >> 8 | w2 << 24 == value >> first_side


def test_the_table_reads_back_what_was_written_grows_and_empties_when_full():
    boards = _boards(2000, seed=3)
    _, first = np.unique([position_id(b) for b in boards], return_index=True)
    boards = boards[np.sort(first)]  # distinct
    n = len(boards)
    values = np.random.default_rng(1).random((n, 5)).astype(np.float32)
    table = AfterstateTable(max_entries=2 * n)
    out = np.zeros((n, 5), np.float32)
    slots, state = table.find(boards, out)
    assert (state == 1).all()
    table.fill(slots, state, values, out)
    assert np.array_equal(out, values) and len(table) == n and len(table.slots) >= 2 * n
    again = np.zeros((n, 5), np.float32)
    _, state = table.find(boards[::-1], again)
    assert (state == 0).all() and np.array_equal(again, values[::-1])
    # A repeat within one batch takes its first row's values.
    twice = np.concatenate([boards[:3], boards[:3]])
    table.clear()
    out = np.zeros((6, 5), np.float32)
    slots, state = table.find(twice, out)
    assert state.tolist() == [1, 1, 1, 2, 2, 2]
    table.fill(slots, state, values[:3], out)
    assert np.array_equal(out, np.concatenate([values[:3], values[:3]]))
    # Holding max_entries, the table is emptied before the next batch is entered.
    table = AfterstateTable(max_entries=10)
    out = np.zeros((8, 5), np.float32)
    table.fill(*table.find(boards[:8], out), values[:8], out)
    table.fill(*table.find(boards[4:12], out), values[4:12], out)
    assert len(table) == 12
    out = np.zeros((4, 5), np.float32)
    slots, state = table.find(boards[:4], out)
    assert (state == 1).all() and len(table) == 4
    with pytest.raises(ValueError, match="at least one entry"):
        AfterstateTable(0)


@needs_bot
def test_a_cached_evaluator_answers_as_the_evaluator_does():
    bot = load_bot(str(default_bot_path()))
    cached = CachedEvaluator(bot.evaluator)
    boards = _boards(30, seed=5)
    after, parent_of = _afterstates(boards)
    plain = bot.evaluator.afterstates(after, boards, parent_of)
    got = cached.afterstates(after, boards, parent_of)
    # Repeats in the batch (the same afterstate from two positions) take the first one's values,
    # made from its own position's first layer: equal to float32 rounding.
    assert np.allclose(got, plain, rtol=0, atol=2e-6)
    assert cached.asked == len(after) and cached.valued == len({position_id(a) for a in after})
    assert np.array_equal(cached.afterstates(after[::-1]), got[::-1])  # read back as it was
    assert cached.valued == len({position_id(a) for a in after})
    assert np.array_equal(cached.positions(boards), bot.evaluator.positions(boards))
    # Finished games and bear-offs come through as the evaluator gives them.
    done = np.zeros((1, 2, 25), np.int8)
    done[0, 0, 5] = 15
    assert np.array_equal(cached.afterstates(done), bot.evaluator.afterstates(done))
    # A board the evaluator refuses leaves nothing half-entered behind.
    bad = after[:2].copy()
    bad[1, 1, 3] = 40
    with pytest.raises(ValueError):
        cached.afterstates(bad)
    assert len(cached.table) == 0
    assert np.allclose(cached.afterstates(after[:1]), got[:1], rtol=0, atol=2e-6)  # valued again


def _small_match(tmp_path, length: int, seed: int):
    """A match of random play with the cube, as its .mat file reads back."""
    from bgnet.engine.game import Match, play_random_game
    from bgnet.formats.mat import load_mat, save_mat

    m = Match(length, seed=seed)
    while not m.over:
        play_random_game(m.new_game(), np.random.default_rng(seed + len(m.games)), p_double=0.1)
    save_mat(m, tmp_path / "m.mat")
    return load_mat(tmp_path / "m.mat")


def _same_figures(x, y, where: str = "") -> None:
    """Two analyses' dicts alike: every text, count and flag equal, every number within 1e-6 (or a millionth of it)."""
    if isinstance(x, float) or isinstance(y, float):
        assert x == pytest.approx(y, rel=1e-6, abs=1e-6), where
    elif isinstance(x, dict):
        assert x.keys() == y.keys(), where
        for k in x:
            _same_figures(x[k], y[k], f"{where}.{k}")
    elif isinstance(x, (list, tuple)):
        assert len(x) == len(y), where
        for i, (u, v) in enumerate(zip(x, y)):
            _same_figures(u, v, f"{where}[{i}]")
    else:
        assert x == y, where


@needs_bot
@pytest.mark.parametrize("ply", [1, 2])
def test_a_cached_analysis_gives_the_figures_of_the_plain_one(tmp_path, ply):
    """The same decisions, best moves, marks, luck (to the bit), ratings and summary; equities
    and errors equal to float32 rounding of the net's probabilities."""
    bot = load_bot(str(default_bot_path()))
    record = _small_match(tmp_path, 3, seed=11)
    if ply == 2:
        record.games = record.games[:1]
    cached = Judge(bot, ply)
    assert cached.searcher is not bot
    a = analyse_record(record, cached, "m.mat")
    b = analyse_record(record, Judge(bot, ply, cache=False), "m.mat")
    evaluator = cached.searcher.evaluator
    # The searches met afterstates again (here, in random play, at 2-ply over a quarter).
    assert evaluator.valued < (0.8 if ply == 2 else 0.95) * evaluator.asked
    assert len(a.decisions) == len(b.decisions) > 20
    assert sum(d.error > 0 for d in a.decisions) > 5
    for x, y in zip(a.decisions, b.decisions):
        assert (x.kind, x.played, x.best, x.mark, x.luck) == (y.kind, y.played, y.best, y.mark, y.luck)
        assert x.error == pytest.approx(y.error, abs=1e-6)
        assert x.best_equity == pytest.approx(y.best_equity, abs=1e-6)
        assert [c[0] for c in x.candidates] == [c[0] for c in y.candidates]
        assert [c[1] for c in x.candidates] == pytest.approx([c[1] for c in y.candidates], abs=1e-6)
    _same_figures(a.to_dict(), b.to_dict())
    assert format_summary(a) == format_summary(b)


@needs_bot
def test_games_judged_in_two_processes_give_the_figures_of_one(tmp_path):
    """--workers shares the games among processes; each game's figures depend on that game
    alone, so the analysis is the same to the last bit."""
    from bgnet.cli import main

    record = _small_match(tmp_path, 3, seed=12)
    assert len(record.games) > 1
    spec = f"{default_bot_path()}@1"
    judge = Judge(load_bot(spec))
    one = analyse_record(record, judge, "m.mat")
    two = analyse_record(record, judge, "m.mat", workers=2, spec=spec)
    assert json.dumps(one.to_dict()) == json.dumps(two.to_dict())
    with pytest.raises(ValueError, match="spec"):
        analyse_record(record, judge, "m.mat", workers=2)
    assert main(["analyze", str(tmp_path / "none.mat"), "--workers", "0", "--quiet"]) == 2
