"""The `lamina` command: train, eval, info and sample from YAML jobs."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lamina import runtime
from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import tensor
from lamina.io.checkpoint import load as load_checkpoint
from lamina.io.onnx import export_onnx
from lamina.nn.layer import located_message
from lamina.parallel import get_num_threads
from lamina.version import __version__

if TYPE_CHECKING:
    from lamina.train.jobfile import Job


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lamina", description=__doc__)
    parser.add_argument("--debug", action="store_true",
                        help="on an error, print Python's traceback too")
    sub = parser.add_subparsers(dest="command", required=True)

    def job_command(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("job", type=Path, help="the job's YAML file")
        p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="override a config value, e.g. --set trainer.epochs=3")
        return p

    p = job_command("train", "train a model from a job file")
    p.add_argument("--resume", action="store_true",
                   help="continue runs/<name> from its last checkpoint")
    p.add_argument("--workers", type=int, default=None,
                   help="train data-parallel on this many Ray workers (a local cluster "
                        "unless distributed.address is set)")
    p.add_argument("--address", default=None, metavar="HOST:PORT",
                   help="join this running Ray cluster (distributed.address), e.g. the "
                        "address `ray start --head` printed")
    p = job_command("eval", "evaluate a checkpoint on the job's test split")
    checkpoint_option(p)
    p.add_argument("--split", choices=("test", "val", "train"), default="test",
                   help="which split to measure (val: the part of the training split the "
                        "job holds out)")
    job_command("info", "show the model's layers, output shapes and parameter counts")
    p = job_command("sample", "generate text from a character language model")
    checkpoint_option(p)
    p.add_argument("--length", type=int, default=400)
    p.add_argument("--prime", default="def ")
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=0)
    p = job_command("export", "write the job's model, with a checkpoint's weights, as ONNX")
    checkpoint_option(p)
    p.add_argument("--onnx", type=Path, default=None,
                   help="the .onnx file to write (default: the checkpoint's path, ending .onnx)")
    p.add_argument("--opset", type=int, default=17)
    sub.add_parser("env", help="show the versions and process settings lamina runs with "
                   "(for bug reports)")
    p = sub.add_parser("bench", help="time the standard workloads against PyTorch "
                                     "(benchmarks/run.py of a source checkout)")
    return parser


def checkpoint_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", type=Path, default=None,
                   help="the weights to load (default: the job's run directory's "
                        "best.safetensors, else last.safetensors)")


def _checkpoint(args: argparse.Namespace, job: Job) -> Path:
    """--checkpoint, or the run's own, named on stderr (stdout may be sampled text)."""
    if args.checkpoint is not None:
        return args.checkpoint
    from lamina.train.job import run_checkpoint

    path, note = run_checkpoint(job)
    print(f"lamina: {note}", file=sys.stderr)
    return path


def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: Any = None, line: str | None = None) -> None:
    """A warning as one line, as the command's errors are: the file and source line
    Python adds are lamina's own, which tell a user of the command nothing."""
    print(f"lamina: warning: {message}", file=sys.stderr)


def _set_hint(rest: Sequence[str]) -> str:
    """Overrides written as Hydra writes them (trainer.epochs=3) are meant for --set."""
    overrides = [a for a in rest if "=" in a and not a.startswith("-")]
    if not overrides:
        return ""
    return "; to override config values write " + " ".join(f"--set {a}" for a in overrides)


def entry() -> None:
    """The `lamina` command's entry point: starts itself again, once, with the thread-pool
    settings lamina.runtime wants in its environment (they only act before NumPy and
    numba's pool load), then runs `main`."""
    extra = runtime.blas_env()
    if extra and os.environ.get(_RESTARTED) is None:
        os.environ.update(extra, **{_RESTARTED: "1"})
        # Through the launcher again (where installed), which catches a Ctrl-C during the
        # imports that follow.
        module = "lamina_cli" if importlib.util.find_spec("lamina_cli") else "lamina.cli"
        os.execv(sys.executable, [sys.executable, "-m", module, *sys.argv[1:]])
    sys.exit(main())


_RESTARTED = "LAMINA_CLI_RESTARTED"


def main(argv: Sequence[str] | None = None) -> int:
    runtime.tune_process()
    parser = _parser()
    args, rest = parser.parse_known_args(argv)
    if args.command == "bench":
        args.rest = rest  # passed on to benchmarks/run.py
    elif rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}{_set_hint(rest)}")
    from lamina.errors import DataError, ShapeError, Terminated
    from lamina.io import CheckpointError, ExportError
    from lamina.plan import TraceError
    from lamina.schema import ConfigError
    from lamina.train.callbacks import NonFiniteError

    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return COMMANDS[args.command](args)
    except ConfigError as e:
        print(f"lamina: config error: {e}", file=sys.stderr)
        return 2
    except (CheckpointError, NonFiniteError, FileNotFoundError, ImportError, ExportError,
            TraceError, DataError) as e:
        print(f"lamina: error: {e}{_notes(e)}", file=sys.stderr)
        return 1
    except IndexError as e:
        if not hasattr(e, "job_key"):
            return _unexpected(e, args.debug)
        job = getattr(args, "job_read", None)
        source = "" if job is None else f"; the labels come from data: {job.data.name}" + (
            f" ({job.data.options['path']})" if "path" in job.data.options else "")
        print(f"lamina: error: {e.job_key}: {e}{source}{_notes(e)}", file=sys.stderr)
        return 1
    except Terminated as e:
        print(f"lamina: terminated (SIGTERM){_notes(e)}", file=sys.stderr)
        return 143  # as a shell reports SIGTERM
    except KeyboardInterrupt as e:
        print(f"lamina: interrupted{_notes(e)}", file=sys.stderr)
        return 130  # as a shell reports SIGINT
    except ShapeError as e:
        if hasattr(e, "job_key"):  # the job's loss does not fit the model's output
            print(f"lamina: error: {e.job_key}: {e}{_notes(e)}", file=sys.stderr)
            return 1
        if not hasattr(e, "layer_path"):  # not raised by a layer
            return _unexpected(e, args.debug)
        print(f"lamina: error: {_in_config(e, getattr(args, 'job_read', None))}{_notes(e)}",
              file=sys.stderr)
        return 1
    except OSError as e:  # a path lamina cannot read or write: the run's folder, the data
        if e.filename is None or args.debug:
            return _unexpected(e, args.debug)
        print(f"lamina: error: {e.filename}: {e.strerror}; give a path lamina can use "
              f"(trainer.out_dir for the runs, data.path for the data){_notes(e)}",
              file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - one line for the user; --debug for the rest
        return _unexpected(e, args.debug)


def _unexpected(error: Exception, debug: bool) -> int:
    """An error lamina has no message of its own for: one line, naming its type, with
    the traceback only under --debug (where `raise` prints it)."""
    if debug:
        raise error
    print(f"lamina: error: {type(error).__name__}: {error}{_notes(error)} (run with "
          "--debug for the traceback)", file=sys.stderr)
    return 1


def _notes(error: BaseException) -> str:
    """The notes added on the way up (where the last checkpoint is), on the same line."""
    return "".join(f"; {note}" for note in getattr(error, "__notes__", []))


def _in_config(error: Any, job: Job | None) -> str:
    """A layer's shape error, with the layer named by its path in the job
    (`model.layers[4] (Linear): ...`) where the model is nested Sequential configs."""
    from lamina.train.jobfile import layer_config_path

    where = layer_config_path(job and job.model, error.layer_path["path"])
    return str(error) if where is None else located_message(error, where)


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

    return subprocess.call([sys.executable, str(script), *args.rest])


def cmd_env(args: argparse.Namespace) -> int:
    """Versions and the process-wide settings of lamina.runtime, one per line."""
    settings = runtime.tune_process()
    print(f"lamina {__version__}, NumPy {np.__version__}, Python {sys.version.split()[0]}")
    print(f"threads: {get_num_threads()}")
    print(f"OPENBLAS_THREAD_TIMEOUT: {os.environ.get('OPENBLAS_THREAD_TIMEOUT', 'unset')}")
    print(f"GOMP_SPINCOUNT: {os.environ.get('GOMP_SPINCOUNT', 'unset')}")
    print(f"malloc keeps freed memory: {settings['malloc']}")
    print(f"process tuning: {'on' if runtime.enabled() else f'off ({runtime.SWITCH}=0)'}")
    return 0


COMMANDS = {"env": cmd_env, "train": cmd_train, "eval": cmd_eval, "info": cmd_info,
            "sample": cmd_sample, "export": cmd_export, "bench": cmd_bench}


if __name__ == "__main__":
    sys.exit(main())
