"""A job's sections as typed configs: each parses its part of a job, writes it back in the
job file's form, and builds its object."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import lamina as lm
from lamina.schema import ConfigError
from lamina.train.jobfile import load_config, validate
from lamina.train.sections import (
    AlgorithmConfig,
    DataConfig,
    LossConfig,
    OptimizerConfig,
    SchedulerConfig,
)

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_resolved_job_validates_again_to_the_same_job(path) -> None:
    job = load_config(path)
    again = validate(copy.deepcopy(job.to_dict()))
    assert again == job and again.to_dict() == job.to_dict()


def test_data_keeps_the_dataset_s_options_apart_from_the_loader_s() -> None:
    data = DataConfig.parse({"name": "text", "path": "a.txt", "seq_len": 8, "batch_size": 4})
    assert (data.batch_size, data.options) == (4, {"path": "a.txt", "seq_len": 8})
    assert data.to_dict()["seq_len"] == 8 and "options" not in data.to_dict()
    with pytest.raises(ConfigError, match=r"data\.seq_lenn: unknown argument of text"):
        DataConfig.parse({"name": "text", "path": "a.txt", "seq_lenn": 8})


def test_a_schedule_takes_its_own_arguments_and_the_run_takes_the_rest() -> None:
    model = lm.nn.Linear(2, 1)
    optimizer, _ = OptimizerConfig.parse({"type": "SGD", "lr": 0.5}, model.named_parameters())
    opt = optimizer.build(model.parameters())
    schedule = SchedulerConfig.parse({"type": "StepLR", "step_size": 2, "gamma": 0.1,
                                      "interval": "iteration"}, opt)
    assert (schedule.interval, schedule.monitor, schedule.args) == (
        "iteration", "val_loss", {"step_size": 2, "gamma": 0.1})
    built = schedule.build(opt)
    for _ in range(2):
        opt.step()
        built.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.05)
    assert SchedulerConfig.parse(None, opt) is None


def test_optimizer_groups_are_checked_against_the_model_s_names() -> None:
    model = lm.nn.Sequential(lm.nn.Linear(2, 3), lm.nn.Linear(3, 1))
    config, _ = OptimizerConfig.parse(
        {"type": "SGD", "lr": 0.1, "groups": [{"params": ["*.bias"], "lr": 0.0}]},
        model.named_parameters())
    opt = config.build(model.named_parameters())
    rest, biases = opt.param_groups  # the first group holds what no pattern matched
    assert (rest["lr"], biases["lr"]) == (0.1, 0.0)
    assert [p.shape for p in biases["params"]] == [(3,), (1,)]
    with pytest.raises(ConfigError, match=r"optimizer\.groups\[0\]\.betas: not a hyper"):
        OptimizerConfig.parse({"type": "SGD", "lr": 0.1,
                               "groups": [{"params": ["*"], "betas": [0.9, 0.9]}]},
                              model.named_parameters())


def test_loss_and_algorithm_write_back_what_they_read() -> None:
    assert LossConfig.parse("mse_loss").to_dict() == "mse_loss"
    loss = LossConfig.parse({"type": "cross_entropy", "label_smoothing": 0.1})
    assert loss.to_dict() == {"type": "cross_entropy", "label_smoothing": 0.1}
    algorithm = AlgorithmConfig.parse({"type": "bptt", "bptt_steps": 8})
    assert algorithm.to_dict() == {"type": "bptt", "bptt_steps": 8}
    assert algorithm.build().bptt_steps == 8
