"""The `lamina` command on every shipped example, as a real subprocess, with tiny budgets."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("yaml")
pytest.importorskip("mnist1d")
pytest.importorskip("sklearn")
pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TINY = {
    "mnist1d_mlp": ["trainer.epochs=2"],
    "mnist1d_cnn": ["trainer.epochs=1"],
    "mnist1d_resnet": ["trainer.epochs=1"],
    "mnist1d_gru": ["trainer.epochs=1", "model.layers.0.hidden_size=8",
                    "model.layers.1.in_features=8"],
    "digits_rbm": ["trainer.epochs=2"],
    "text_lstm": ["trainer.epochs=1", "data.seq_len=32", "data.path=" + str(
        Path(__file__).resolve())],
    "text_transformer": ["trainer.epochs=1", "data.seq_len=32", "data.path=" + str(
        Path(__file__).resolve())],
}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    return {**os.environ, "LAMINA_CACHE": str(cache), "MPLBACKEND": "Agg"}


def lamina(*args, env, cwd, check=True):
    proc = subprocess.run([sys.executable, "-m", "lamina.cli", *map(str, args)], env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _sets(name, out):
    return [a for s in [*TINY[name], f"trainer.out_dir={out}"] for a in ("--set", s)]


@pytest.mark.parametrize("name", sorted(TINY))
def test_every_example_trains_evaluates_and_resumes(name, env, tmp_path) -> None:
    job = EXAMPLES / f"{name}.yaml"
    out = tmp_path / "runs"
    proc = lamina("train", job, *_sets(name, out), env=env, cwd=tmp_path)
    assert "test " in proc.stdout and "epoch 1/" in proc.stderr
    run = out / name
    assert {p.name for p in run.iterdir()} >= {"config.yaml", "metrics.csv", "curves.png",
                                               "checkpoints"}
    ckpt = run / "checkpoints" / "last.safetensors"
    proc = lamina("eval", job, "--checkpoint", ckpt, *_sets(name, out), env=env, cwd=tmp_path)
    assert proc.stdout.startswith("test ")
    proc = lamina("train", job, "--resume", *_sets(name, out), "--set", "trainer.epochs=3",
                  env=env, cwd=tmp_path)
    assert "epoch 3/3" in proc.stderr and "epoch 1/3" not in proc.stderr


def test_info_lists_layers_shapes_and_parameters(env, tmp_path) -> None:
    proc = lamina("info", EXAMPLES / "mnist1d_cnn.yaml", env=env, cwd=tmp_path)
    assert "Conv1d" in proc.stdout and "('N', 640)" in proc.stdout
    # conv 1*32*5+32, bn 64, conv 32*64*3+64, bn 128, conv 64*64*3+64, bn 128, fc 640*10+10
    assert "total parameters: 25,482" in proc.stdout
    assert "samples: 3,600 train, 400 validation, 1,000 test" in proc.stdout


@pytest.mark.parametrize("name", ["text_lstm", "text_transformer"])
def test_sample_prints_generated_text(name, env, tmp_path) -> None:
    job = EXAMPLES / f"{name}.yaml"
    out = tmp_path / "runs"
    lamina("train", job, *_sets(name, out), env=env, cwd=tmp_path)
    proc = lamina("sample", job, "--checkpoint", out / f"{name}/checkpoints/last.safetensors",
                  "--length", "50", "--prime", "import ", *_sets(name, out), env=env,
                  cwd=tmp_path)
    text = proc.stdout.rstrip("\n")
    assert text.startswith("import ") and len(text) == len("import ") + 50


def test_errors_are_clear_and_exit_non_zero(env, tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("data: {name: mnist1d}\nmodel: {type: Linar}\noptimizer: SGD\n"
                   "trainer: {epochs: 1}\n")
    proc = lamina("train", bad, env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert "config error: model.type: unknown layer type 'Linar'" in proc.stderr
    proc = lamina("train", EXAMPLES / "mnist1d_cnn.yaml", "--workers", "2", "--set",
                  "scheduler.interval=iteration", env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "scheduler.interval must be 'epoch'" in proc.stderr
    proc = lamina("train", EXAMPLES / "mnist1d_cnn.yaml", "--set", "trainer.epochs=1", "--set",
                  "trainer.compile={threads: 2}", env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "BatchNorm#1 computes statistics over the whole batch" in (
        proc.stderr) and "Traceback" not in proc.stderr
    proc = lamina("eval", EXAMPLES / "digits_rbm.yaml", "--checkpoint", tmp_path / "none",
                  env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "no such checkpoint file" in proc.stderr
    # A loss that does not fit the model's output is named by its key in the job.
    proc = lamina("train", EXAMPLES / "text_transformer.yaml", "--set", "loss=cross_entropy",
                  *_sets("text_transformer", tmp_path / "runs"), env=env, cwd=tmp_path,
                  check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("lamina: error: loss: cross_entropy: labels do not fit")
    assert "use loss: sequence_cross_entropy" in proc.stderr


NESTED = """
data: {name: digits, batch_size: 16}
model:
  type: Sequential
  layers:
    - {type: Linear, in_features: 64, out_features: 16}
    - type: Sequential
      layers:
        - {type: ReLU}
        - {type: Linear, in_features: 8, out_features: 10}
optimizer: {type: SGD, lr: 0.1}
trainer: {epochs: 1, progress: false, out_dir: OUT}
"""


def test_bad_data_is_one_line_not_a_traceback(tmp_path, capsys) -> None:
    from lamina.cli import main

    (tmp_path / "d.csv").write_text("a,label\n1,0.5\n")
    job = tmp_path / "csv.yaml"
    job.write_text(f"data: {{name: csv, path: {tmp_path / 'd.csv'}, test_path: "
                   f"{tmp_path / 'd.csv'}}}\nmodel: {{type: Linear, in_features: 1, "
                   "out_features: 2}\noptimizer: SGD\ntrainer: {epochs: 1}\n")
    assert main(["info", str(job)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("lamina: error: csv dataset (") and "labels must be whole" in err


@pytest.mark.parametrize("command", ["train", "info"])
def test_a_layer_size_mismatch_names_its_path_in_the_job(command, tmp_path, capsys) -> None:
    from lamina.cli import main

    job = tmp_path / "nested.yaml"
    job.write_text(NESTED.replace("OUT", str(tmp_path / "runs")))
    assert main([command, str(job)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("lamina: error: model.layers[1].layers[1] (Linear): linear: input "
                          "features do not match the weight") and "Traceback" not in err
    assert err.rstrip().endswith("build the layer with in_features=16")


@pytest.mark.parametrize("sig,code,said", [(signal.SIGINT, 130, "interrupted"),
                                           (signal.SIGTERM, 143, "terminated (SIGTERM)")],
                         ids=["ctrl-c", "sigterm"])
def test_a_stop_signal_ends_after_the_batch_and_names_the_checkpoint(env, tmp_path, sig, code,
                                                                    said) -> None:
    """Ctrl-C, and SIGTERM (what a scheduler, systemd or Kubernetes sends first)."""
    job = tmp_path / "long.yaml"
    job.write_text(NESTED.replace("in_features: 8", "in_features: 16").replace(
        "epochs: 1", "epochs: 100000").replace("OUT", str(tmp_path / "runs")))
    last = tmp_path / "runs" / "long" / "checkpoints" / "last.safetensors"
    with subprocess.Popen([sys.executable, "-m", "lamina.cli", "train", str(job)], env=env,
                          cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True) as proc:
        deadline = time.monotonic() + 120
        while not last.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        written = last.stat().st_mtime_ns
        proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == code, err
    assert err.strip() == (f"lamina: {said}; the last checkpoint written is {last}; "
                           "continue with --resume")
    assert last.stat().st_mtime_ns > written  # written again where it stopped
    import lamina as lm

    extra = lm.io.load(last)["extra"]
    assert extra["epoch"] >= 1 and extra["iteration"] > 0


@pytest.mark.parametrize("name", ["digits_rbm", "text_lstm"])
def test_cd_and_bptt_examples_train_on_two_workers(name, env, tmp_path) -> None:
    pytest.importorskip("ray")
    out = tmp_path / "runs"
    proc = lamina("train", EXAMPLES / f"{name}.yaml", "--workers", "2", *_sets(name, out),
                  env=env, cwd=tmp_path)
    assert "epoch 1/" in proc.stderr and "test " in proc.stdout
    assert (out / name / "checkpoints" / "servers" / "server-0.safetensors").exists()


def test_eval_and_export_read_the_runs_own_checkpoint_when_given_none(tmp_path, capsys
                                                                      ) -> None:
    from lamina.cli import main

    runs = tmp_path / "runs"
    job = tmp_path / "job.yaml"
    job.write_text(NESTED.replace("OUT", str(runs)).replace("in_features: 8", "in_features: 16"))
    assert main(["eval", str(job)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"lamina: error: no checkpoint in {runs / 'job' / 'checkpoints'}: train the job "
        "first, or pass --checkpoint FILE")
    assert main(["train", str(job)]) == 0 and main(["train", str(job)]) == 0  # job, job-2
    capsys.readouterr()
    assert main(["eval", str(job)]) == 0
    out, err = capsys.readouterr()
    best = runs / "job" / "checkpoints" / "best.safetensors"
    assert err.strip() == (f"lamina: reading {best}; to read {runs / 'job-2'}, add --set "
                           "name=job-2")
    assert out.startswith("test loss ") and "(weights after epoch 1)" in out
    assert main(["export", str(job), "--set", "name=job-2"]) == 0
    written = runs / "job-2" / "checkpoints" / "best.onnx"
    assert capsys.readouterr().out.startswith(f"wrote {written} ") and written.stat().st_size


def test_eval_measures_the_split_asked_for(tmp_path, capsys) -> None:
    import csv

    from lamina.cli import main

    job = tmp_path / "job.yaml"
    job.write_text(NESTED.replace("OUT", str(tmp_path / "runs")).replace(
        "in_features: 8", "in_features: 16"))
    assert main(["train", str(job)]) == 0
    with open(tmp_path / "runs" / "job" / "metrics.csv") as f:
        logged = float(list(csv.DictReader(f))[-1]["val_loss"])
    ckpt = str(tmp_path / "runs" / "job" / "checkpoints" / "last.safetensors")
    capsys.readouterr()
    assert main(["eval", str(job), "--checkpoint", ckpt, "--split", "val"]) == 0
    printed = capsys.readouterr().out
    out = printed.split()
    assert out[:2] == ["val", "loss"] and float(out[2]) == pytest.approx(logged, abs=1e-4)
    assert printed.rstrip().endswith("(weights after epoch 1)")
    assert main(["eval", str(job), "--checkpoint", ckpt, "--split", "val",
                 "--set", "data.val_fraction=0"]) == 2
    assert "holds out no validation data" in capsys.readouterr().err


def test_an_override_without_set_is_refused_with_the_set_spelling(tmp_path, capsys) -> None:
    from lamina.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["train", str(EXAMPLES / "mnist1d_mlp.yaml"), "trainer.epochs=2", "--fast"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == ("lamina: error: unrecognized arguments: trainer.epochs=2 --fast; to "
                   "override config values write --set trainer.epochs=2")


def test_bench_help_is_the_benchmark_scripts(env, tmp_path) -> None:
    """`lamina bench` hands every option to benchmarks/run.py, --help included."""
    out = lamina("bench", "--help", env=env, cwd=tmp_path).stdout
    assert out.startswith("usage: lamina bench [-h]"), out
    assert "--workloads" in out and "--no-inference" in out


def test_bench_names_itself_in_its_errors(env, tmp_path) -> None:
    proc = lamina("bench", "--workloads", "vgg", env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert "lamina bench: error: argument --workloads: invalid choice: 'vgg'" in proc.stderr


def test_a_warning_is_one_line_naming_the_fix(env, tmp_path) -> None:
    job = EXAMPLES / "digits_rbm.yaml"
    sets = ["--set", "trainer.epochs=1", "--set", f"trainer.out_dir={tmp_path / 'runs'}"]
    lamina("train", job, *sets, env=env, cwd=tmp_path)
    proc = lamina("train", job, "--resume", *sets, env=env, cwd=tmp_path)
    warning = [line for line in proc.stderr.splitlines() if "warning" in line.lower()]
    assert warning == ["lamina: warning: Trainer.fit: 1 epochs are already done, so epochs=1 "
                       "trains no more; pass epochs=2 for 1 more (in a job, --set "
                       "trainer.epochs=2)"], proc.stderr
