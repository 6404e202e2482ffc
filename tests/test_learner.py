"""The minibatch learner's scaled rate for new inputs: the first-layer weights of inputs a grown
net has just been given step ``scale`` times as far, which for Adam is the same as training a net
that sees those inputs ``scale`` times larger (the usual way to give some weights a higher rate)."""
from __future__ import annotations

import copy

import pytest
import torch
from test_fast import batches  # noqa: F401 (a fixture)

from bgnet.nn.encode import CONTACT_START, encode, race_mask
from bgnet.nn.model import SplitValueNet, ValueNet, dense_layers, probability_loss
from bgnet.train.config import ConfigError
from bgnet.train.learn import Learner

SCALE = 10.0


@pytest.mark.parametrize("fast", [True, False])
def test_adam_on_scaled_new_inputs_is_adam_on_inputs_that_large(fast, batches):  # noqa: F811
    torch.manual_seed(0)
    net = ValueNet("contact", [24, 12], ["sigmoid", "relu"])
    start = dense_layers(net)[0].weight.detach().clone()
    ref = copy.deepcopy(net)  # sees the new inputs SCALE times larger, their weights SCALE smaller
    with torch.no_grad():
        dense_layers(ref)[0].weight[:, CONTACT_START:] /= SCALE
    # A tiny eps: Adam's eps is the one term that the two ways of scaling treat differently.
    learner = Learner(net, torch.optim.Adam(net.parameters(), lr=1e-4, eps=1e-12), "mse", "cpu",
                      fast_cpu=fast, new_inputs=(CONTACT_START, SCALE))
    assert (learner.fast is not None) == fast
    ref_opt = torch.optim.Adam(ref.parameters(), lr=1e-4, eps=1e-12)
    for boards, targets in batches[:8]:
        learner.update(boards, targets)
        x = torch.from_numpy(encode(boards, "contact"))
        x[:, CONTACT_START:] *= SCALE
        loss = probability_loss(ref(x), torch.from_numpy(targets), "mse")
        ref_opt.zero_grad(set_to_none=True)
        loss.backward()
        ref_opt.step()
    w, u = dense_layers(net)[0].weight.detach(), dense_layers(ref)[0].weight.detach()
    assert torch.allclose(w[:, :CONTACT_START], u[:, :CONTACT_START], atol=1e-7)
    assert torch.allclose(w[:, CONTACT_START:], SCALE * u[:, CONTACT_START:], atol=1e-6)
    moved = (w - start).abs()
    assert moved[:, CONTACT_START:].max() > 5 * moved[:, :CONTACT_START].max() > 0


def test_a_split_nets_both_first_layers_scale_and_nothing_else(batches):  # noqa: F811
    torch.manual_seed(1)
    net = SplitValueNet("contact", [16], race_hidden=[8])
    plain = copy.deepcopy(net)
    start = [p.detach().clone() for p in net.parameters()]
    boards, targets = batches[0]
    assert race_mask(boards).any() and (~race_mask(boards)).any()
    Learner(net, torch.optim.SGD(net.parameters(), lr=0.1), "mse", "cpu", fast_cpu=True,
            new_inputs=(CONTACT_START, SCALE)).update(boards, targets)
    Learner(plain, torch.optim.SGD(plain.parameters(), lr=0.1), "mse", "cpu",
            fast_cpu=True).update(boards, targets)
    firsts = {id(dense_layers(sub)[0].weight) for sub in (net.contact, net.race)}
    for p, q, p0 in zip(net.parameters(), plain.parameters(), start):
        step, plain_step = p.detach() - p0, q.detach() - p0
        if id(p) in firsts:
            assert torch.allclose(step[:, :CONTACT_START], plain_step[:, :CONTACT_START], atol=1e-7)
            assert torch.allclose(step[:, CONTACT_START:], SCALE * plain_step[:, CONTACT_START:], atol=1e-6)
            assert plain_step[:, CONTACT_START:].abs().max() > 0
        else:
            assert torch.allclose(step, plain_step, atol=1e-7)


def test_new_inputs_past_the_net_are_a_config_error():
    net = ValueNet("extended", [8])
    opt = torch.optim.Adam(net.parameters())
    with pytest.raises(ConfigError, match="optim.new_inputs_from.*1..220.*got 221"):
        Learner(net, opt, "mse", "cpu", new_inputs=(CONTACT_START, SCALE))
    assert not Learner(net, opt, "mse", "cpu", new_inputs=(100, 1.0)).boosted  # scale 1: nothing to do
