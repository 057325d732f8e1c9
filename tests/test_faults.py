"""Fault injection, as a table: each case is a hostile or careless input (a job file, a
command line, a damaged checkpoint, a misused API) and the one line it must give, or the
exact result. The CLI cases run `lamina.cli.main` in this process, in a fresh folder."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import lamina as lm
from lamina.cli import main

JOB = """\
data: {name: digits, batch_size: 16}
model:
  type: Sequential
  layers:
    - {type: Linear, in_features: 64, out_features: 10}
optimizer: {type: SGD, lr: 0.1}
trainer: {epochs: 1, progress: false, tensorboard: false, out_dir: runs}
"""


def _laughs(levels: int = 7) -> str:
    lines = ["name:", "  l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n" + JOB


def _npz(**arrays: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _npz_job(**arrays: np.ndarray) -> dict[str, str | bytes]:
    rng = np.random.default_rng(0)
    data = {"x": rng.standard_normal((40, 64)).astype(np.float32), "y": np.zeros(40, int),
            "x_test": rng.standard_normal((8, 64)).astype(np.float32),
            "y_test": np.zeros(8, int), **arrays}
    return {"data.npz": _npz(**data),
            "job.yaml": JOB.replace("{name: digits, batch_size: 16}",
                                    "{name: npz, path: data.npz, batch_size: 16, "
                                    "drop_last: true}")}


@dataclass
class Fault:
    """argv for `lamina` (in a folder holding `files`), the exit code and the stderr line."""

    name: str
    argv: list[str]
    code: int
    message: str  # a regular expression the one line must match
    files: dict[str, str | bytes] = field(default_factory=lambda: {"job.yaml": JOB})
    seconds: float = 30.0  # refused within


FAULTS = [
    Fault("duplicate section", ["train", "job.yaml"], 2,
          r"job\.yaml: line 8: duplicate key 'trainer' \(first at line 7\); give each key once",
          {"job.yaml": JOB + "trainer: {epochs: 3}\n"}),
    Fault("duplicate nested key", ["train", "job.yaml"], 2,
          r"line 6: duplicate key 'lr' \(first at line 6\)",
          {"job.yaml": JOB.replace("lr: 0.1}", "lr: 0.1, lr: 1.0}")}),
    Fault("alias bomb under name", ["train", "job.yaml"], 2,
          r"job\.yaml: the job expands to more than 100000 values", {"job.yaml": _laughs()},
          seconds=2.0),
    Fault("too many aliases", ["train", "job.yaml"], 2, r"more than 100 YAML aliases",
          {"job.yaml": "a: &a 1\nb: [" + ", ".join(["*a"] * 101) + "]\n" + JOB}, seconds=2.0),
    Fault("50,000 levels of nesting", ["train", "job.yaml"], 2,
          r"job\.yaml: line 1: nested more than 64 levels deep",
          {"job.yaml": "a: " + "[" * 50_000 + "]" * 50_000 + "\n"}, seconds=2.0),
    Fault("name climbs out of out_dir", ["train", "job.yaml", "--set", "name=../../x"], 2,
          r"name: '\.\./\.\./x' is not a plain folder name"),
    Fault("absolute name", ["train", "job.yaml", "--set", "name=/tmp/x"], 2,
          r"name: '/tmp/x' is not a plain folder name"),
    Fault("a folder for the job", ["train", "."], 2, r"\.: is a folder; give the job's YAML"),
    Fault("not text", ["train", "job.yaml"], 2, r"job\.yaml: not a text file",
          {"job.yaml": b"\xff\xfe\x00garbage"}),
    Fault("missing job", ["train", "nope.yaml"], 2, r"nope\.yaml: no such job file"),
    Fault("negative seed", ["train", "job.yaml", "--set", "trainer.seed=-1"], 2,
          r"trainer\.seed: must be >= 0, got -1"),
    Fault("--set past a list's end",
          ["train", "job.yaml", "--set", "model.layers.9.out_features=3"], 2,
          r"--set model\.layers\.9\.out_features: model\.layers is a list of 1 items, "
          r"numbered 0 to 0; got '9'"),
    Fault("kernel_size 0", ["train", "job.yaml"], 2,
          r"model\.layers\[0\]: Conv1d: kernel_size and stride must be >= 1",
          {"job.yaml": JOB.replace("{type: Linear, in_features: 64, out_features: 10}",
                                   "{type: Conv1d, in_channels: 1, out_channels: 2, "
                                   "kernel_size: 0}")}),
    Fault("a layer too large for memory", ["train", "job.yaml"], 2,
          r"model\.layers\[0\]: Linear: its weights do not fit in memory \(.*TiB",
          {"job.yaml": JOB.replace("in_features: 64, out_features: 10",
                                   "in_features: 1000000, out_features: 1000000")}),
    Fault("eval with no run", ["eval", "job.yaml"], 1, r"no checkpoint in runs/job/checkpoints"),
    Fault("an output folder that is a file", ["train", "job.yaml", "--set", "trainer.out_dir=f"],
          1, r"lamina: error: f/job: Not a directory; give a path lamina can use "
             r"\(trainer\.out_dir for the runs",
          {"job.yaml": JOB, "f": "a file where the runs folder should be"}),
    Fault("an output folder lamina may not write",  # /sys refuses even root
          ["train", "job.yaml", "--set", "trainer.out_dir=/sys/lamina-runs"], 1,
          r"lamina: error: /sys/lamina-runs(/job)?: Operation not permitted; give a path"),
    Fault("npz of Python objects", ["train", "job.yaml"], 1,
          r"npz dataset: data\.npz: array 'x' holds Python objects, which lamina never reads",
          _npz_job(x=np.array([[1, 2]] * 40, dtype=object))),
    Fault("labels outside the classes", ["train", "job.yaml"], 1,
          r"loss: cross_entropy: labels must lie in \[0, 10\).*got \[12\]; the labels come "
          r"from data: npz \(data\.npz\)", _npz_job(y=np.full(40, 12))),
    Fault("fewer samples than a batch", ["train", "job.yaml"], 1,
          r"data: the training split holds 9 samples after the validation hold-out, fewer "
          r"than one batch of 16", _npz_job(x=np.zeros((10, 64), np.float32),
                                            y=np.zeros(10, int))),
]


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
def test_a_fault_gives_one_line_and_its_exit_code(fault, tmp_path, monkeypatch, capsys) -> None:
    for name, content in fault.files.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    monkeypatch.chdir(tmp_path)
    start = time.monotonic()
    code = main(fault.argv)
    took = time.monotonic() - start
    err = capsys.readouterr().err.strip()
    assert code == fault.code, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("lamina: ")
    assert __import__("re").search(fault.message, err), err
    assert took < fault.seconds


# -- checkpoints ----------------------------------------------------------------------------
def _saved(tmp_path: Path) -> tuple[Path, lm.nn.Linear]:
    model = lm.nn.Linear(4, 3)
    return lm.io.save(tmp_path / "c.safetensors", model, extra={"epoch": 1}), model


def _flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x40
    path.write_bytes(bytes(data))


CHECKPOINT_FAULTS: list[tuple[str, Callable[[Path], None], str]] = [
    ("a flipped byte in tensor data", _flip_last_byte,
     r"tensor '\w+' does not match its checksum: the file is damaged"),
    ("truncated", lambda p: p.write_bytes(p.read_bytes()[:40]),
     r"not a readable safetensors checkpoint"),
    ("a pickle", lambda p: p.write_bytes(b"\x80\x04\x95" + b"\x00" * 64),
     r"lamina never unpickles"),
    ("empty", lambda p: p.write_bytes(b""), r"not a readable safetensors checkpoint"),
    ("bfloat16 tensors", lambda p: p.write_bytes(_bf16_file()),
     r"holds BF16 tensors, which NumPy has no type for; save them as float32"),
]


def _bf16_file() -> bytes:
    """A safetensors file as PyTorch writes a bfloat16 state dict."""
    import json

    header = json.dumps({"weight": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})
    header += " " * (-len(header) % 8)
    return len(header).to_bytes(8, "little") + header.encode() + b"\x80\x3f\x00\x40"


@pytest.mark.parametrize("case", CHECKPOINT_FAULTS, ids=lambda c: c[0])
def test_a_damaged_checkpoint_is_named_and_loads_nothing(case, tmp_path) -> None:
    name, damage, message = case
    path, model = _saved(tmp_path)
    before = {k: v.copy() for k, v in model.state_dict().items()}
    damage(path)
    with pytest.raises(lm.io.CheckpointError, match=message):
        lm.io.load(path, lm.nn.Linear(4, 3))
    with pytest.raises(lm.io.CheckpointError, match=str(path).replace(".", r"\.")):
        lm.io.load(path)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v, before[k])


def test_checkpoints_stay_readable_by_plain_safetensors(tmp_path) -> None:
    from safetensors.numpy import load_file

    path, model = _saved(tmp_path)
    plain = load_file(str(path))
    np.testing.assert_array_equal(plain["weight"], model.weight.array)


@pytest.mark.parametrize("extra,error", [({"epoch": 1}, r"KeyError: 'iteration'"),
                                         ({"epoch": "x"}, r"ValueError: invalid literal"),
                                         ({}, r"KeyError: 'epoch'")])
def test_malformed_trainer_state_is_named_on_resume(tmp_path, extra, error) -> None:
    model = lm.nn.Linear(4, 3)
    opt = lm.optim.SGD(model.parameters(), lr=0.1)
    path = lm.io.save(tmp_path / "c.safetensors", model, opt, extra=extra)
    trainer = lm.train.Trainer(model, opt, "mse_loss", metrics=[])
    with pytest.raises(lm.io.CheckpointError,
                       match=r"c\.safetensors: its trainer state is incomplete or malformed "
                             rf"\({error}"):
        trainer.resume(path)


def test_a_stale_temporary_file_is_removed_by_the_next_write(tmp_path) -> None:
    stale = tmp_path / ".c.safetensors.abc123.tmp"
    fresh = tmp_path / ".c.safetensors.def456.tmp"  # another write, perhaps in progress
    for f in (stale, fresh):
        f.write_bytes(b"half a checkpoint")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    _saved(tmp_path)
    assert not stale.exists() and fresh.exists()


# -- the Python API -------------------------------------------------------------------------
API_FAULTS: list[tuple[str, Callable[[], object], type, str]] = [
    ("object array", lambda: lm.tensor(np.array([1, "a"], dtype=object)), TypeError,
     r"dtype object is not supported"),
    ("strings", lambda: lm.tensor(np.array(["a", "b"])), TypeError, r"dtype <U1 is not"),
    ("complex256", lambda: lm.tensor(np.array([1 + 2j], np.clongdouble)), TypeError,
     r"complex256 is not"),
    ("load_state_dict of a list", lambda: lm.nn.Linear(2, 3).load_state_dict([1, 2, 3]),
     TypeError, r"expected a mapping of names to arrays"),
    ("optimizer state of a list",
     lambda: lm.optim.SGD(lm.nn.Linear(2, 3).parameters(), lr=0.1).load_state_dict([1]),
     TypeError, r"SGD\.load_state_dict: expected what Optimizer\.state_dict\(\) returns"),
    ("a stride of 0", lambda: lm.nn.Conv2d(1, 2, 3, stride=0), ValueError,
     r"Conv2d: kernel_size and stride must be >= 1"),
]


@pytest.mark.parametrize("case", API_FAULTS, ids=lambda c: c[0])
def test_a_misused_api_says_what_it_expects(case) -> None:
    _, call, error, message = case
    with pytest.raises(error, match=message):
        call()


# -- non-finite weights ---------------------------------------------------------------------
def test_non_finite_weights_are_never_the_checkpoint_resumed_or_evaluated(tmp_path, monkeypatch,
                                                                         capsys) -> None:
    """A last checkpoint with NaN weights (a file written by something else: the Checkpoint
    callback refuses to write one): --resume falls back to best and says so; eval reads
    best; with no finite checkpoint left, both say so instead of reporting nan."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.yaml").write_text(JOB.replace("epochs: 1", "epochs: 2"))
    assert main(["train", "job.yaml", "--set", "trainer.epochs=1"]) == 0
    checkpoints = Path("runs/job/checkpoints")  # as the CLI names them
    last, best = checkpoints / "last.safetensors", checkpoints / "best.safetensors"
    arrays, meta = lm.io.read(last)
    model = lm.nn.from_config(meta["config"])
    model.load_state_dict({k: v for k, v in arrays.items() if not k.startswith("__")})
    model[0].weight.array[0, 0] = np.nan
    extra = lm.io.load(last)["extra"]
    lm.io.save(last, model, extra=extra)
    capsys.readouterr()
    assert main(["eval", "job.yaml"]) == 0
    assert f"reading {best}" in capsys.readouterr().err
    assert main(["train", "job.yaml", "--resume"]) == 0  # epoch 2, from best's epoch 1
    err = capsys.readouterr().err
    assert f"{last} holds non-finite weights (0.weight); resuming from {best}" in err
    lm.io.save(best, model, extra=extra)
    lm.io.save(last, model, extra=extra)
    assert main(["eval", "job.yaml"]) == 1
    assert "holds non-finite weights (0.weight), as does every checkpoint" in (
        capsys.readouterr().err)
    assert main(["train", "job.yaml", "--resume"]) == 1
    assert "no finite checkpoint is left to resume from" in capsys.readouterr().err
