"""The bots that ship with bgnet, inside the package as ``bgnet.checkpoints`` (see
``bgnet.resources``): ``bgnet-default.onnx`` and ``bgnet-deep.onnx``. This file only makes the
folder a package; a training run's own checkpoints live in its run folder under ``runs/``."""
