"""The `lamina` command: train, eval, info and sample from YAML jobs.

Here: the parser, the entry point, and the errors as one line each; the commands
themselves are in lamina.cli_commands."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamina import runtime
from lamina.cli_commands import (
    cmd_bench,
    cmd_env,
    cmd_eval,
    cmd_export,
    cmd_info,
    cmd_sample,
    cmd_train,
)
from lamina.nn.layer_errors import located_message

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
    # Every option, --help too, is benchmarks/run.py's: it parses them itself.
    sub.add_parser("bench", add_help=False, help="time the standard workloads against "
                   "PyTorch (benchmarks/run.py of a source checkout; --help for its options)")
    return parser


def checkpoint_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", type=Path, default=None,
                   help="the weights to load (default: the job's run directory's "
                        "best.safetensors, else last.safetensors)")


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


COMMANDS = {"env": cmd_env, "train": cmd_train, "eval": cmd_eval, "info": cmd_info,
            "sample": cmd_sample, "export": cmd_export, "bench": cmd_bench}


if __name__ == "__main__":
    sys.exit(main())
