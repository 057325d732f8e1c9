"""Job files: validation messages name the key path; overrides; run directories."""

from __future__ import annotations

import textwrap

import pytest

from lamina.schema import ConfigError
from lamina.train.job import load_config, run_directory

GOOD = """
data: {name: digits, batch_size: 16}
model:
  type: Sequential
  layers:
    - {type: Linear, in_features: 64, out_features: 10}
optimizer: {type: SGD, lr: 0.1}
trainer: {epochs: 2}
"""


def _write(tmp_path, text, name="job.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_good_job_resolves_with_defaults(tmp_path) -> None:
    cfg = load_config(_write(tmp_path, GOOD), ["trainer.epochs=3", "optimizer.momentum=0.9"])
    assert cfg["name"] == "job"
    assert cfg["trainer"]["epochs"] == 3 and cfg["trainer"]["seed"] == 0
    assert cfg["optimizer"] == {"type": "SGD", "lr": 0.1, "momentum": 0.9}
    assert cfg["algorithm"] == {"type": "bp"} and cfg["loss"] == "cross_entropy"
    assert cfg["data"]["shuffle"] is True and cfg["data"]["eval_batch_size"] == 500


MALFORMED = [
    ("data: [unclosed\n", r"not valid YAML"),
    ("- just\n- a list\n", r"a job must be a mapping"),
    (GOOD + "trainr: {epochs: 1}\n", r"^trainr: unknown key \(did you mean 'trainer'\?\)"),
    (GOOD.replace("name: digits", "name: digitz"),
     r"data\.name: unknown data 'digitz' \(did you mean 'digits'\?\)"),
    (GOOD.replace("batch_size: 16", "batch_size: many"),
     r"data\.batch_size: expected int, got str 'many'"),
    (GOOD.replace("batch_size: 16", "batch_size: 16, binarise: true"),
     r"data\.binarise: unknown argument of digits; allowed: \['binarize', 'shape', 'test_fraction'\]"),
    (GOOD.replace("in_features: 64", "in_features: 64, units: 3"),
     r"model\.layers\[0\]\.units: unknown argument of Linear"),
    (GOOD.replace("type: SGD, lr: 0.1", "type: SGD, lr: 0.1, betas: [0.9, 0.99]"),
     r"optimizer\.betas: unknown argument of SGD; allowed: \['dampening', 'lr', 'momentum'"),
    (GOOD.replace("type: SGD", "type: Adamm"),
     r"optimizer\.type: unknown optimizer 'Adamm' \(did you mean 'Adam'\?\)"),
    (GOOD.replace("epochs: 2", "epochs: 0"), r"trainer\.epochs: must be >= 1, got 0"),
    (GOOD.replace("epochs: 2", "epoch: 2"), r"trainer\.epoch: unknown argument of TrainerConfig"),
    (GOOD + "algorithm: {type: cd, k: one}\n", r"algorithm\.k: expected int, got str 'one'"),
    (GOOD + "scheduler: {type: StepLR}\n", r"scheduler\.step_size: missing, required by StepLR"),
    (GOOD + "loss: hinge\n", r"loss: unknown loss 'hinge'; one of \['binary_cross_entropy"),
    (GOOD.replace("optimizer: {type: SGD, lr: 0.1}\n", ""), r"^optimizer: missing section"),
    (GOOD + "distributed: {workers: 0}\n", r"distributed\.workers: must be >= 1, got 0"),
    (GOOD + "distributed: {mode: sync}\n",
     r"distributed\.mode: expected one of 'bsp', 'ssp', 'asp', got str 'sync'"),
    (GOOD.replace("epochs: 2", "epochs: 2, compile: {threads: two}"),
     r"trainer\.compile\.threads: expected int, got str 'two'"),
    (GOOD.replace("epochs: 2", "epochs: 2, compile: {thread: 2}"),
     r"trainer\.compile\.thread: unknown argument of compile; allowed: \['threads', 'tune', "
     r"'verify'\]"),
    # Values of the right type that a constructor refuses are config errors too, in its words.
    (GOOD.replace("lr: 0.1", "lr: -1"), r"^optimizer: invalid lr: must be >= 0; got -1$"),
    (GOOD + "scheduler: {type: CosineAnnealingLR, T_max: 0}\n",
     r"^scheduler: CosineAnnealingLR: T_max must be >= 1; got 0$"),
    (GOOD + "algorithm: {type: cd, k: 0}\n", r"^algorithm: cd: k must be >= 1; got 0$"),
    (GOOD.replace("epochs: 2", "epochs: 2, early_stopping: {mode: up}"),
     r"^trainer\.early_stopping: EarlyStopping: mode must be 'min' or 'max'; got 'up'$"),
    (GOOD.replace("batch_size: 16", "batch_size: 0"), r"^data\.batch_size: must be >= 1, got 0$"),
    (GOOD.replace("epochs: 2", "epochs: 2, clip_grad_norm: -1.0"),
     r"^trainer\.clip_grad_norm: must be > 0, got -1\.0$"),
    (GOOD.replace("in_features: 64", "in_features: 0"),
     r"^model\.layers\[0\]: Linear: features must be >= 1; got \(0, 10\)$"),  # named once
]


@pytest.mark.parametrize("text, message", MALFORMED)
def test_malformed_jobs_name_the_key_path(tmp_path, text, message) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(_write(tmp_path, text))


def test_bad_overrides(tmp_path) -> None:
    path = _write(tmp_path, GOOD)
    with pytest.raises(ConfigError, match=r"--set 'trainer\.epochs': expected key\.path=value"):
        load_config(path, ["trainer.epochs"])
    with pytest.raises(ConfigError, match=r"trainer\.epochs: expected int, got str 'x'"):
        load_config(path, ["trainer.epochs=x"])
    cfg = load_config(path, ["model.layers.0.out_features=5", "name=other"])
    assert cfg["model"]["layers"][0]["out_features"] == 5 and cfg["name"] == "other"


def test_exponent_floats_are_numbers_in_files_and_overrides(tmp_path) -> None:
    # PyYAML alone (YAML 1.1) reads 1e-3 as the string '1e-3'.
    path = _write(tmp_path, GOOD.replace("lr: 0.1", "lr: 1e-3, weight_decay: 5E-4"))
    cfg = load_config(path, ["optimizer.momentum=9e-1"])
    assert cfg["optimizer"] == {"type": "SGD", "lr": 1e-3, "weight_decay": 5e-4, "momentum": 0.9}
    cfg = load_config(path, ["model.layers.0.out_features=12", "trainer.epochs=3"])
    assert cfg["model"]["layers"][0]["out_features"] == 12  # integers stay integers
    with pytest.raises(ConfigError, match=r"optimizer\.lr: expected float, got str '1e-3'"):
        load_config(_write(tmp_path, GOOD.replace("lr: 0.1", "lr: '1e-3'")))  # quoted: a string


def test_missing_job_file(tmp_path) -> None:
    with pytest.raises(ConfigError, match="no such job file"):
        load_config(tmp_path / "nope.yaml")


def test_a_fresh_run_never_overwrites_another(tmp_path) -> None:
    cfg = load_config(_write(tmp_path, GOOD), [f"trainer.out_dir={tmp_path / 'runs'}"])
    first = run_directory(cfg, resume=False)
    assert first == tmp_path / "runs" / "job"
    (first / "checkpoints").mkdir(parents=True)
    assert run_directory(cfg, resume=False) == tmp_path / "runs" / "job-2"
    with pytest.raises(FileNotFoundError, match="start the run without --resume"):
        run_directory(cfg, resume=True)
