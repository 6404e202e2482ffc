"""``bgnet train``: the Hydra application around :func:`bgnet.train.loop.train`.

The configs live in the project's ``configs/`` directory (``train.yaml`` and the groups
``model/``, ``optim/``, ``experiment/``); a run writes into Hydra's output directory.
"""
from __future__ import annotations

import sys
from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"


def main(argv: list[str]) -> int:
    import hydra
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import DictConfig

    if not (CONFIG_DIR / "train.yaml").exists():
        print(f"bgnet train: the configs directory is missing ({CONFIG_DIR}); install bgnet from its source tree "
              "(pip install -e .) so that configs/ is present", file=sys.stderr)
        return 2
    outcome: dict = {}

    @hydra.main(config_path=str(CONFIG_DIR), config_name="train", version_base="1.3")
    def run(cfg: DictConfig) -> None:
        from bgnet.train.config import ConfigError
        from bgnet.train.loop import train

        out_dir = HydraConfig.get().runtime.output_dir
        if cfg.get("resume"):
            # Continue in the resumed run's own directory: its checkpoints and logs stay together.
            ck = Path(cfg.resume).resolve()
            out_dir = str(ck.parent.parent if ck.parent.name == "checkpoints" else ck.parent)
        try:
            if cfg.get("distributed", "none") == "ray":
                from bgnet.train.distributed import train_distributed

                outcome["summary"] = train_distributed(cfg, out_dir)
            else:
                outcome["summary"] = train(cfg, out_dir)
        except (ConfigError, ValueError) as e:
            print(f"bgnet train: {e}", file=sys.stderr)
            outcome["error"] = True

    saved = sys.argv
    sys.argv = ["bgnet train", *argv]
    try:
        run()
    finally:
        sys.argv = saved
    return 1 if outcome.get("error") else 0
