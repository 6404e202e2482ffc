"""The declared layout of a value net: its weights by name and shape, and what runs between them.

The torch modules of :mod:`bgnet.nn.model` are the one definition of the network; their
``layout()`` declares it in plain data (no torch needed to read it), and every other copy of the
network's function is derived from that declaration and the weights it names: the ONNX graph of
an exported bot (:mod:`bgnet.export.onnx_export`, which stores the layout in the file's
metadata), and the compiled forward pass (:mod:`bgnet.nn.fast`), which runs an exported bot's
weights found by their declared names.

A layout is a JSON-able dict::

    {"format": "bgnet-layout", "version": 1,
     "encoding": "extended",          # bgnet.nn.encode's name of the input encoding
     "inputs": 221,                   # its number of features
     "route": "race_mask" or None,    # how rows choose a sub-net (see below)
     "subnets": [{"name": "contact", "layers": [LAYER, ...]}, ...]}

and each ``LAYER`` is a dense layer ``y = x @ weight.T + bias`` followed by its activation::

    {"weight": "contact.body.0.weight", "bias": "contact.body.0.bias",
     "shape": [256, 221],             # [outputs, inputs], torch's Linear layout
     "activation": "sigmoid"}         # one of ACTIVATIONS, or CONDITIONAL for the last layer

Weight names are the keys of the torch module's ``state_dict()``. The last layer of every sub-net
gives five conditional logits and its activation is :data:`CONDITIONAL`: the probabilities built
from them by :func:`bgnet.nn.probs.probs_from_logits`. ``"leaky_relu"`` and ``"elu"`` layers also
carry their ``"alpha"`` (torch's ``negative_slope`` and ``alpha``).

Routing: ``None`` for one sub-net, which takes every row; ``"race_mask"`` for two sub-nets, the
first (contact) for rows where :func:`bgnet.nn.encode.race_mask` is false and the second (race)
where it is true.
"""
from __future__ import annotations

FORMAT = "bgnet-layout"
VERSION = 1
# Hidden-layer activations a layout may declare (the names of bgnet.nn.model.ACTIVATIONS).
ACTIVATIONS = ("sigmoid", "tanh", "relu", "leaky_relu", "elu", "silu")
# The activation of a sub-net's last layer: five conditional logits -> five probabilities.
CONDITIONAL = "conditional_probabilities"
ROUTES = (None, "race_mask")
NUM_OUTPUTS = 5


class LayoutError(ValueError):
    """A layout, or weights meant for it, that do not describe a bgnet value net."""


def check_layout(layout) -> dict:
    """``layout`` itself when it is a well-formed layout; otherwise LayoutError saying what is
    wrong. Checks the structure, that each layer's inputs are the previous layer's outputs, and
    that every sub-net ends in the five conditional logits."""
    if not isinstance(layout, dict) or layout.get("format") != FORMAT:
        raise LayoutError(f"not a value-net layout (no '{FORMAT}' format tag)")
    if layout.get("version") != VERSION:
        raise LayoutError(f"layout version {layout.get('version')!r} is not {VERSION}; "
                          "a newer bgnet wrote it")
    subnets = layout.get("subnets")
    route = layout.get("route")
    if route not in ROUTES:
        raise LayoutError(f"unknown routing {route!r}; known: {ROUTES}")
    expected = 1 if route is None else 2
    if not isinstance(subnets, list) or len(subnets) != expected:
        raise LayoutError(f"routing {route!r} needs {expected} sub-net(s)")
    inputs = layout.get("inputs")
    if not isinstance(inputs, int) or inputs <= 0 or not isinstance(layout.get("encoding"), str):
        raise LayoutError("a layout needs its encoding's name and its number of inputs")
    for sub in subnets:
        _check_subnet(sub, inputs)
    return layout


def _check_subnet(sub, inputs: int) -> None:
    layers = sub.get("layers") if isinstance(sub, dict) else None
    if not isinstance(layers, list) or not layers:
        raise LayoutError("every sub-net needs a non-empty list of layers")
    width = inputs
    for k, layer in enumerate(layers):
        name = f"sub-net {sub.get('name')!r} layer {k}"
        if not isinstance(layer, dict) or not all(isinstance(layer.get(key), str)
                                                  for key in ("weight", "bias", "activation")):
            raise LayoutError(f"{name} needs a weight name, a bias name and an activation")
        shape = layer.get("shape")
        if not (isinstance(shape, list) and len(shape) == 2
                and all(isinstance(d, int) and d > 0 for d in shape)):
            raise LayoutError(f"{name}: shape must be [outputs, inputs]; got {shape!r}")
        if shape[1] != width:
            raise LayoutError(f"{name} takes {shape[1]} inputs but receives {width}")
        last = k == len(layers) - 1
        act = layer["activation"]
        if last and (act != CONDITIONAL or shape[0] != NUM_OUTPUTS):
            raise LayoutError(f"{name}, the last, must give {NUM_OUTPUTS} conditional logits")
        if not last and act not in ACTIVATIONS:
            raise LayoutError(f"{name}: unknown activation {act!r}; known: {', '.join(ACTIVATIONS)}")
        width = shape[0]


def layers(layout: dict) -> list[dict]:
    """Every layer of every sub-net, in order."""
    return [layer for sub in layout["subnets"] for layer in sub["layers"]]


def weight_names(layout: dict) -> list[str]:
    """The names of every weight and bias the layout declares, in order."""
    return [name for layer in layers(layout) for name in (layer["weight"], layer["bias"])]


def declared_shapes(layout: dict) -> dict[str, tuple]:
    """``{name: shape}`` of every declared weight (biases: one axis, the layer's outputs)."""
    shapes = {}
    for layer in layers(layout):
        shapes[layer["weight"]] = tuple(layer["shape"])
        shapes[layer["bias"]] = (layer["shape"][0],)
    return shapes


def check_weights(layout: dict, weights: dict) -> None:
    """LayoutError unless ``weights`` (name -> array) holds every declared weight, in its shape.
    Names the layout does not declare are allowed (an ONNX file also holds constants)."""
    for name, shape in declared_shapes(layout).items():
        if name not in weights:
            raise LayoutError(f"weight {name!r} is declared but missing")
        got = tuple(weights[name].shape)
        if got != shape:
            raise LayoutError(f"weight {name!r} has shape {got}; the layout declares {shape}")
