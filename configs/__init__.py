"""bgnet's training configs, shipped inside the package as ``bgnet.configs`` (see
``bgnet.resources``): ``train.yaml`` and its groups ``model/``, ``optim/``, ``recipe/``,
``experiment/``. This file only makes the folder a package; Hydra reads the YAML."""
