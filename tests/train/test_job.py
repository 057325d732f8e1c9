"""Job files: validation messages name the key path; overrides; run directories."""

from __future__ import annotations

import copy
import csv
import textwrap

import numpy as np
import pytest

from lamina import DataError
from lamina.jobs import train
from lamina.schema import ConfigError
from lamina.train.job import build_data, run_directory
from lamina.train.jobfile import load_config, validate

GOOD = """
data: {name: digits, batch_size: 16}
model:
  type: Sequential
  layers:
    - {type: Linear, in_features: 64, out_features: 10}
optimizer: {type: SGD, lr: 0.1}
trainer: {epochs: 2}
"""
NO_VAL = GOOD.replace("batch_size: 16", "batch_size: 16, val_fraction: 0")


def _write(tmp_path, text, name="job.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_good_job_resolves_with_defaults(tmp_path) -> None:
    cfg = load_config(_write(tmp_path, GOOD), ["trainer.epochs=3", "optimizer.momentum=0.9"])
    assert cfg.name == "job"
    assert cfg.trainer.epochs == 3 and cfg.trainer.seed == 0
    assert cfg.optimizer.to_dict() == {"type": "SGD", "lr": 0.1, "momentum": 0.9}
    assert cfg.algorithm.to_dict() == {"type": "bp"} and cfg.loss.to_dict() == "cross_entropy"
    assert cfg.data.shuffle is True and cfg.data.eval_batch_size == 500
    resolved = cfg.to_dict()  # what a run writes to config.yaml: it reads back the same
    assert validate(copy.deepcopy(resolved)).to_dict() == resolved
    assert resolved["data"] == {"name": "digits", "batch_size": 16, "eval_batch_size": 500,
                                "shuffle": True, "drop_last": False, "val_fraction": 0.1}


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
     r"optimizer\.betas: unknown argument of SGD; allowed: \['dampening', 'differentiable', "
     r"'foreach', 'fused', 'lr', 'maximize', 'momentum'"),
    (GOOD.replace("type: SGD", "type: Adamm"),
     r"optimizer\.type: unknown optimizer 'Adamm' \(did you mean 'Adam'\?\)"),
    (GOOD.replace("epochs: 2", "epochs: 0"), r"trainer\.epochs: must be >= 1, got 0"),
    (GOOD.replace("epochs: 2", "epoch: 2"), r"trainer\.epoch: unknown argument of TrainerConfig"),
    (GOOD + "algorithm: {type: cd, k: one}\n", r"algorithm\.k: expected int, got str 'one'"),
    (GOOD + "scheduler: {type: StepLR}\n", r"scheduler\.step_size: missing, required by StepLR"),
    (GOOD + "loss: hinge\n", r"^loss\.type: unknown loss 'hinge'; one of \['binary_cross_entropy"),
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
    # Execution plans: bp and bptt only, and bptt's carried state on one thread.
    (GOOD.replace("epochs: 2", "epochs: 2, compile: true") + "algorithm: {type: cd}\n",
     r"^trainer\.compile: execution plans are available for the bp and bptt algorithms; got "
     r"algorithm 'cd'$"),
    (GOOD.replace("epochs: 2", "epochs: 2, compile: {threads: 2}") + "algorithm: bptt\n",
     r"^trainer\.compile\.threads: bptt carries each recurrent layer's state"),
    (GOOD + "scheduler: {type: SequentialLR, milestones: [3], schedulers: [{type: LinearWarmup, "
     "warmup_steps: 3}, {type: CosineAnnealingLR, tmax: 5}]}\n",
     r"^scheduler\.schedulers\[1\]\.tmax: unknown argument of CosineAnnealingLR"),
    (GOOD + "scheduler: {type: SequentialLR, milestones: [3], schedulers: [{type: LinearWarmup, "
     "warmup_steps: 3}, {type: ReduceLROnPlateau}]}\n",
     r"^scheduler\.schedulers\[1\]\.type: unknown schedule in a SequentialLR "
     r"'ReduceLROnPlateau'; one of \['ConstantLR', 'CosineAnnealingLR'"),
    (GOOD + "scheduler: {type: SequentialLR, milestones: [3, 4], schedulers: [{type: StepLR, "
     "step_size: 1}, {type: StepLR, step_size: 2}]}\n",
     r"^scheduler: SequentialLR: needs two or more schedules and one milestone fewer"),
    (GOOD.replace("epochs: 2", "epochs: 2, early_stopping: {mode: up}"),
     r"^trainer\.early_stopping: EarlyStopping: mode must be 'min' or 'max'; got 'up'$"),
    (GOOD.replace("batch_size: 16", "batch_size: 0"), r"^data\.batch_size: must be >= 1, got 0$"),
    (GOOD.replace("epochs: 2", "epochs: 2, clip_grad_norm: -1.0"),
     r"^trainer\.clip_grad_norm: must be > 0, got -1\.0$"),
    (GOOD.replace("in_features: 64", "in_features: 0"),
     r"^model\.layers\[0\]: Linear: features must be >= 1; got \(0, 10\)$"),  # named once
    (GOOD.replace("batch_size: 16", "batch_size: 16, val_fraction: 1.0"),
     r"^data\.val_fraction: must be in \[0, 1\), got 1\.0$"),
    # With no validation data, a val_* metric the user asked to watch is an error.
    (NO_VAL.replace("epochs: 2", "epochs: 2, keep_best: val_accuracy"),
     r"^trainer\.keep_best: 'val_accuracy' is measured on validation data, and "
     r"data\.val_fraction is 0; hold some out \(val_fraction: 0\.1\) or watch a training "
     r"metric \('accuracy'\)$"),
    (NO_VAL.replace("epochs: 2", "epochs: 2, early_stopping: {patience: 3}"),
     r"^trainer\.early_stopping\.monitor: 'val_loss' is measured on validation data"),
    (NO_VAL + "scheduler: {type: ReduceLROnPlateau, monitor: val_loss}\n",
     r"^scheduler\.monitor: 'val_loss' is measured on validation data"),
    # Parameter groups: checked against the model's parameter names and the optimizer.
    (GOOD.replace("lr: 0.1", "lr: 0.1, groups: {params: x}"), r"^optimizer\.groups: expected a list"),
    (GOOD.replace("lr: 0.1", "lr: 0.1, groups: [{weight_decay: 0}]"),
     r"^optimizer\.groups\[0\]\.params: expected a list of name patterns"),
    (GOOD.replace("lr: 0.1", "lr: 0.1, groups: [{params: ['*.bias'], betas: [0.9, 0.9]}]"),
     r"^optimizer\.groups\[0\]\.betas: not a hyper-parameter of SGD; allowed: \['dampening'"),
    (GOOD.replace("lr: 0.1", "lr: 0.1, groups: [{params: ['*.beta']}]"),
     r"^optimizer\.groups\[0\]\.params: '\*\.beta' matches no parameter; the names are "
     r"like \['0\.weight', '0\.bias'\]$"),
    (GOOD.replace("lr: 0.1", "lr: 0.1, groups: [{params: ['*.bias'], weight_decay: -1}]"),
     r"^optimizer\.groups: invalid weight_decay: must be >= 0; got -1$"),
    (GOOD.replace("lr: 0.1", "lr: 0.1, groups: [{params: ['*.bias'], lr: 0.5}]")
     + "distributed: {workers: 2}\n", r"^distributed: optimizer\.groups cannot set lr"),
    # A watched metric the run never reports is caught before training, with a guess.
    (GOOD.replace("epochs: 2", "epochs: 2, keep_best: val_acuracy"),
     r"^trainer\.keep_best: the run reports no metric 'val_acuracy' \(did you mean "
     r"'val_accuracy'\?\); it reports \['loss', 'accuracy', 'val_loss', 'val_accuracy'\]$"),
    (GOOD.replace("epochs: 2", "epochs: 2, early_stopping: {monitor: val_los}"),
     r"^trainer\.early_stopping\.monitor: .*'val_los' \(did you mean 'val_loss'\?\)"),
    (GOOD + "scheduler: {type: ReduceLROnPlateau, monitor: los}\n",
     r"^scheduler\.monitor: the run reports no metric 'los'.* 'val_accuracy', 'lr'\]$"),
    # A loss with arguments: checked against the function's keywords.
    (GOOD + "loss: {type: cross_entropy, label_smothing: 0.1}\n",
     r"^loss\.label_smothing: unknown argument of cross_entropy; allowed: \['ignore_index', "
     r"'label_smoothing', 'reduction', 'weight'\]$"),
    (GOOD + "loss: {type: cross_entropi}\n",
     r"^loss\.type: unknown loss 'cross_entropi' \(did you mean 'cross_entropy'\?\)"),
    # ... and against what any batch needs, before the first one is read.
    (GOOD + "loss: {type: cross_entropy, reduction: none}\n",
     r"^loss\.reduction: training needs one number per batch, so 'mean' or 'sum'; got 'none'$"),
    (GOOD + "loss: {type: mse_loss, reduction: none}\n", r"^loss\.reduction: training needs"),
    (GOOD + "loss: {type: cross_entropy, label_smoothing: 2}\n",
     r"^loss\.label_smoothing: must be a number in \[0, 1\]; got 2$"),
    (GOOD + "loss: {type: cross_entropy, weight: [1, -2, 1]}\n",
     r"^loss\.weight: must be a list of finite numbers >= 0, one per class; got \[1, -2, 1\]$"),
    (GOOD + "loss: {type: nll_loss, weight: [[1, 2]]}\n", r"^loss\.weight: must be a list of"),
    (GOOD + "loss: {type: nll_loss, weight: [1, .nan]}\n", r"^loss\.weight: must be a list of"),
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
    assert cfg.model["layers"][0]["out_features"] == 5 and cfg.name == "other"


def test_exponent_floats_are_numbers_in_files_and_overrides(tmp_path) -> None:
    # PyYAML alone (YAML 1.1) reads 1e-3 as the string '1e-3'.
    path = _write(tmp_path, GOOD.replace("lr: 0.1", "lr: 1e-3, weight_decay: 5E-4"))
    cfg = load_config(path, ["optimizer.momentum=9e-1"])
    assert cfg.optimizer.to_dict() == {"type": "SGD", "lr": 1e-3, "weight_decay": 5e-4,
                                       "momentum": 0.9}
    cfg = load_config(path, ["model.layers.0.out_features=12", "trainer.epochs=3"])
    assert cfg.model["layers"][0]["out_features"] == 12  # integers stay integers
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


def test_validation_data_is_held_out_of_the_training_split_not_taken_from_the_test_split(
        tmp_path) -> None:
    data = build_data(load_config(_write(tmp_path, GOOD)))
    train, val = data.train.dataset, data.val.dataset
    assert train.dataset is val.dataset is not data.test.dataset
    whole = len(train.dataset)  # digits: 1,437 train and 360 test samples
    assert (whole, len(data.test.dataset)) == (1437, 360)
    assert len(val) == round(0.1 * whole) and len(train) + len(val) == whole
    assert not set(train.indices) & set(val.indices)
    again = build_data(load_config(_write(tmp_path, GOOD)))  # a resumed run, a worker
    assert np.array_equal(again.val.dataset.indices, val.indices)
    reseeded = build_data(load_config(_write(tmp_path, GOOD), ["trainer.seed=1"]))
    assert not np.array_equal(reseeded.val.dataset.indices, val.indices)
    everything = build_data(load_config(_write(tmp_path, NO_VAL)))
    assert everything.val is None and len(everything.train.dataset) == whole


def test_a_job_reports_validation_metrics_on_the_held_out_set_and_tests_once(tmp_path) -> None:
    cfg = load_config(_write(tmp_path, GOOD), [f"trainer.out_dir={tmp_path / 'runs'}",
                                               "trainer.progress=false"])
    run, test = train(cfg)
    with open(run.directory / "metrics.csv") as f:
        last = list(csv.DictReader(f))[-1]
    val = run.trainer.evaluate(run.data.val)
    assert float(last["val_loss"]) == pytest.approx(val["loss"], rel=1e-6)
    assert abs(test["loss"] - val["loss"]) > 1e-3  # another set of samples
    assert (run.directory / "checkpoints" / "best.safetensors").exists()


def test_no_validation_data_drops_the_defaults_that_need_it(tmp_path) -> None:
    cfg = load_config(_write(tmp_path, NO_VAL + "scheduler: {type: ReduceLROnPlateau}\n"))
    assert cfg.trainer.keep_best is None and cfg.scheduler.monitor == "loss"
    rbm = ("data: {name: digits, binarize: true, val_fraction: 0}\n"
           "model: {type: RBM, n_visible: 64, n_hidden: 8}\noptimizer: {type: SGD, lr: 0.1}\n"
           "algorithm: {type: cd}\ntrainer: {epochs: 1}\n")
    cfg = load_config(_write(tmp_path, rbm))
    assert cfg.trainer.keep_best is None  # CD's default watches val_recon_error
    cfg = load_config(_write(tmp_path, NO_VAL.replace("epochs: 2", "epochs: 2, keep_best: loss")))
    assert cfg.trainer.keep_best == "loss"


def test_ordered_data_holds_out_the_end_of_the_training_text(tmp_path) -> None:
    (tmp_path / "corpus.txt").write_text("abcdefgh" * 50)
    job = GOOD.replace("name: digits, batch_size: 16",
                       f"name: text, path: {tmp_path / 'corpus.txt'}, seq_len: 4, "
                       "batch_size: 16, test_fraction: 0.2")
    data = build_data(load_config(_write(tmp_path, job)))
    n = len(data.train.dataset.dataset)  # 99 sequences; the first 79 are for training
    assert n == 79 and data.val.dataset.indices.tolist() == list(range(71, 79))
    assert data.train.dataset.indices.tolist() == list(range(71))
    tiny = job.replace("seq_len: 4", "seq_len: 100").replace("test_fraction: 0.2",
                                                             "test_fraction: 0.5")
    with pytest.raises(DataError, match=r"has 1 sample\(s\), too few to hold some out; set "
                       r"data\.val_fraction: 0"):
        build_data(load_config(_write(tmp_path, tiny)))


@pytest.mark.parametrize("n, fraction", [(10, 0.35), (10, 0.25), (7, 0.5), (3, 0.01)])
def test_ordered_and_random_hold_outs_take_the_same_number_of_samples(n, fraction) -> None:
    from lamina.data import ArrayDataset
    from lamina.train.job import _hold_out

    data = ArrayDataset(np.zeros((n, 2), np.float32), np.zeros(n, np.int64))
    sizes = [[len(part) for part in _hold_out(data, fraction, 0, ordered)]
             for ordered in (False, True)]
    assert sizes[0] == sizes[1] and min(sizes[0]) >= 1 and sum(sizes[0]) == n


def test_resuming_with_a_changed_job_keeps_the_earlier_config_and_names_the_changes(
        tmp_path, capsys) -> None:
    path = _write(tmp_path, GOOD)
    where = [f"trainer.out_dir={tmp_path / 'runs'}", "trainer.progress=false"]
    run, _ = train(load_config(path, [*where, "trainer.epochs=1"]))
    train(load_config(path, [*where, "trainer.epochs=2", "optimizer.lr=0.05"]), resume=True)
    err = capsys.readouterr().err
    assert ("config.1.yaml keeps the earlier one): optimizer.lr: 0.1 -> 0.05; "
            "trainer.epochs: 1 -> 2") in err
    kept = load_config(run.directory / "config.1.yaml")
    assert kept.trainer.epochs == 1 and kept.optimizer.args["lr"] == 0.1
    assert load_config(run.directory / "config.yaml").trainer.epochs == 2
    with pytest.warns(RuntimeWarning, match="2 epochs are already done"):
        train(load_config(path, [*where, "trainer.epochs=2", "optimizer.lr=0.05"]),
              resume=True)
    assert "changed job" not in capsys.readouterr().err  # the same job: nothing to keep
    assert not (run.directory / "config.2.yaml").exists()


def test_watched_metrics_are_checked_against_what_the_algorithm_reports(tmp_path) -> None:
    rbm = ("data: {name: digits, binarize: true}\n"
           "model: {type: RBM, n_visible: 64, n_hidden: 8}\noptimizer: {type: SGD, lr: 0.1}\n"
           "algorithm: {type: cd}\ntrainer: {epochs: 1, early_stopping: {monitor: %s}}\n")
    cfg = load_config(_write(tmp_path, rbm % "val_pseudo_ll"))
    assert cfg.trainer.keep_best == "val_recon_error"
    with pytest.raises(ConfigError, match=r"reports no metric 'val_loss'.*; it reports \['loss', "
                       r"'recon_error', 'pseudo_ll', 'val_recon_error', 'val_pseudo_ll'\]"):
        load_config(_write(tmp_path, rbm % "val_loss"))  # CD tests no loss

    from lamina.train import BP, register_algorithm

    @register_algorithm("test_reports_own")
    class Own(BP):  # reports what it likes: its names are known only when it runs
        pass

    try:
        cfg = load_config(_write(tmp_path, GOOD + "algorithm: test_reports_own\n"),
                          ["trainer.keep_best=val_anything"])
        assert cfg.trainer.keep_best == "val_anything"
    finally:
        from lamina.train.algorithm import _ALGORITHMS
        _ALGORITHMS.pop("test_reports_own")


def test_parameter_groups_train_and_resume_exactly(tmp_path) -> None:
    groups = GOOD.replace("lr: 0.1}", "lr: 0.1, momentum: 0.9, weight_decay: 0.01, "
                          "groups: [{params: ['*.bias'], weight_decay: 0.0, lr: 0.02}]}")
    where = [f"trainer.out_dir={tmp_path / 'runs'}", "trainer.progress=false"]
    full, _ = train(load_config(_write(tmp_path, groups), [*where, "name=full"]))
    assert [g["lr"] for g in full.optimizer.param_groups] == [0.1, 0.02]
    train(load_config(_write(tmp_path, groups), [*where, "name=cut", "trainer.epochs=1"]))
    resumed, _ = train(load_config(_write(tmp_path, groups), [*where, "name=cut"]),
                       resume=True)
    for (n, p), (_, q) in zip(full.model.named_parameters(), resumed.model.named_parameters()):
        np.testing.assert_array_equal(p.array, q.array, err_msg=n)


def test_a_crash_in_training_names_the_checkpoint_to_resume_from(tmp_path) -> None:
    from lamina.train import BP, register_algorithm
    from lamina.train.algorithm import _ALGORITHMS

    @register_algorithm("test_crashes")
    class Crashes(BP):  # a user's algorithm with a bug that shows in the second epoch
        batches = 0

        def train_one_batch(self, model, batch, updater):
            Crashes.batches += 1
            if Crashes.batches > 95:  # 1,293 training samples: 81 batches of 16 an epoch
                raise RuntimeError("bug in a user algorithm")
            return super().train_one_batch(model, batch, updater)

    try:
        cfg = load_config(_write(tmp_path, GOOD + "algorithm: test_crashes\n"),
                          [f"trainer.out_dir={tmp_path / 'runs'}", "trainer.progress=false"])
        with pytest.raises(RuntimeError, match="bug in a user algorithm") as caught:
            train(cfg)
    finally:
        _ALGORITHMS.pop("test_crashes")
    last = tmp_path / "runs" / "job" / "checkpoints" / "last.safetensors"
    assert caught.value.__notes__ == [f"the last checkpoint written is {last}; continue "
                                      "with --resume"]


def test_a_loss_built_in_python_refuses_the_same_arguments_as_a_job() -> None:
    from lamina.train import BP
    from lamina.train.losses import get_loss

    with pytest.raises(ValueError, match=r"^label_smoothing: must be a number in \[0, 1\]"):
        BP().bind({"type": "cross_entropy", "label_smoothing": -0.1}, [])
    with pytest.raises(ValueError, match=r"^reduction: training needs one number per batch"):
        get_loss({"type": "nll_loss", "reduction": "none"})
    assert get_loss({"type": "cross_entropy", "reduction": "sum", "weight": [0, 1]})


def test_a_loss_with_arguments_trains_with_them(tmp_path) -> None:
    import lamina as lm
    import lamina.functions as F
    from lamina.train.losses import get_loss

    text = GOOD + "loss: {type: cross_entropy, label_smoothing: 0.2, weight: [1, 2, 1, 1, 1, 1, 1, 1, 1, 3]}\n"
    config = load_config(_write(tmp_path, text))
    assert config.loss.to_dict() == {"type": "cross_entropy", "label_smoothing": 0.2,
                                     "weight": [1, 2, 1, 1, 1, 1, 1, 1, 1, 3]}
    assert load_config(_write(tmp_path, GOOD + "loss: {type: mse_loss}\n")).loss.to_dict() == (
        "mse_loss")
    x = lm.tensor(np.random.default_rng(0).standard_normal((6, 10)))
    y = np.array([0, 1, 9, 1, 4, 5])
    want = F.cross_entropy(x, y, weight=np.array([1, 2, 1, 1, 1, 1, 1, 1, 1, 3.0]),
                           label_smoothing=0.2)
    assert get_loss(config.loss.to_dict())(x, y).item() == pytest.approx(want.item(), rel=1e-12)
    assert want.item() != pytest.approx(F.cross_entropy(x, y).item(), rel=1e-3)
    config.trainer.out_dir = str(tmp_path / "runs")
    _, results = train(config)
    assert np.isfinite(results["loss"])
