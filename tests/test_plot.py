"""``bgnet plot``: a run's learning curve, from the TensorBoard log the trainer writes, as a PNG;
a folder without a log or without evaluations is refused with exit code 3."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bgnet.cli import main
from bgnet.train.curves import read_curves

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def write_log(run_dir, evaluations: dict, band: bool = False, other: bool = True):
    """A TensorBoard log as the trainer writes it: ``{games: {opponent: (ppg, win_rate)}}``,
    with the ppg interval's half width when ``band``."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(run_dir / "tb"))
    try:
        if other:
            writer.add_scalar("train/loss", 0.1, 10)
        for games, results in evaluations.items():
            for opp, (ppg, win_rate) in results.items():
                writer.add_scalar(f"eval/ppg_vs_{opp}", ppg, games)
                writer.add_scalar(f"eval/win_rate_vs_{opp}", win_rate, games)
                if band:
                    writer.add_scalar(f"eval/ppg_ci95_vs_{opp}", 0.1, games)
    finally:
        writer.close()


EVALUATIONS = {1000: {"pubeval": (-0.4, 0.35), "random": (0.9, 0.7)},
               2000: {"pubeval": (-0.1, 0.45), "random": (1.2, 0.8)},
               3000: {"pubeval": (0.2, 0.55), "random": (1.3, 0.85)}}


def image_colours(path) -> int:
    import matplotlib.image

    pixels = matplotlib.image.imread(str(path))
    return len(np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0))


def test_curves_are_read_by_opponent_in_order_of_games(tmp_path):
    write_log(tmp_path, {3000: {"pubeval": (0.2, 0.55)}, 1000: {"pubeval": (-0.4, 0.35)}}, band=True)
    curves = read_curves(tmp_path)
    assert list(curves) == ["pubeval"]
    assert [g for g, _ in curves["pubeval"]["value"]] == [1000, 3000]
    assert curves["pubeval"]["value"][0][1] == pytest.approx(-0.4)
    assert [v for _, v in curves["pubeval"]["ci95"]] == pytest.approx([0.1, 0.1])
    assert read_curves(tmp_path, "win_rate")["pubeval"]["value"][1][1] == pytest.approx(0.55)


@pytest.mark.parametrize("metric,band", [("ppg", True), ("win_rate", False)])
def test_the_verb_draws_a_real_image(tmp_path, capsys, metric, band):
    write_log(tmp_path, EVALUATIONS, band=band)
    out = tmp_path / "curve.png"
    assert main(["plot", str(tmp_path), "--out", str(out), "--metric", metric]) == 0
    text = capsys.readouterr().out
    assert "vs pubeval: 1000:" in text and f"wrote {out}" in text
    data = out.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000
    assert image_colours(out) > 10  # curves, band, axes and text, not a blank canvas


def test_the_default_output_is_next_to_the_run(tmp_path, capsys):
    write_log(tmp_path, EVALUATIONS)
    assert main(["plot", str(tmp_path)]) == 0
    assert (tmp_path / "learning_curve.png").read_bytes().startswith(PNG_SIGNATURE)


def test_a_folder_without_a_log_or_without_evaluations_exits_3(tmp_path, capsys):
    for args in ([str(tmp_path)], [str(tmp_path / "missing")]):
        assert main(["plot", *args]) == 3
        err = capsys.readouterr().err.strip()
        assert err.startswith("bgnet plot: error: ") and len(err.splitlines()) == 1
        assert args[0] in err
    write_log(tmp_path, {}, other=True)
    assert main(["plot", str(tmp_path)]) == 3
    err = capsys.readouterr().err.strip()
    assert "no evaluations" in err and str(tmp_path) in err and len(err.splitlines()) == 1
    assert not (tmp_path / "learning_curve.png").exists()


def test_bad_arguments_exit_2(tmp_path, capsys):
    write_log(tmp_path, EVALUATIONS)
    assert main(["plot", str(tmp_path), "--metric", "elo"]) == 2
    assert "invalid choice" in capsys.readouterr().err
    assert main(["plot", str(tmp_path), "--out", str(tmp_path / "no" / "c.png")]) == 2
    assert "there is no folder" in capsys.readouterr().err


def quick_recipe_config(run_dir) -> None:
    """``RUN/config.yaml`` as the quick recipe's run writes it."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from bgnet.train.config import load_config

    configs = Path(__file__).resolve().parents[1] / "configs"  # this checkout's recipes
    with initialize_config_dir(config_dir=str(configs), version_base="1.3"):
        run = load_config(compose(config_name="train", overrides=["+recipe=quick"]))
    (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(run.to_dict())))


def test_before_the_first_evaluation_the_refusal_says_when_it_comes(tmp_path, capsys):
    """A quick recipe's run 5,000 games in, at 150 games/s: its first figure comes at 10,000
    games (eval.first), about half a minute later."""
    from torch.utils.tensorboard import SummaryWriter

    quick_recipe_config(tmp_path)
    writer = SummaryWriter(str(tmp_path / "tb"))
    writer.add_scalar("train/games_per_second", 150.0, 5000)
    writer.close()
    assert main(["plot", str(tmp_path)]) == 3
    err = capsys.readouterr().err.strip()
    assert err == (f"bgnet plot: error: {tmp_path} has no evaluations yet: the first comes at "
                   "10,000 games (eval.first); the run was at 5,000 games, 150 games/s: about "
                   "0:00:33 from then")


def test_a_run_that_evaluates_nothing_says_so(tmp_path, capsys):
    quick_recipe_config(tmp_path)
    text = (tmp_path / "config.yaml").read_text()
    for key, value in (("every", "100000"), ("first", "10000"), ("final_games", "20000")):
        text = text.replace(f"  {key}: {value}\n", f"  {key}: 0\n")
    (tmp_path / "config.yaml").write_text(text)
    write_log(tmp_path, {})
    assert main(["plot", str(tmp_path)]) == 3
    assert "this run evaluates nothing (eval.every=0, eval.first=0, eval.final_games=0)" in \
        capsys.readouterr().err
