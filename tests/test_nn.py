"""Tests of bgnet.nn: encodings against slow pure-Python references, the value net's outputs,
probability helpers, terminal handling, contact/race routing and a training step."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from bgnet.engine.board import game_result, is_race, pip_counts, start_position, swap
from bgnet.engine.movegen import generate, generate_batch
from bgnet.nn.encode import (
    ENCODINGS,
    EXTRA_PER_SIDE,
    EXTRA_START,
    encode,
    encode_afterstates,
    game_results,
    num_features,
    race_mask,
)
from bgnet.nn.model import (
    SplitValueNet,
    ValueNet,
    conditional_loss,
    conditional_targets,
    equity,
    evaluate_afterstates,
    evaluate_positions,
    flip,
    net_from_config,
    probability_loss,
    probs_from_logits,
    terminal_probs,
    terminal_probs_batch,
)

torch.set_num_threads(1)


def random_play(n_games: int, plies: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions (side on roll in board[1]) and afterstates met in random self-play."""
    rng = np.random.default_rng(seed)
    boards = np.repeat(start_position()[None], n_games, 0)
    seen, afters = [], []
    for _ in range(plies):
        dice = rng.integers(1, 7, size=(n_games, 2))
        after, _, off = generate_batch(boards, dice)
        pick = off[:-1] + (rng.random(n_games) * np.diff(off)).astype(np.int64)
        chosen = after[pick]
        afters.append(chosen)
        boards = chosen[:, ::-1].copy()
        done = game_results(chosen) > 0
        boards[done] = start_position()
        seen.append(boards.copy())
    return np.concatenate(seen), np.concatenate(afters)


@pytest.fixture(scope="module")
def play():
    return random_play(60, 90, seed=7)


@pytest.fixture(scope="module")
def positions(play):
    return play[0]


# ---------------------------------------------------------------------------------------------
# Slow references


def ref_tesauro(board) -> list[float]:
    feats = []
    for side in (board[1], board[0]):
        for i in range(24):
            n = int(side[i])
            feats += [float(n >= 1), float(n >= 2), float(n >= 3), (n - 3) / 2 if n > 3 else 0.0]
        feats.append(int(side[24]) / 2)
        feats.append((15 - int(side.sum())) / 15)
    feats.append(float(is_race(board)))
    feats.append(float(int(board[1, 6:].sum()) == 0))
    return feats


def brute_shots(board) -> int:
    """Rolls out of 36 after which the opponent, moving now, has a legal play hitting a blot of
    the side on roll (counted over the move generator's complete move lists)."""
    opp_on_roll = swap(board)
    count = 0
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            after, _ = generate(opp_on_roll, d1, d2)
            if len(after) and (after[:, 0, 24] > board[1, 24]).any():
                count += 1
    return count


def ref_escapes(s, o) -> int:
    """Escape count by plain enumeration of the 36 ordered rolls (the module's definition)."""
    occupied = [i for i in range(25) if s[i] > 0]
    if not occupied:
        return 36
    rear = max(occupied)
    held = {i for i in range(24) if o[23 - i] >= 2}
    ahead = [i for i in held if rear - 12 <= i < rear]
    if not ahead:
        return 36
    front = min(ahead)
    nbar = int(s[24]) if rear == 24 else 0
    count = 0
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            if d1 == d2:
                seqs = [[d1] * min(4, max(0, 5 - nbar))] if nbar >= 1 else [[d1] * 4]
            else:
                seqs = [[d1], [d2]] if nbar >= 2 else [[d1, d2], [d2, d1]]
            ok = False
            for seq in seqs:
                pos = rear
                for die in seq:
                    pos -= die
                    if pos < 0 or pos in held:
                        break
                    if pos < front:
                        ok = True
                        break
            count += ok
    return count


def ref_extra(s, o) -> list[float]:
    made = [i for i in range(24) if s[i] >= 2]
    best, rear, run = 0, -1, 0
    for i in range(24):
        run = run + 1 if i in made else 0
        if run and run >= best:
            best, rear = run, i
    pips = sum((i + 1) * int(s[i]) for i in range(25))
    blots = sum(1 for i in range(24) if s[i] == 1)
    cross = sum((min(i, 24) // 6) * int(s[i]) for i in range(6, 24)) + 4 * int(s[24])
    return [
        pips / 167,
        blots / 5,
        None,  # shots: checked against brute force separately
        min(best, 6) / 6,
        (rear + 1) / 24 if best else 0.0,
        sum(1 for i in made if i < 6) / 6,
        sum(1 for i in made if i >= 18) / 3,
        (int(s[18:].sum())) / 5,
        ref_escapes(s, o) / 36,
        (15 - int(s[6:].sum())) / 15,
        cross / 30,
    ]


# ---------------------------------------------------------------------------------------------
# Encodings


def test_names_and_counts():
    assert num_features("tesauro") == 198 == ENCODINGS["tesauro"]
    assert num_features("extended") == EXTRA_START + 2 * EXTRA_PER_SIDE + 1
    with pytest.raises(ValueError, match="contact, extended, tesauro"):
        num_features("gnubg")
    with pytest.raises(ValueError, match="valid encodings"):
        encode(start_position()[None], "raw")


def test_tesauro_matches_reference(play):
    boards, afters = play
    sample = boards[::4]
    x = encode(sample, "tesauro")
    ref = np.array([ref_tesauro(b) for b in sample], np.float32)
    np.testing.assert_array_equal(x, ref)
    y = encode_afterstates(afters[::7], "tesauro")
    ref_after = np.array([ref_tesauro(swap(a)) for a in afters[::7]], np.float32)
    np.testing.assert_array_equal(y, ref_after)


def test_afterstate_encoding_is_swapped_encoding(play):
    _, afters = play
    for name in ENCODINGS:
        np.testing.assert_array_equal(encode_afterstates(afters, name),
                                      encode(afters[:, ::-1], name))


def test_extended_starts_with_tesauro(positions):
    np.testing.assert_array_equal(encode(positions, "extended")[:, :198], encode(positions, "tesauro"))


def test_extended_features_match_reference(positions):
    sample = positions[::6]
    x = encode(sample, "extended")
    for row, b in zip(x, sample):
        for block, (s, o) in enumerate(((b[1], b[0]), (b[0], b[1]))):
            got = row[EXTRA_START + block * EXTRA_PER_SIDE:EXTRA_START + (block + 1) * EXTRA_PER_SIDE]
            for k, want in enumerate(ref_extra(s, o)):
                if want is not None:
                    assert got[k] == pytest.approx(want, abs=1e-6), (k, b.tolist())
        mine, theirs = pip_counts(b)
        assert row[EXTRA_START] * 167 == pytest.approx(mine, abs=1e-3)
        assert row[EXTRA_START + EXTRA_PER_SIDE] * 167 == pytest.approx(theirs, abs=1e-3)
        assert row[-1] * 100 == pytest.approx(theirs - mine, abs=1e-3)


def test_shots_against_brute_force(positions):
    # Random play leaves plenty of blots, bar checkers and bear-offs to cover every branch.
    sample = [b for b in positions[::5] if (b[1, :24] == 1).any()][:250]
    x = encode(np.array(sample), "extended")
    ours = np.rint(x[:, EXTRA_START + 2] * 36).astype(int)
    brute = np.array([brute_shots(b) for b in sample])
    assert brute.max() > 20 and (ours != 0).sum() > 100
    # The shot count ignores the rule that as many dice as possible must be played, so it can
    # only overcount, and only in rare positions.
    assert (ours >= brute).all()
    assert (ours == brute).mean() >= 0.97
    # The opponent's blots, hit by the side on roll, through the afterstate view.
    opp_shots = np.rint(x[:, EXTRA_START + EXTRA_PER_SIDE + 2] * 36).astype(int)
    brute_opp = np.array([brute_shots(swap(b)) for b in sample[:80]])
    assert (opp_shots[:80] >= brute_opp).all() and (opp_shots[:80] == brute_opp).mean() >= 0.95


def test_symmetry_under_swap(positions):
    x = encode(positions, "extended")
    xs = encode(positions[:, ::-1], "extended")
    np.testing.assert_array_equal(x[:, :98], xs[:, 98:196])
    np.testing.assert_array_equal(x[:, 98:196], xs[:, :98])
    np.testing.assert_array_equal(x[:, 196], xs[:, 196])  # contact is symmetric
    a, b = EXTRA_START, EXTRA_START + EXTRA_PER_SIDE
    np.testing.assert_array_equal(x[:, a:b], xs[:, b:b + EXTRA_PER_SIDE])
    np.testing.assert_array_equal(x[:, -1], -xs[:, -1])


def test_race_mask_and_results(play):
    boards, afters = play
    np.testing.assert_array_equal(race_mask(boards), [is_race(b) for b in boards])
    np.testing.assert_array_equal(race_mask(afters), [is_race(swap(a)) for a in afters])
    assert race_mask(boards).any() and not race_mask(boards).all()
    np.testing.assert_array_equal(game_results(afters), [game_result(a) for a in afters])
    assert (game_results(afters) > 0).any()


def test_out_buffer_reused_and_checked(positions):
    buf = np.full((len(positions), 198), -1.0, np.float32)
    res = encode(positions, "tesauro", out=buf)
    assert res is buf and (buf >= 0).all()
    with pytest.raises(ValueError, match="out must be"):
        encode(positions, "tesauro", out=np.empty((len(positions), 221), np.float32))
    with pytest.raises(ValueError, match="out must be"):
        encode(positions, "tesauro", out=np.empty((len(positions), 198), np.float64))
    with pytest.raises(ValueError, match="shape"):
        encode(np.zeros((3, 25), np.int8), "tesauro")
    one = encode(start_position(), "tesauro")
    assert one.shape == (1, 198)


# ---------------------------------------------------------------------------------------------
# Probabilities and helpers


def _random_probs(n, seed):
    z = torch.randn(n, 5, generator=torch.Generator().manual_seed(seed)) * 4
    return probs_from_logits(z)


def test_outputs_consistent_for_any_weights(positions):
    torch.manual_seed(0)
    net = ValueNet("extended", [30, 20], "relu")
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(25.0)  # saturate: consistency must hold by construction, not by training
    with torch.no_grad():
        p = net(torch.from_numpy(encode(positions, "extended"))).numpy()
    assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()
    win, wg, wbg, lg, lbg = p.T
    assert (wbg <= wg).all() and (wg <= win).all()
    assert (lbg <= lg).all() and (lg <= 1 - win + 1e-6).all()


def test_flip_and_equity():
    p = _random_probs(200, 1)
    np.testing.assert_allclose(flip(flip(p)).numpy(), p.numpy(), atol=1e-7)
    np.testing.assert_allclose(equity(flip(p)).numpy(), -equity(p).numpy(), atol=1e-6)
    pn = p.numpy()
    np.testing.assert_allclose(flip(pn), flip(p).numpy(), atol=1e-7)
    np.testing.assert_allclose(equity(pn), equity(p).numpy(), atol=1e-6)
    e = equity(pn)
    assert ((e >= -3) & (e <= 3)).all()
    np.testing.assert_allclose(probs_from_logits(np.zeros(5)), [0.5, 0.25, 0.125, 0.25, 0.125])
    with pytest.raises(ValueError, match="last axis of 5"):
        equity(np.zeros((2, 4)))


def test_terminal_probs():
    for pts in (1, 2, 3):
        win = terminal_probs(pts, True)
        assert equity(win) == pts
        np.testing.assert_array_equal(terminal_probs(pts, False), flip(win))
        np.testing.assert_array_equal(terminal_probs_batch(np.array([pts]))[0], win)
    for bad in (0, 4, 1.5):
        with pytest.raises(ValueError, match="1, 2 or 3"):
            terminal_probs(bad)


def test_evaluate_afterstates_flips_and_scores_finished_games(play):
    _, afters = play
    torch.manual_seed(1)
    net = ValueNet("tesauro", 16)
    pa = evaluate_afterstates(net, afters)
    po = evaluate_positions(net, afters[:, ::-1], batch=97)
    results = game_results(afters)
    live = results == 0
    np.testing.assert_allclose(pa[live], flip(po[live]), atol=1e-6)
    for r in (1, 2, 3):
        rows = results == r
        if rows.any():
            np.testing.assert_array_equal(pa[rows], np.broadcast_to(terminal_probs(r), (rows.sum(), 5)))
    assert (~live).any()


def test_evaluate_matches_direct_forward(positions):
    torch.manual_seed(2)
    net = ValueNet("extended", 12, "tanh")
    with torch.no_grad():
        want = net(torch.from_numpy(encode(positions, "extended"))).numpy()
    np.testing.assert_allclose(evaluate_positions(net, positions, batch=1000), want, atol=1e-6)
    assert evaluate_positions(net, positions[:0]).shape == (0, 5)


# ---------------------------------------------------------------------------------------------
# Networks


def test_config_round_trip():
    for net in (ValueNet("extended", [40, 20], "silu"), SplitValueNet("tesauro", 30, race_hidden=10)):
        clone = net_from_config(net.config())
        assert clone.config() == net.config() and type(clone) is type(net)
        clone.load_state_dict(net.state_dict())
        x = torch.rand(5, net.num_inputs)
        mask = torch.tensor([True, False, True, False, False])
        args = (x,) if isinstance(net, ValueNet) else (x, mask)
        torch.testing.assert_close(clone(*args), net(*args))
    assert ValueNet(hidden=80).hidden == [80]
    for bad in (dict(hidden=0), dict(hidden=[10, -1]), dict(hidden="x"), dict(activation="cube"),
                dict(encoding="nope")):
        with pytest.raises(ValueError):
            ValueNet(**bad)
    with pytest.raises(ValueError, match="unknown net type"):
        net_from_config({"type": "Transformer"})


def test_split_net_routes_rows(positions):
    torch.manual_seed(3)
    net = SplitValueNet("tesauro", 20, race_hidden=8)
    x = torch.from_numpy(encode(positions, "tesauro"))
    mask = torch.from_numpy(race_mask(positions))
    out = net(x, mask)
    torch.testing.assert_close(out[mask], net.race(x[mask]))
    torch.testing.assert_close(out[~mask], net.contact(x[~mask]))
    np.testing.assert_allclose(evaluate_positions(net, positions), out.detach().numpy(), atol=1e-6)
    out.sum().backward()
    assert net.race.head.weight.grad.abs().sum() > 0 and net.contact.head.weight.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="is_race"):
        net(x, mask.int())


def test_conditional_targets_recover_probabilities():
    p = _random_probs(100, 4)
    cond, w = conditional_targets(p)
    torch.testing.assert_close(probs_from_logits(torch.logit(cond.clamp(1e-6, 1 - 1e-6))), p,
                               atol=1e-5, rtol=0)
    assert (w[:, 0] == 1).all() and torch.equal(w[:, 1], p[:, 0])
    # A certain single win: no gammon conditional can be trained from a zero-weight row.
    cond, w = conditional_targets(torch.tensor([[1.0, 0.0, 0.0, 0.0, 0.0]]))
    assert w[0, 3] == 0 and w[0, 4] == 0 and cond[0, 0] == 1


@pytest.mark.parametrize("loss", ["mse", "bce", "conditional"])
def test_training_steps_reduce_loss(positions, loss):
    torch.manual_seed(5)
    net = ValueNet("tesauro", 16)
    x = torch.from_numpy(encode(positions[:512], "tesauro"))
    targets = _random_probs(512, 6)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)

    def current():
        if loss == "conditional":
            return conditional_loss(net.forward_logits(x), targets)
        return probability_loss(net(x), targets, loss)

    first = current().item()
    for _ in range(30):
        opt.zero_grad()
        value = current()
        value.backward()
        opt.step()
    assert current().item() < 0.9 * first


def test_loss_argument_checks():
    p = _random_probs(4, 0)
    with pytest.raises(ValueError, match="valid kinds"):
        probability_loss(p, p, "hinge")
    with pytest.raises(ValueError, match="differ in shape"):
        probability_loss(p, p[:2])
    assert probability_loss(p, p).item() == 0


# ---------------------------------------------------------------------------------------------
# The declared layout


LAYOUT_NETS = [
    lambda: ValueNet("tesauro", 8),
    lambda: ValueNet("extended", [40, 20], "leaky_relu"),
    lambda: ValueNet("tesauro", [], "tanh"),
    lambda: SplitValueNet("extended", 24, race_hidden=[12, 6], race_activation="elu"),
]


@pytest.mark.parametrize("make", LAYOUT_NETS)
def test_layout_declares_exactly_the_modules_weights(make):
    from bgnet.nn.layout import check_layout, check_weights, declared_shapes
    from bgnet.nn.model import net_layout, net_weights

    net = make()
    layout = check_layout(net_layout(net))
    state = net.state_dict()
    assert declared_shapes(layout) == {k: tuple(v.shape) for k, v in state.items()}
    weights = net_weights(net)
    check_weights(layout, weights)
    assert all(np.array_equal(weights[k], state[k].numpy()) for k in state)
    assert layout["inputs"] == net.num_inputs and layout["encoding"] == net.encoding
    for sub in layout["subnets"]:
        hidden = [layer["activation"] for layer in sub["layers"][:-1]]
        own = net if sub["name"] == "net" else getattr(net, sub["name"])
        assert hidden == [own.activation] * len(own.hidden)
    # The layout's alpha is the module's own parameter.
    leaky = net_layout(ValueNet("tesauro", 4, "leaky_relu"))["subnets"][0]["layers"][0]
    assert leaky["alpha"] == pytest.approx(0.01)


def test_layout_refuses_modules_it_cannot_declare():
    from bgnet.nn.model import net_layout

    net = ValueNet("tesauro", 8)
    net.body[1] = torch.nn.Softplus()
    with pytest.raises(ValueError, match="Softplus"):
        net_layout(net)
    with pytest.raises(ValueError, match="Linear"):
        net_layout(torch.nn.Linear(3, 5))


def _layout_with(change):
    from bgnet.nn.model import net_layout

    layout = net_layout(SplitValueNet("tesauro", 8, race_hidden=4))
    change(layout)
    return layout


@pytest.mark.parametrize("change, message", [
    (lambda l: l.update(format="other"), "format tag"),
    (lambda l: l.update(version=99), "newer bgnet"),
    (lambda l: l.update(route=None), "needs 1 sub-net"),
    (lambda l: l.update(route="coin"), "unknown routing"),
    (lambda l: l["subnets"][0]["layers"][0].update(shape=[8, 197]), "receives 198"),
    (lambda l: l["subnets"][1]["layers"][0].update(activation="cube"), "unknown activation"),
    (lambda l: l["subnets"][1]["layers"].pop(), "conditional logits"),
    (lambda l: l["subnets"][0]["layers"][1].update(shape=[4, 8]), "5 conditional logits"),
    (lambda l: l["subnets"][0].update(layers=[]), "non-empty"),
])
def test_malformed_layouts_are_refused(change, message):
    from bgnet.nn.layout import LayoutError, check_layout

    with pytest.raises(LayoutError, match=message):
        check_layout(_layout_with(change))


def test_weights_must_fit_the_layout():
    from bgnet.nn.layout import LayoutError, check_weights
    from bgnet.nn.model import net_layout, net_weights

    net = ValueNet("tesauro", 8)
    layout, weights = net_layout(net), net_weights(net)
    with pytest.raises(LayoutError, match="'head.bias' is declared but missing"):
        check_weights(layout, {k: v for k, v in weights.items() if k != "head.bias"})
    with pytest.raises(LayoutError, match=r"'body.0.weight' has shape \(8, 197\)"):
        check_weights(layout, dict(weights, **{"body.0.weight": np.zeros((8, 197))}))


def test_probs_from_logits_is_one_function_for_numpy_and_torch():
    z = torch.randn(300, 5, generator=torch.Generator().manual_seed(4)) * 3
    from_numpy = probs_from_logits(z.numpy())
    assert from_numpy.dtype == np.float32
    np.testing.assert_allclose(from_numpy, probs_from_logits(z).numpy(), atol=1e-7)
    with pytest.raises(ValueError, match="last axis of 5"):
        probs_from_logits(np.zeros((2, 4)))
