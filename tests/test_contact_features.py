"""The ``"contact"`` encoding's features (pip loss, containment, contact left), each checked on
positions whose value is known by hand and against a plain enumeration, and nets grown into it
from ``"extended"`` (same function, the compiled pass and ONNX alike)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from test_nn import ref_escapes

from bgnet.cli import main
from bgnet.engine.board import start_position, swap
from bgnet.engine.movegen import generate
from bgnet.engine.sampling import sample_positions
from bgnet.errors import BadArgument
from bgnet.nn.checkpoint import load_net, save_checkpoint
from bgnet.nn.encode import (
    CONTACT_PER_SIDE,
    CONTACT_START,
    ENCODINGS,
    encode,
    encode_afterstates,
    extends,
    race_mask,
)
from bgnet.nn.fast import FastForward
from bgnet.nn.model import SplitValueNet
from bgnet.nn.widen import grow_inputs

LOSS, CONTAIN, LEFT = range(CONTACT_PER_SIDE)
MINE, THEIRS = CONTACT_START, CONTACT_START + CONTACT_PER_SIDE


def board_of(me: dict[int, int], opp: dict[int, int]) -> np.ndarray:
    """A board from {point: checkers} of the side on roll and of the opponent, each in its own
    numbering (point 25 is the bar); what is not placed is borne off."""
    b = np.zeros((2, 25), np.int8)
    for row, side in ((1, me), (0, opp)):
        for point, n in side.items():
            b[row, point - 1] = n
    return b


def features(board: np.ndarray) -> np.ndarray:
    return encode(board[None], "contact")[0]


@pytest.fixture(scope="module")
def positions() -> np.ndarray:
    return sample_positions(1500, seed=11, every=2)[0]


# ---------------------------------------------------------------------------------------------
# Slow references


def brute_pip_loss(board: np.ndarray) -> float:
    """Over the opponent's 36 rolls (it moving now), the most pips one hit of a blot of the side
    on roll costs it, by the move generator's complete move lists, averaged."""
    total = 0
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            after, _ = generate(swap(board), d1, d2)
            best = 0
            for a in after:  # a[0]: the side on roll after the opponent's move
                lost = np.flatnonzero(a[0, :24] < board[1, :24])
                if len(lost):
                    best = max(best, 24 - int(lost.min()))
            total += best
    return total / 36


def ref_contain(s: np.ndarray, o: np.ndarray) -> float:
    o = o.copy()
    o[18:24] = 0  # its points in this side's home board (its 19..24) block nothing here
    fewest = 36
    for start in range(12, 24):
        lone = np.zeros(25, np.int8)
        lone[start] = 1
        fewest = min(fewest, ref_escapes(lone, o))
    return (36 - fewest) / 36


def ref_left(s: np.ndarray, o: np.ndarray) -> float:
    held = [j for j in range(25) if o[j] > 0]
    if not held:
        return 0.0
    rear = 23 - max(held)  # the opponent's rearmost checker on this side's numbering
    return sum(int(s[i]) * (i - rear + 1) for i in range(25) if s[i] > 0 and i >= rear) / 167


# ---------------------------------------------------------------------------------------------
# By hand


def test_names_counts_and_order():
    assert ENCODINGS["contact"] == CONTACT_START + 2 * CONTACT_PER_SIDE == 227
    assert extends("contact", "extended") and extends("contact", "tesauro")
    assert not extends("extended", "contact") and extends("extended", "extended")


def test_the_starting_position_by_hand():
    x = features(start_position())
    # No blots: nothing to lose. Every checker of both sides has the other's back checkers
    # (their 24-points) ahead of it, so contact is left on every pip: all 167.
    assert x[MINE + LOSS] == x[THEIRS + LOSS] == 0.0
    assert x[MINE + LEFT] == x[THEIRS + LEFT] == pytest.approx(1.0)
    # From my 24-point the opponent's 6, 8 and 13 points (my 19, 17 and 12) lie within 12 pips:
    # escaping takes 13 pips, so a double, and each lands on one of them (3-3 and 4-4 on my 12,
    # 5-5 on my 19, 6-6 on my 12): no roll escapes.
    assert x[MINE + CONTAIN] == x[THEIRS + CONTAIN] == 1.0


def test_pip_loss_by_hand():
    # A lone blot on my 10-point with an opponent's checker 6 pips behind it on my 4 (its 21);
    # nothing else of the opponent can reach it. Direct 6s: 11 rolls; 5-1 and 4-2 (the points
    # between are open): 4 more; 3-3 and 2-2: 2 more (1-1 goes 4 pips). A hit sends the checker
    # 25 - 10 = 15 pips back: 17 rolls of 15 pips, over 36.
    b = board_of({10: 1, 1: 14}, {21: 1, 1: 14})
    assert brute_pip_loss(b) == pytest.approx(17 * 15 / 36)
    assert features(b)[MINE + LOSS] * 24 == pytest.approx(17 * 15 / 36, abs=1e-5)
    # Two blots in range: each roll takes the one further forward (more pips lost) when it can.
    b = board_of({10: 1, 7: 1, 1: 13}, {21: 1, 1: 14})
    assert features(b)[MINE + LOSS] * 24 == pytest.approx(brute_pip_loss(b), abs=1e-5)
    assert brute_pip_loss(b) > 17 * 15 / 36


def test_containment_by_hand():
    # The opponent holds no point: every checker escapes on every roll.
    race_like = board_of({6: 15}, {1: 15})
    assert features(race_like)[MINE + CONTAIN] == 0.0
    # A full prime of the opponent (its points 2..7, my 18..23, indices 17..22): a checker on my
    # 24-point cannot pass it with any roll.
    primed = board_of({24: 2, 6: 13}, {2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2, 12: 3})
    assert features(primed)[MINE + CONTAIN] == 1.0
    # Containment measures the opponent's points, not where my checkers are.
    moved = board_of({6: 15}, {2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2, 12: 3})
    assert features(moved)[MINE + CONTAIN] == 1.0


def test_contact_left_by_hand():
    # A race: nothing left to pass.
    race = board_of({6: 5, 5: 10}, {6: 15})
    assert race_mask(race[None])[0] and features(race)[MINE + LEFT] == 0.0
    # The opponent's rearmost checker on its 15-point = my 10 (index 9): my two checkers on my
    # 13 (index 12) must each reach my 9: 4 pips each. My 2-point checkers are past it already.
    b = board_of({13: 2, 2: 13}, {15: 1, 1: 14})
    assert features(b)[MINE + LEFT] * 167 == pytest.approx(8)
    # An opponent on the bar is behind all of me: each checker on point p has p + 1 pips to go.
    b = board_of({13: 2, 2: 13}, {25: 1, 1: 14})
    assert features(b)[MINE + LEFT] * 167 == pytest.approx(2 * 14 + 13 * 3)


# ---------------------------------------------------------------------------------------------
# Against enumeration, over self-play positions


def test_pip_loss_against_the_move_generator(positions):
    sample = [b for b in positions[::3] if (b[1, :24] == 1).any()][:150]
    x = encode(np.array(sample), "contact")
    ours = x[:, MINE + LOSS] * 24
    brute = np.array([brute_pip_loss(b) for b in sample])
    assert brute.max() > 5 and (brute > 0).sum() > 60
    # As the shot count, ours ignores the rule that as many dice as possible must be played, so
    # it can only count a hit the rules forbid, and rarely does.
    assert (ours >= brute - 1e-5).all()
    assert np.isclose(ours, brute, atol=1e-5).mean() >= 0.95


def test_containment_and_contact_left_against_enumeration(positions):
    x = encode(positions, "contact")
    for row, b in zip(x[::7], positions[::7]):
        for base, (s, o) in ((MINE, (b[1], b[0])), (THEIRS, (b[0], b[1]))):
            assert row[base + CONTAIN] == pytest.approx(ref_contain(s, o), abs=1e-6), b.tolist()
            assert row[base + LEFT] == pytest.approx(ref_left(s, o), abs=1e-6), b.tolist()


def test_extends_the_extended_encoding_and_swaps_sides(positions):
    x = encode(positions, "contact")
    np.testing.assert_array_equal(x[:, :CONTACT_START], encode(positions, "extended"))
    xs = encode(positions[:, ::-1], "contact")
    np.testing.assert_array_equal(x[:, MINE:THEIRS], xs[:, THEIRS:])
    np.testing.assert_array_equal(encode_afterstates(positions, "contact"), xs)
    assert x[:, CONTACT_START:].std(axis=0).min() > 0.02  # each feature varies


# ---------------------------------------------------------------------------------------------
# Growing a net into the encoding


def test_a_grown_net_computes_the_same_function(positions):
    torch.manual_seed(3)
    net = SplitValueNet("extended", [24, 16], ["sigmoid", "relu"], race_hidden=8,
                         race_activation="sigmoid")
    grown = grow_inputs(net, "contact")
    assert grown.encoding == "contact" and grown.num_inputs == 227
    with torch.no_grad():
        before = net(torch.from_numpy(encode(positions, "extended")), torch.from_numpy(race_mask(positions)))
        after = grown(torch.from_numpy(encode(positions, "contact")), torch.from_numpy(race_mask(positions)))
    np.testing.assert_allclose(after.numpy(), before.numpy(), atol=1e-6)
    np.testing.assert_allclose(FastForward(grown).positions(positions), before.numpy(), atol=1e-5)
    with pytest.raises(BadArgument, match="does not begin with"):
        grow_inputs(grown, "extended")
    with pytest.raises(BadArgument, match="unknown encoding"):
        grow_inputs(net, "gnubg")


def test_the_widen_verb_grows_the_inputs(tmp_path, capsys, positions):
    net = SplitValueNet("extended", [12], race_hidden=6)
    src = save_checkpoint(tmp_path / "net.pt", {"net_config": net.config(),
                                                "net_state": net.state_dict(), "games": 7})
    assert main(["widen", str(src), str(tmp_path / "grown.pt"), "--encoding", "contact"]) == 0
    assert "inputs: extended (221) -> contact (227)" in capsys.readouterr().out
    grown, data = load_net(tmp_path / "grown.pt")
    assert grown.encoding == "contact" and data["games"] == 7
    np.testing.assert_allclose(FastForward(grown).positions(positions[:50]),
                               FastForward(net).positions(positions[:50]), atol=1e-5)
    assert main(["widen", str(tmp_path / "grown.pt"), str(tmp_path / "back.pt"),
                 "--encoding", "extended"]) == 2
    assert "does not begin with" in capsys.readouterr().err
    assert not (tmp_path / "back.pt").exists()
