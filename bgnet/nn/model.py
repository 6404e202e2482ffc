"""The value network: encoded position -> five cubeless outcome probabilities for the side on roll.

Outputs follow GNU Backgammon's order, ``(win, win gammon, win backgammon, lose gammon, lose
backgammon)``, gammons included in wins. The network predicts five *conditional* logits
``z = (a, b, c, d, e)`` and the probabilities are built from them, so that
``0 <= wbg <= wg <= win <= 1`` and ``0 <= lbg <= lg <= 1 - win`` hold for any weights::

    win = s(a)   wg = win * s(b)   wbg = wg * s(c)   lg = (1 - win) * s(d)   lbg = lg * s(e)

(``s`` is the logistic function). Two ways to train it, both provided here:

* on the probabilities: :func:`probability_loss` (``"mse"`` or ``"bce"``) of ``net(x)`` against
  target probabilities (TD targets, terminal outcomes);
* on the logits: :func:`conditional_loss` of ``net.forward_logits(x)`` against the same targets,
  turned into conditional targets (P(gammon | win) and so on), each weighted by the probability
  of its condition. It is numerically steadier for rare outcomes (backgammons).

Helpers work on numpy arrays and torch tensors alike (last axis = the five probabilities):
:func:`equity`, :func:`flip`, :func:`terminal_probs` (defined in :mod:`bgnet.nn.probs`).

These modules are the one definition of the network. :func:`net_layout` declares a net in plain
data (:mod:`bgnet.nn.layout`: its weights by ``state_dict`` name, their shapes, the activations),
and the other copies of its function are derived from that declaration: the ONNX graph of an
exported bot and the compiled forward pass (:mod:`bgnet.nn.fast`).

>>> p = np.array([0.6, 0.2, 0.01, 0.1, 0.005])
>>> round(float(equity(p)), 3)
0.305
>>> flip(p).round(3).tolist()
[0.4, 0.1, 0.005, 0.2, 0.01]
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from bgnet.nn.encode import ENCODINGS, encode, encode_afterstates, game_results, num_features, race_mask
from bgnet.nn.layout import CONDITIONAL, weight_names
from bgnet.nn.layout import FORMAT as LAYOUT_FORMAT
from bgnet.nn.layout import VERSION as LAYOUT_VERSION

# The torch-free helpers live in bgnet.nn.probs (an exported bot uses them without torch).
from bgnet.nn.probs import (  # noqa: F401
    NUM_OUTPUTS,
    OUTPUTS,
    check_last_axis,
    equity,
    flip,
    probs_from_logits,
    terminal_probs,
    terminal_probs_batch,
)

ACTIVATIONS = {
    "sigmoid": nn.Sigmoid,
    "tanh": nn.Tanh,
    "relu": nn.ReLU,
    "leaky_relu": nn.LeakyReLU,
    "elu": nn.ELU,
    "silu": nn.SiLU,
}

# Starting output biases: an even game with typical gammon and backgammon rates, so an untrained
# net already gives sensible values rather than 50 % backgammons.
_PRIOR = (0.5, 0.25, 0.08, 0.25, 0.08)


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


# ---------------------------------------------------------------------------------------------
# Losses


def probability_loss(probs: torch.Tensor, targets: torch.Tensor, kind: str = "mse") -> torch.Tensor:
    """Mean loss of predicted probabilities [B, 5] against target probabilities [B, 5].

    ``"mse"``: squared error summed over the five outputs, averaged over rows (the classic TD
    update); ``"bce"``: binary cross-entropy per output, summed and averaged the same way.
    """
    if probs.shape != targets.shape:
        raise ValueError(f"probs and targets differ in shape: {tuple(probs.shape)} vs {tuple(targets.shape)}")
    if kind == "mse":
        return ((probs - targets) ** 2).sum(-1).mean()
    if kind == "bce":
        eps = 1e-7  # keeps log finite where a chained product underflows
        p = probs.clamp(eps, 1.0 - eps)
        return F.binary_cross_entropy(p, targets, reduction="none").sum(-1).mean()
    raise ValueError(f"unknown loss kind {kind!r}; valid kinds: bce, mse")


def conditional_targets(targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Target probabilities [B, 5] -> (conditional targets, weights), both [B, 5].

    Conditionals: win, P(wg | win), P(wbg | wg), P(lg | loss), P(lbg | lg); each weight is the
    target probability of its condition (1 for win), so a conditional nobody can reach costs
    nothing.
    """
    win, wg, wbg, lg, lbg = targets.unbind(-1)
    loss = 1.0 - win
    eps = 1e-12
    cond = torch.stack([
        win,
        torch.where(win > eps, wg / win.clamp_min(eps), torch.zeros_like(win)),
        torch.where(wg > eps, wbg / wg.clamp_min(eps), torch.zeros_like(win)),
        torch.where(loss > eps, lg / loss.clamp_min(eps), torch.zeros_like(win)),
        torch.where(lg > eps, lbg / lg.clamp_min(eps), torch.zeros_like(win)),
    ], dim=-1).clamp(0.0, 1.0)
    weights = torch.stack([torch.ones_like(win), win, wg, loss, lg], dim=-1)
    return cond, weights


def conditional_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Weighted BCE of the five conditional logits (``net.forward_logits(x)``) against target
    probabilities [B, 5], summed over outputs and averaged over rows."""
    if logits.shape != targets.shape:
        raise ValueError(f"logits and targets differ in shape: {tuple(logits.shape)} vs {tuple(targets.shape)}")
    cond, w = conditional_targets(targets)
    bce = F.binary_cross_entropy_with_logits(logits, cond, reduction="none")
    return (w * bce).sum(-1).mean()


# ---------------------------------------------------------------------------------------------
# Networks


class ValueNet(nn.Module):
    """MLP: ``num_features(encoding)`` inputs -> hidden layers -> 5 conditional logits.

    ``hidden``: one width or a list of widths (an empty list gives a linear model).
    ``activation``: one name of :data:`ACTIVATIONS` for every hidden layer, or a list of names,
    one per hidden layer (a net grown by :func:`bgnet.nn.deepen.deepen` mixes sigmoid and relu).
    ``self.activation`` and ``config()["activation"]`` hold the one name when all layers share
    it, else the list; ``self.activations`` is always the list.
    ``forward(x)`` returns probabilities [B, 5]; ``forward_logits(x)`` the logits behind them.

    >>> net = ValueNet("tesauro", 40)
    >>> net(torch.zeros(3, net.num_inputs)).shape
    torch.Size([3, 5])
    >>> ValueNet.from_config(net.config()).config() == net.config()
    True
    """

    def __init__(self, encoding: str = "tesauro", hidden: int | list[int] = 80,
                 activation: str | list[str] = "sigmoid"):
        super().__init__()
        self.num_inputs = num_features(encoding)
        self.encoding = encoding
        self.hidden = _hidden_list(hidden)
        self.activations = _activation_list(activation, len(self.hidden))
        if isinstance(activation, str) or len(set(self.activations)) != 1:
            self.activation = activation if isinstance(activation, str) else list(self.activations)
        else:  # a list naming one activation throughout is that activation
            self.activation = self.activations[0]
        layers: list[nn.Module] = []
        width = self.num_inputs
        for h, act in zip(self.hidden, self.activations):
            layers += [nn.Linear(width, h), ACTIVATIONS[act]()]
            width = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, NUM_OUTPUTS)
        with torch.no_grad():
            self.head.bias.copy_(torch.tensor([_logit(p) for p in _PRIOR]))

    def forward_logits(self, x: torch.Tensor) -> torch.Tensor:
        """Encoded positions float32[B, F] -> conditional logits [B, 5] (see the module doc)."""
        if x.shape[-1] != self.num_inputs:
            raise ValueError(f"expected {self.num_inputs} input features ({self.encoding}); got {x.shape[-1]}")
        return self.head(self.body(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Encoded positions float32[B, F] -> probabilities [B, 5] for the side on roll."""
        return probs_from_logits(self.forward_logits(x))

    def config(self) -> dict:
        """Plain dict that rebuilds this architecture with :func:`net_from_config`."""
        activation = self.activation if isinstance(self.activation, str) else list(self.activation)
        return {"type": "ValueNet", "encoding": self.encoding, "hidden": list(self.hidden),
                "activation": activation}

    @classmethod
    def from_config(cls, cfg: dict) -> ValueNet:
        cfg = dict(cfg)
        kind = cfg.pop("type", "ValueNet")
        if kind != "ValueNet":
            raise ValueError(f"config describes a {kind}, not a ValueNet")
        return cls(**cfg)


class SplitValueNet(nn.Module):
    """Two :class:`ValueNet` on one encoding: ``contact`` for positions with contact, ``race``
    for races. ``forward(x, is_race)`` sends each row to its net.

    >>> net = SplitValueNet("tesauro", 20, race_hidden=10)
    >>> net(torch.zeros(4, 198), torch.tensor([True, False, True, False])).shape
    torch.Size([4, 5])
    """

    def __init__(self, encoding: str = "tesauro", hidden: int | list[int] = 80,
                 activation: str | list[str] = "sigmoid",
                 race_hidden: int | list[int] | None = None,
                 race_activation: str | list[str] | None = None):
        super().__init__()
        self.contact = ValueNet(encoding, hidden, activation)
        self.race = ValueNet(encoding, hidden if race_hidden is None else race_hidden,
                             activation if race_activation is None else race_activation)
        self.encoding = encoding
        self.num_inputs = self.contact.num_inputs

    @property
    def hidden(self) -> list[int]:
        return self.contact.hidden

    def _route(self, x: torch.Tensor, is_race: torch.Tensor, method: str) -> torch.Tensor:
        if is_race is None:
            raise ValueError("SplitValueNet needs is_race (bool[B]); see bgnet.nn.encode.race_mask")
        is_race = torch.as_tensor(is_race, device=x.device)
        if is_race.dtype != torch.bool or is_race.shape != x.shape[:1]:
            raise ValueError(f"is_race must be a bool tensor of shape ({x.shape[0]},); got "
                             f"{is_race.dtype} {tuple(is_race.shape)}")
        race_idx = torch.nonzero(is_race, as_tuple=True)[0]
        contact_idx = torch.nonzero(~is_race, as_tuple=True)[0]
        out = x.new_zeros((x.shape[0], NUM_OUTPUTS))
        # index_copy keeps the graph, so both nets train through one call.
        if len(contact_idx):
            out = out.index_copy(0, contact_idx, getattr(self.contact, method)(x[contact_idx]))
        if len(race_idx):
            out = out.index_copy(0, race_idx, getattr(self.race, method)(x[race_idx]))
        return out

    def forward_logits(self, x: torch.Tensor, is_race: torch.Tensor) -> torch.Tensor:
        return self._route(x, is_race, "forward_logits")

    def forward(self, x: torch.Tensor, is_race: torch.Tensor) -> torch.Tensor:
        return self._route(x, is_race, "forward")

    def config(self) -> dict:
        return {"type": "SplitValueNet", "contact": self.contact.config(), "race": self.race.config()}

    @classmethod
    def of(cls, contact: ValueNet, race: ValueNet) -> SplitValueNet:
        """A split net holding copies of the weights of ``contact`` and ``race`` (one encoding)."""
        if contact.encoding != race.encoding:
            raise ValueError("the contact and race nets of a SplitValueNet must share one encoding")
        out = cls(contact.encoding, contact.hidden, contact.activation, race_hidden=race.hidden,
                  race_activation=race.activation)
        out.contact.load_state_dict(contact.state_dict())
        out.race.load_state_dict(race.state_dict())
        return out

    @classmethod
    def from_config(cls, cfg: dict) -> SplitValueNet:
        if cfg.get("type", "SplitValueNet") != "SplitValueNet":
            raise ValueError(f"config describes a {cfg.get('type')}, not a SplitValueNet")
        c, r = cfg["contact"], cfg["race"]
        if c["encoding"] != r["encoding"]:
            raise ValueError("the contact and race nets of a SplitValueNet must share one encoding")
        return cls(c["encoding"], c["hidden"], c.get("activation", "sigmoid"), r["hidden"],
                   r.get("activation", "sigmoid"))


# ---------------------------------------------------------------------------------------------
# The declared layout (bgnet.nn.layout): what the ONNX export and the compiled pass derive from

_ACTIVATION_NAMES = {cls: name for name, cls in ACTIVATIONS.items()}


def dense_layers(net: ValueNet) -> list[nn.Linear]:
    """The net's dense layers in order: one per hidden layer, then the head."""
    return [m for m in net.body if isinstance(m, nn.Linear)] + [net.head]


def net_layout(net: nn.Module) -> dict:
    """The layout (see :mod:`bgnet.nn.layout`) of a :class:`ValueNet` or :class:`SplitValueNet`,
    read from its modules as they are, with the weights named by their ``state_dict`` keys.
    A module the layout cannot declare (an unknown activation, two Linear layers in a row)
    raises ValueError naming it.

    >>> layout = net_layout(ValueNet("tesauro", 8))
    >>> [(l["weight"], l["shape"], l["activation"]) for l in layout["subnets"][0]["layers"]]
    [('body.0.weight', [8, 198], 'sigmoid'), ('head.weight', [5, 8], 'conditional_probabilities')]
    """
    if isinstance(net, SplitValueNet):
        subnets = [("contact", net.contact, "contact."), ("race", net.race, "race.")]
        route = "race_mask"
    elif isinstance(net, ValueNet):
        subnets, route = [("net", net, "")], None
    else:
        raise ValueError(f"a {type(net).__name__} has no declared layout; nets with one: "
                         "ValueNet, SplitValueNet")
    return {"format": LAYOUT_FORMAT, "version": LAYOUT_VERSION, "encoding": net.encoding,
            "inputs": int(net.num_inputs), "route": route,
            "subnets": [{"name": name, "layers": _declared_layers(sub, prefix)}
                        for name, sub, prefix in subnets]}


def _declared_layers(net: ValueNet, prefix: str) -> list[dict]:
    out: list[dict] = []
    pending = None  # a Linear layer waiting for its activation
    for i, module in enumerate(net.body):
        if isinstance(module, nn.Linear) and pending is None:
            pending = _declared_linear(module, f"{prefix}body.{i}")
            continue
        name = _ACTIVATION_NAMES.get(type(module))
        if name is None or pending is None:
            raise ValueError(f"layer body.{i} ({type(module).__name__}) cannot be declared: a value "
                             "net alternates Linear layers and the activations "
                             f"{', '.join(ACTIVATIONS)}")
        pending["activation"] = name
        # _ACTIVATION_NAMES is keyed by exact class, so these isinstance tests pick the same layers
        # as the names would, and tell the type checker which attribute each one has.
        if isinstance(module, nn.LeakyReLU):
            pending["alpha"] = float(module.negative_slope)
        elif isinstance(module, nn.ELU):
            pending["alpha"] = float(module.alpha)
        out.append(pending)
        pending = None
    if pending is not None:
        raise ValueError("the last hidden Linear layer of the body has no activation")
    head = _declared_linear(net.head, f"{prefix}head")
    head["activation"] = CONDITIONAL
    return out + [head]


def _declared_linear(layer: nn.Linear, name: str) -> dict:
    return {"weight": f"{name}.weight", "bias": f"{name}.bias", "shape": list(layer.weight.shape)}


def net_weights(net: nn.Module) -> dict[str, np.ndarray]:
    """``{declared name: float32 array}`` of the weights a net's layout declares (copies, on the
    CPU)."""
    state = net.state_dict()
    return {name: state[name].detach().cpu().numpy().astype(np.float32)
            for name in weight_names(net_layout(net))}


def net_from_config(cfg: dict) -> ValueNet | SplitValueNet:
    """Rebuild a :class:`ValueNet` or :class:`SplitValueNet` from its ``config()``."""
    kinds: dict[str, type[ValueNet] | type[SplitValueNet]] = {"ValueNet": ValueNet, "SplitValueNet": SplitValueNet}
    kind = cfg.get("type", "ValueNet")
    if kind not in kinds:
        raise ValueError(f"unknown net type {kind!r}; valid types: {', '.join(kinds)}")
    return kinds[kind].from_config(cfg)


def _activation_list(activation, layers: int) -> list[str]:
    """One activation name per hidden layer, from one name or a list of them (checked)."""
    names = [activation] * layers if isinstance(activation, str) else activation
    if not isinstance(names, (list, tuple)) or len(names) != layers:
        raise ValueError(f"activation must be one name or a list of {layers} names (one per hidden "
                         f"layer); got {activation!r}")
    for name in names:
        if name not in ACTIVATIONS:
            raise ValueError(f"unknown activation {name!r}; valid activations: "
                             f"{', '.join(sorted(ACTIVATIONS))}")
    return [str(n) for n in names]


def _hidden_list(hidden) -> list[int]:
    if isinstance(hidden, (int, np.integer)) and not isinstance(hidden, bool):
        hidden = [hidden]
    try:
        widths = [int(h) for h in hidden]
    except TypeError:
        raise ValueError(f"hidden must be an int or a list of ints; got {hidden!r}") from None
    if any(w <= 0 or w != h for w, h in zip(widths, hidden)):
        raise ValueError(f"hidden layer widths must be positive integers; got {list(hidden)!r}")
    return widths


# ---------------------------------------------------------------------------------------------
# Evaluation of boards


_DEFAULT_BATCH = 32768


def evaluate_positions(net: nn.Module, boards: np.ndarray, device: str | torch.device = "cpu",
                       batch: int | None = None) -> np.ndarray:
    """float32[N, 5]: the net's probabilities for the side on roll of each position in ``boards``
    (int8[N, 2, 25]). The net must already be on ``device``; rows go through in chunks of
    ``batch`` (default 32768) with gradients off."""
    return _evaluate(net, boards, device, batch, afterstates=False)


def evaluate_afterstates(net: nn.Module, after: np.ndarray, device: str | torch.device = "cpu",
                         batch: int | None = None) -> np.ndarray:
    """float32[M, 5]: probabilities FOR THE MOVER of afterstates ``[opponent, mover_after]``.

    The net judges each as the position with the opponent on roll, and that view is flipped; an
    afterstate that ends the game gets its exact outcome instead of the net's estimate.
    """
    probs = flip(_evaluate(net, after, device, batch, afterstates=True))
    results = game_results(np.asarray(after).reshape(-1, 2, 25))
    done = results > 0
    if done.any():
        probs[done] = terminal_probs_batch(results[done])
    return probs


def _evaluate(net, boards, device, batch, afterstates: bool) -> np.ndarray:
    arr = np.asarray(boards)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1:] != (2, 25):
        raise ValueError(f"boards must have shape (N, 2, 25); got {arr.shape}")
    n = arr.shape[0]
    step = _DEFAULT_BATCH if batch is None else int(batch)
    if step <= 0:
        raise ValueError(f"batch must be positive; got {batch}")
    name = net.encoding
    split = isinstance(net, SplitValueNet)
    out = np.empty((n, NUM_OUTPUTS), np.float32)
    buf = np.empty((min(step, n), ENCODINGS[name]), np.float32)
    enc = encode_afterstates if afterstates else encode
    with torch.no_grad():
        for lo in range(0, n, step):
            chunk = arr[lo:lo + step]
            x = enc(chunk, name, buf[:len(chunk)])
            xt = torch.from_numpy(x).to(device)
            if split:
                mask = torch.from_numpy(race_mask(chunk)).to(device)
                p = net(xt, mask)
            else:
                p = net(xt)
            out[lo:lo + len(chunk)] = p.float().cpu().numpy()
    return out
