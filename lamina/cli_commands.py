"""The `lamina` command's subcommands, one function each: train, eval, info, sample,
export, bench and env. Each takes the parsed arguments (lamina.cli) and returns the exit
status; errors propagate to lamina.cli.main, which reports them in one line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lamina import runtime
from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import tensor
from lamina.fused import mkl_blas
from lamina.io.checkpoint import load as load_checkpoint
from lamina.io.onnx import export_onnx
from lamina.parallel import get_num_threads
from lamina.version import __version__

if TYPE_CHECKING:
    from lamina.train.jobfile import Job


def _checkpoint(args: argparse.Namespace, job: Job) -> Path:
    """--checkpoint, or the run's own, named on stderr (stdout may be sampled text)."""
    if args.checkpoint is not None:
        return args.checkpoint
    from lamina.train.job import run_checkpoint

    path, note = run_checkpoint(job)
    print(f"lamina: {note}", file=sys.stderr)
    return path



def _job(args: argparse.Namespace) -> Job:
    from lamina.train.jobfile import load_config

    args.job_read = load_config(args.job, args.set)  # kept for error messages
    return args.job_read


def cmd_train(args: argparse.Namespace) -> int:
    from lamina.jobs import train

    if args.workers is not None:
        args.set = [f"distributed.workers={args.workers}", *args.set]
    if args.address is not None:
        args.set = [f"distributed.address={args.address}", *args.set]
    run, results = train(_job(args), resume=args.resume)
    reason = run.trainer.stop_reason
    if reason:
        print(f"stopped: {reason}")
    print("test " + " ".join(f"{k} {v:.4f}" for k, v in results.items())
          + " (the last epoch's weights)")
    print(f"run directory: {run.directory}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from lamina.train.job import build_data, build_model
    from lamina.train.trainer import Trainer

    job = _job(args)
    checkpoint = _checkpoint(args, job)
    loader = getattr(build_data(job), args.split)
    if loader is None:
        print("lamina: error: --split val: the job holds out no validation data "
              "(data.val_fraction is 0)", file=sys.stderr)
        return 2
    model = build_model(job)
    saved = load_checkpoint(checkpoint, model)["extra"]
    trainer = Trainer(model, None, job.loss.to_dict(), job.algorithm.build(),
                      job.trainer.metrics)
    results = trainer.evaluate(loader)
    print(f"{args.split} " + " ".join(f"{k} {v:.4f}" for k, v in results.items())
          + _trained_for(saved))
    return 0


def _trained_for(saved: dict[str, Any]) -> str:
    """Where in training a checkpoint's weights come from, if it says."""
    if "epoch" not in saved:
        return ""  # a file of weights only (from PyTorch, say)
    partial = saved.get("partial_epoch") or {}
    if partial.get("batch"):
        return f" (weights at batch {int(partial['batch'])} of epoch {int(saved['epoch']) + 1})"
    return f" (weights after epoch {int(saved['epoch'])})"


def cmd_info(args: argparse.Namespace) -> int:
    from lamina.train.job import build_data, build_model

    job = _job(args)
    data = build_data(job)
    model = build_model(job, data)
    x = next(iter(data.test))[0][:2]
    rows = [("layer", "type", "output shape", "parameters")]
    layers = list(model.named_children()) or [("", model)]
    model.eval()
    with no_grad():
        for name, layer in layers:
            x = layer(x)
            out = x[0] if isinstance(x, tuple) else x
            n = sum(p.numel() for p in layer.parameters())
            rows.append((name or "-", type(layer).__name__, str(("N", *out.shape[1:])), f"{n:,}"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    total = sum(p.numel() for p in model.parameters())
    print(f"total parameters: {total:,}   input shape: {['N', *data.info['input_shape']]}")
    sizes = [(name, len(loader.dataset)) for name, loader in
             (("train", data.train), ("validation", data.val), ("test", data.test)) if loader]
    print("samples: " + ", ".join(f"{n:,} {name}" for name, n in sizes))
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    from lamina.train.job import build_data, build_model

    job = _job(args)
    info = build_data(job).info
    if "vocab" not in info:
        print("lamina: error: sample needs a text dataset (data.name: text)", file=sys.stderr)
        return 2
    model = build_model(job)
    load_checkpoint(_checkpoint(args, job), model)
    print(generate(model, info["vocab"], args.prime, args.length, args.temperature, args.seed,
                   window=job.data.options.get("seq_len")))
    return 0


def generate(model: Any, vocab: str, prime: str, length: int, temperature: float,
             seed: int = 0, window: int | None = None) -> str:
    """Sample `length` characters from a character model, after feeding `prime`.

    A model with a stateful recurrent layer reads each new character alone, its state
    carrying the past. Any other (attention, say) reads the last `window` characters
    again at every step (all of them when window is None).
    """
    lookup = {c: i for i, c in enumerate(vocab)}
    unknown = sorted(set(prime) - set(lookup))
    if unknown:
        raise ValueError(f"sample: the prime has characters outside the vocabulary: {unknown}")
    rng = np.random.default_rng(seed)
    model.eval()
    stateful = False
    for _, layer in model.named_layers():
        if callable(getattr(layer, "reset_state", None)):
            layer.reset_state()
            stateful = stateful or bool(getattr(layer, "stateful", False))
    ids = [lookup[c] for c in prime]
    with no_grad():
        logits = model(tensor(np.array([ids if stateful or not window else ids[-window:]])))
        for _ in range(length):
            z = logits.array[0, -1].astype(np.float64) / max(temperature, 1e-6)
            p = np.exp(z - z.max())
            ids.append(int(rng.choice(len(vocab), p=p / p.sum())))
            context = ids[-1:] if stateful else ids[-window:] if window else ids
            logits = model(tensor(np.array([context])))
    return "".join(vocab[i] for i in ids)


def cmd_export(args: argparse.Namespace) -> int:
    from lamina.train.job import build_data, build_model

    job = _job(args)
    checkpoint = _checkpoint(args, job)
    test_loader = build_data(job).test
    model = build_model(job)
    load_checkpoint(checkpoint, model)
    example = next(iter(test_loader))[0][:1]
    path = export_onnx(model, example, args.onnx or checkpoint.with_suffix(".onnx"),
                             opset=args.opset)
    print(f"wrote {path} (opset {args.opset}, input {['batch', *example.shape[1:]]})")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "run.py"
    if not script.exists():
        raise FileNotFoundError(f"lamina bench runs {script} from a source checkout of "
                                "lamina (git clone, then pip install -e .)")
    import subprocess

    # As `python run.py` would run it (its folder first on sys.path), its usage line and
    # errors naming the command the user typed.
    launch = ("import sys; sys.path[0] = sys.argv.pop(1); import run; "
              "sys.exit(run.main(sys.argv[1:], prog='lamina bench'))")
    return subprocess.call([sys.executable, "-c", launch, str(script.parent), *args.rest])


def cmd_env(args: argparse.Namespace) -> int:
    """Versions and the process-wide settings of lamina.runtime, one per line."""
    settings = runtime.tune_process()
    print(f"lamina {__version__}, NumPy {np.__version__}, Python {sys.version.split()[0]}")
    print(f"threads: {get_num_threads()}")
    print(f"OPENBLAS_THREAD_TIMEOUT: {os.environ.get('OPENBLAS_THREAD_TIMEOUT', 'unset')}")
    print(f"GOMP_SPINCOUNT: {os.environ.get('GOMP_SPINCOUNT', 'unset')}")
    print(f"malloc keeps freed memory: {settings['malloc']}")
    print(f"large matrix products: {mkl_blas.backend()} (LAMINA_BLAS)")
    print(f"process tuning: {'on' if runtime.enabled() else f'off ({runtime.SWITCH}=0)'}")
    return 0
