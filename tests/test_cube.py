"""Cube package: match equity tables, Janowski cubeful equities, decisions checked against gnubg."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import cube_reference as reference
import numpy as np
import pytest
from gnubg_program import gnubg_program
from hypothesis import given, settings
from hypothesis import strategies as st

from bgnet.cube import ACTIONS, CubeEfficiency, MatchEquityTable, decide, decide_context, load_met, met_from_xml
from bgnet.cube.cubeful import CENTRED, MINE, THEIRS, MatchScore, money_cubeful, money_cubeless, money_points
from bgnet.engine.board import start_position
from bgnet.engine.state import CENTERED, MatchContext

PROGRAM = gnubg_program()
needs_program = pytest.mark.skipif(
    PROGRAM is None,
    reason="the GNU Backgammon program is not installed (apt-get install gnubg); it is the "
    "money-play reference")


def _gnubg_xml() -> Path:
    gnubg = pytest.importorskip("gnubg", reason="the gnubg package ships Kazaross-XG2.xml")
    return Path(os.path.dirname(gnubg.__file__)) / "data" / "met" / "Kazaross-XG2.xml"


def _probabilities():
    """Strategy: consistent gnubg-order probabilities."""
    def build(win, g1, b1, g2, b2):
        wg, lg = win * g1, (1 - win) * g2
        return (win, wg, wg * b1, lg, lg * b2)
    unit = st.floats(0.0, 1.0)
    return st.builds(build, st.floats(0.01, 0.99), st.floats(0.0, 0.7), st.floats(0.0, 0.3),
                     st.floats(0.0, 0.7), st.floats(0.0, 0.3)) | st.builds(build, unit, unit, unit,
                                                                           unit, unit)


# ---------------------------------------------------------------------------------------------
# Match equity tables


def test_shipped_table_is_gnubg_kazaross_xg2():
    shipped, xml = load_met(), met_from_xml(_gnubg_xml())
    assert shipped.length == xml.length == 25
    np.testing.assert_array_equal(shipped.pre, xml.pre)
    np.testing.assert_array_equal(shipped.post, xml.post)
    assert "Neil Kazaross" in shipped.notice and "notice are preserved" in shipped.notice


def test_table_is_a_consistent_match_equity_table():
    met = load_met()
    # One player's match winning chances are 1 - the other's.
    np.testing.assert_allclose(met.pre + met.pre.T, 1.0, atol=1e-9)
    assert np.all(np.diff(met.pre, axis=0) < 0)  # needing more points is worse
    assert np.all(np.diff(met.pre, axis=1) > 0)
    assert met.post[0] == 0.5 and np.all(np.diff(met.post) <= 0)
    for n in range(2, 8):  # post-Crawford lookups from either side
        assert met.mwc(n, 1, post_crawford=True) == pytest.approx(met.post[n - 1])
        assert met.mwc(1, n, post_crawford=True) == pytest.approx(1 - met.post[n - 1])
        # The Crawford game (pre table, row 1-away) is worth more to the trailer than the
        # post-Crawford games that follow if the leader wins a point less... and the leader
        # always prefers the Crawford game to a post-Crawford one at the same score.
        assert met.mwc(1, n) >= met.mwc(1, n, post_crawford=True)


def test_extension_matches_gnubg_program():
    if PROGRAM is None:
        pytest.skip("the GNU Backgammon program is not installed (apt-get install gnubg)")
    out = subprocess.run([PROGRAM, "-t", "-q"], input="show matchequitytable 30\n", text=True,
                         capture_output=True, timeout=60).stdout
    row = re.compile(r"^\s+\d+-away\s+\d+\.\d", re.M)

    def table(text):
        return np.array([[float(v) for v in line.split()[1:]] for line in text.splitlines()
                         if row.match(line)]) / 100.0

    assert "Kazaross" in out  # gnubg's default table, the one bgnet ships
    pre = table(out[out.index("Pre-Crawford"):out.index("Post-Crawford table for player 0")])
    post = table(out[out.index("Post-Crawford table for player 0"):
                     out.index("Post-Crawford table for player 1")])[0]
    ext = load_met().extended(30)
    assert pre.shape == (30, 30)
    np.testing.assert_allclose(ext.pre, pre, atol=2e-6)  # gnubg prints percent with 4 decimals
    np.testing.assert_allclose(ext.post, post, atol=2e-6)


def test_met_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="unknown match equity table"):
        load_met("no-such-table")
    bad = tmp_path / "zadeh.xml"
    bad.write_text('<?xml version="1.0"?><met><info><name>z</name><length>25</length></info>'
                   '<pre-crawford-table type="zadeh"></pre-crawford-table>'
                   '<post-crawford-table type="zadeh"></post-crawford-table></met>')
    with pytest.raises(ValueError, match="only explicit tables"):
        load_met(bad)
    with pytest.raises(ValueError, match="square"):
        MatchEquityTable("x", np.ones((2, 3)) / 2, np.array([0.5, 0.49]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        MatchEquityTable("x", np.array([[0.5, 1.2], [-0.2, 0.5]]), np.array([0.5, 0.49]))
    with pytest.raises(ValueError, match="beyond"):
        load_met().mwc(30, 2)


# ---------------------------------------------------------------------------------------------
# Money play: Janowski's formulas


def _take_point(x, w=1.0, l=1.0):
    """Doubled-to-2 taker's take point from Janowski's formulas, derived here independently: the
    doubler's equity after the take, 2 * ((1-x) * dead(p) + x * live(p)), equals 1 (the pass)."""
    tp_live = (l - 0.5) / (w + l + 0.5)  # the taker's live-cube take point (in doubler's p below)
    # dead(p) = p*w - (1-p)*l; live(p) = -1 + (w+1) (p - tp_live) / (1 - tp_live) for p > tp_live
    a = (1 - x) * (w + l) + x * (w + 1) / (1 - tp_live)
    b = (1 - x) * (-l) + x * (-1 - (w + 1) * tp_live / (1 - tp_live))
    return 1.0 - (0.5 - b) / a


@pytest.mark.parametrize("x", [0.0, 0.5, 0.68, 1.0])
def test_money_take_point_without_gammons(x):
    probs = (0.7, 0.0, 0.0, 0.0, 0.0)
    d = decide_context(probs, MatchContext(), efficiency=x)
    assert d.take_point == pytest.approx(_take_point(x), abs=1e-9)
    if x == 0.0:
        assert d.take_point == pytest.approx(0.25)
    if x == 0.68:
        assert d.take_point == pytest.approx(0.2137, abs=1e-4)


def test_money_take_point_with_gammons():
    # Gammon rates change W and L; the formula still gives the take point.
    probs = (0.7, 0.7 * 0.3, 0.0, 0.3 * 0.2, 0.0)
    d = decide_context(probs, MatchContext(), efficiency=0.68)
    assert d.take_point == pytest.approx(_take_point(0.68, w=1.3, l=1.2), abs=1e-9)


def test_money_live_points_and_dead_cube():
    assert money_points((0.6, 0.0, 0.0, 0.0, 0.0)) == pytest.approx((0.2, 0.8))
    p = (0.62, 0.2, 0.01, 0.08, 0.002)
    for owner in (CENTRED, MINE, THEIRS):  # x = 0: the cube is dead, equity is cubeless
        assert money_cubeful(p, owner, 0.0) == pytest.approx(money_cubeless(p))


def test_too_good_needs_gammons():
    gammonish = (0.86, 0.55, 0.02, 0.01, 0.0)
    assert decide_context(gammonish, MatchContext()).action == "too_good"
    plain = (0.86, 0.0, 0.0, 0.0, 0.0)
    assert decide_context(plain, MatchContext()).action == "double_pass"
    # Under the Jacoby rule the same position must be doubled: gammons count only after a double.
    assert decide_context(gammonish, MatchContext(jacoby=True)).action == "double_pass"


@settings(max_examples=150, deadline=None)
@given(_probabilities(), st.sampled_from([CENTERED, 0, 1]), st.sampled_from([1, 2, 4]),
       st.booleans(), st.floats(0.0, 1.0))
def test_money_decision_is_consistent(probs, owner, cube, jacoby, x):
    ctx = MatchContext(cube_value=cube if owner != CENTERED else 1, cube_owner=owner,
                       player_on_roll=1, jacoby=jacoby)
    d = decide_context(probs, ctx, efficiency=x)
    assert d.action in ACTIONS and d.double == d.action.startswith("double")
    if owner == 0:
        assert not d.cube_available and d.action == "no_double"
        return
    assert d.double_pass == 1.0 and d.take == (d.double_take < d.double_pass)
    if d.double:
        assert d.double_take >= d.no_double and d.double_pass >= d.no_double
    if jacoby and owner == CENTERED:
        assert d.action != "too_good"  # single stakes until doubled: never too good
    # The cube is worth something to whoever holds it.
    assert money_cubeful(probs, MINE, x) >= money_cubeful(probs, CENTRED, x) - 1e-12
    assert money_cubeful(probs, CENTRED, x) >= money_cubeful(probs, THEIRS, x) - 1e-12


# ---------------------------------------------------------------------------------------------
# Match play


def _match(me, opp, cube=1, owner=CENTERED, crawford=False, length=7):
    return MatchContext(cube_value=cube, cube_owner=owner, player_on_roll=1, turn=1,
                        crawford=crawford, match_length=length, score=(length - opp, length - me))


@settings(max_examples=150, deadline=None)
@given(_probabilities(), st.integers(1, 11), st.integers(1, 11), st.integers(0, 3),
       st.sampled_from([CENTERED, 0, 1]), st.booleans())
def test_match_decision_is_consistent(probs, me, opp, log_cube, owner, crawford):
    cube = 2 ** log_cube if owner != CENTERED else 1
    crawford = crawford and min(me, opp) == 1 and max(me, opp) > 1
    ctx = _match(me, opp, cube=1 if crawford else cube,
                 owner=CENTERED if crawford else owner, crawford=crawford, length=11)
    d = decide_context(probs, ctx)
    assert d.action in ACTIONS and d.double == d.action.startswith("double")
    assert 0.0 <= d.mwc_no_double <= 1.0
    if not d.cube_available:
        assert d.action == "no_double" and d.double_take is None
        return
    assert 0.0 <= d.mwc_double_take <= 1.0 and 0.0 <= d.take_point <= 1.0
    assert d.take == (d.mwc_double_take < d.mwc_double_pass)
    if d.double:
        assert min(d.mwc_double_take, d.mwc_double_pass) >= d.mwc_no_double


def test_crawford_and_dead_cubes_are_not_turned():
    p = (0.8, 0.3, 0.01, 0.05, 0.0)
    for ctx in (_match(4, 1, crawford=True), _match(1, 4, crawford=True),  # Crawford game
                _match(1, 3),  # post-Crawford leader
                _match(2, 3, cube=2, owner=1),  # doubling cannot gain: 2 points win the match
                _match(5, 5, cube=2, owner=0)):  # opponent holds the cube
        d = decide_context(p, ctx)
        assert d.action == "no_double" and not d.double and not d.cube_available, ctx


def test_post_crawford_trailer_doubles():
    # 2-away against 1-away after Crawford: the game decides the match either way once doubled,
    # so the trailer doubles; the leader takes only with the better chances (a free drop else).
    for win in (0.3, 0.45, 0.55, 0.7):
        d = decide_context((win, 0.1 * win, 0.0, 0.1 * (1 - win), 0.0), _match(2, 1))
        assert d.double, win
        assert d.take == (win < 0.5)


def test_match_equities_are_normalised_and_gammon_values():
    met = load_met()
    s = MatchScore(4, 6, False, met)
    assert s.to_equity(s.win(1), 1) == pytest.approx(1.0)
    assert s.to_equity(s.lose(1), 1) == pytest.approx(-1.0)
    # A player 1-away in the Crawford game gains nothing from a gammon; the trailer's gammons
    # count (their value read from the table).
    leader = MatchScore(1, 5, True, met)
    gw, gl, _, _ = leader.gammon_prices(1)
    assert gw == 0.0
    assert gl == pytest.approx(leader.to_equity(leader.lose(1), 1)
                                - leader.to_equity(leader.lose(2), 1))
    d = decide_context((0.68, 0.15, 0.005, 0.06, 0.002), _match(7, 7))
    assert d.double_pass == pytest.approx(1.0)
    assert d.mwc_double_pass == pytest.approx(met.mwc(6, 7))


def test_match_id_entry_point_matches_context():
    from bgnet.engine.position_id import position_id
    from bgnet.formats.match_id import match_id

    board = start_position()
    probs = (0.68, 0.15, 0.005, 0.06, 0.002)
    for ctx in (_match(5, 3), _match(3, 1), MatchContext(player_on_roll=1, turn=1)):
        assert decide(probs, match_id(ctx), position_id(board)) == decide_context(probs, ctx, board)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="five"):
        decide_context((0.5, 0.1, 0.0, 0.1), MatchContext())
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        decide_context((1.5, 0.1, 0.0, 0.1, 0.0), MatchContext())
    with pytest.raises(ValueError, match="inconsistent"):
        decide_context((0.3, 0.5, 0.0, 0.1, 0.0), MatchContext())
    with pytest.raises(ValueError, match="power of two"):
        decide_context((0.5, 0.1, 0.0, 0.1, 0.0), MatchContext(cube_value=3, cube_owner=0))
    with pytest.raises(ValueError, match="match is over"):
        decide_context((0.5, 0.1, 0.0, 0.1, 0.0), MatchContext(match_length=5, score=(5, 2)))
    with pytest.raises(ValueError, match="efficiency"):
        decide_context((0.5, 0.1, 0.0, 0.1, 0.0), MatchContext(), efficiency=1.5)


def test_cube_efficiency_by_kind_of_position():
    eff = CubeEfficiency()
    assert eff.for_board(start_position()) == 0.68
    race = np.zeros((2, 25), np.int8)
    race[1, 6], race[1, 2], race[0, 3], race[0, 8] = 10, 5, 8, 7  # no contact, 85 pips on roll
    assert eff.for_board(race) == pytest.approx(0.55 + 0.00125 * 85)
    home = np.zeros((2, 25), np.int8)
    home[1, :5], home[0, :3] = 3, 5
    assert eff.for_board(home) == 0.6


def test_cube_efficiency_of_many_positions_is_that_of_each():
    from bgnet.engine.sampling import sample_positions

    boards = sample_positions(3000, seed=5)[0].copy()
    boards[:2, 1] = 0  # game over on either side
    boards[1, 1, 3] = 2
    boards[1, 0] = 0
    eff = CubeEfficiency(contact=0.72, race_coefficient=0.6, race_min=0.65, race_max=0.75,
                         bearoff=0.65)
    one_by_one = np.array([eff.for_board(b) for b in boards])
    np.testing.assert_array_equal(eff.for_boards(boards), one_by_one)
    assert {0.0, 0.72, 0.65}.issubset(set(one_by_one.tolist()))  # over, contact, bear-off
    assert ((one_by_one > 0.65) & (one_by_one < 0.75)).any()  # races by pip count


# ---------------------------------------------------------------------------------------------
# Agreement with GNU Backgammon on self-play positions (a subset of tools/verify_cube.py)


@pytest.fixture(scope="module")
def cases():
    pytest.importorskip("gnubg_nn")
    return reference.sample_cases(40, seed=7)


def test_gnubg_nn_table_is_read_back():
    pytest.importorskip("gnubg_nn")
    nn = reference.gnubg_nn_met()
    np.testing.assert_allclose(nn.pre + nn.pre.T, 1.0, atol=1e-6)
    if PROGRAM is not None:  # gnubg_nn's built-in table is Snowie 2.1's (pre-Crawford)
        out = subprocess.run([PROGRAM, "-t", "-q"], input="show matchequitytable 1\n",
                             text=True, capture_output=True, timeout=60).stdout
        snowie = Path(re.search(r"\((\S+\.xml)\)", out).group(1)).with_name("snowie.xml")
        np.testing.assert_allclose(nn.pre[:15, :15], met_from_xml(snowie).pre, atol=1e-6)
    # Post-Crawford values are probed through double/pass equities printed to 4 decimals.
    assert nn.post[0] == 0.5 and np.all(np.diff(nn.post) < 0.001)


@needs_program
def test_agrees_with_gnubg_program(cases):
    refs = reference.gnubg_program_decisions(cases, PROGRAM)
    tally = reference.compare_with_program(cases, refs)
    assert tally.n == len(cases) and tally.n - tally.trivial >= 25
    assert tally.agreement >= 0.95, tally.report()
    assert max(abs(d) for d in tally.diffs) < 2e-4, tally.report()  # 5-decimal probabilities


def test_agrees_with_gnubg_nn(cases):
    tally = reference.compare_with_gnubg_nn(cases, reference.gnubg_nn_met(), "gnubg_nn")
    assert tally.n >= 25
    # A different model of the live cube (J. Heled's), so close decisions may differ.
    assert tally.agreement >= 0.9, tally.report()
    assert np.mean(np.abs(tally.diffs)) < 0.01, tally.report()


@needs_program
def test_search_one_roll_ahead_agrees_with_gnubg_program_at_1ply(cases):
    # bgnet's cubeful search (bgnet.cube.lookahead) over the tree GNU Backgammon searches at
    # 1-ply, fed gnubg's own probabilities after gnubg's moves: the same equities to a few
    # thousandths, much nearer than Janowski's model applied once to averaged probabilities.
    refs = reference.gnubg_program_decisions(cases, PROGRAM, plies=1)
    search, cheap = reference.compare_lookahead_with_program(cases, refs)
    assert search.n == len(cases) and search.n - search.trivial >= 25
    assert search.agreement >= 0.95, search.report()
    assert np.mean(np.abs(search.diffs)) < 0.006, search.report()
    assert np.mean(np.abs(search.diffs)) < 0.5 * np.mean(np.abs(cheap.diffs)), cheap.report()


# ---------------------------------------------------------------------------------------------
# The cube searched one roll ahead (bgnet.cube.lookahead)


def _same_every_roll(p, ctx, x=0.7):
    from bgnet.cube.lookahead import decide_after_rolls
    from bgnet.engine.movegen import ROLL_WEIGHTS

    board = start_position()  # contact: the efficiency is the contact value x
    rolls = np.tile(np.asarray(p, np.float64), (21, 1))
    after = np.repeat(board[None], 21, axis=0)
    eff = CubeEfficiency(contact=x)
    base = decide_context(p, ctx, board, efficiency=eff)
    return decide_after_rolls(rolls, ROLL_WEIGHTS, after, ctx, base, efficiency=eff), base


def test_one_roll_ahead_by_hand():
    # Every roll leaves the player at 90 % in a gammonless game, x = 0.7. No double: the
    # opponent on roll, at 10 %, has no double of his own, so 0.3 * 0.8 (dead) + 0.7 * 1 (live,
    # past the player's cash point) = 0.94. Double/take: the opponent
    # owns the 2-cube at 10 %: 0.3 * -0.8 + 0.7 * -0.75 (live, owned: -1 + 2 * 0.1 / 0.8) =
    # -0.765 a cube for him, +1.53 for the doubler. So double, and the opponent passes.
    d, _ = _same_every_roll((0.9, 0.0, 0.0, 0.0, 0.0), MatchContext())
    assert d.action == "double_pass" and d.double and not d.take
    assert d.no_double == pytest.approx(0.94) and d.double_take == pytest.approx(1.53)
    assert d.double_pass == 1.0


def test_one_roll_ahead_keeps_what_the_context_forbids():
    # The cube is the opponent's: nothing to decide, the decision at 0 ply stands.
    ctx = MatchContext(cube_value=2, cube_owner=0, player_on_roll=1)
    d, base = _same_every_roll((0.6, 0.1, 0.0, 0.1, 0.0), ctx)
    assert d is base and not d.cube_available
    # The Crawford game: dead cube in a match, no double.
    craw = MatchContext(match_length=7, score=(6, 3), crawford=True)
    assert _same_every_roll((0.6, 0.1, 0.0, 0.1, 0.0), craw)[0].action == "no_double"


def test_one_roll_ahead_in_a_match_is_in_match_winning_chances():
    ctx = MatchContext(match_length=7, score=(2, 3))
    d, base = _same_every_roll((0.72, 0.2, 0.01, 0.05, 0.0), ctx)
    for mwc in (d.mwc_no_double, d.mwc_double_take, d.mwc_double_pass):
        assert 0.0 < mwc < 1.0
    assert d.mwc_double_pass == base.mwc_double_pass  # cashing does not depend on the search
    assert d.action in ACTIONS
