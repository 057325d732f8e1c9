"""Built-in datasets that need no network, chosen by name in a job's `data` section: the
registry, the checks every classification dataset passes, and the datasets lamina makes
(mnist1d, digits, text). Those read from a user's files (idx, npz, csv) are in
lamina.data.file_datasets.

Each loader returns {"train": Dataset, "test": Dataset} and an `info` dict (input shape,
number of classes, vocabulary for text).
"""

from __future__ import annotations

import importlib.util
import os
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np

from lamina.data.dataset import ArrayDataset
from lamina.errors import DataError
from lamina.registry import Registry

_LOADERS = Registry("dataset")  # name -> fn(**options) -> (splits, info)


def register_dataset(name: str) -> Callable:
    """Register a loader `fn(**options) -> (splits, info)` under a name for job configs."""
    def decorate(fn: Callable) -> Callable:
        _LOADERS.add(name, fn)
        return fn

    return decorate


def dataset_names() -> list[str]:
    """The names of the registered datasets, sorted."""
    return _LOADERS.names()


def load_dataset(name: str, **options: Any) -> tuple[dict[str, ArrayDataset], dict[str, Any]]:
    """Load a built-in dataset by name; options are the loader's keyword arguments."""
    return _LOADERS.lookup(name)(**options)


def cache_dir() -> Path:
    """Where generated datasets are cached: $LAMINA_CACHE or ~/.cache/lamina."""
    root = os.environ.get("LAMINA_CACHE") or Path.home() / ".cache" / "lamina"
    return Path(root)


def classification(x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray,
                   shape: list[int] | None, source: str = "dataset"
                   ) -> tuple[dict[str, ArrayDataset], dict[str, Any]]:
    """Train and test splits of samples with class labels, checked: `source` names the
    dataset and its files in every error."""
    y, y_test = _labels(y, f"{source}, train split"), _labels(y_test, f"{source}, test split")
    for part, a, b in (("train", x, y), ("test", x_test, y_test)):
        if len(a) != len(b):
            raise DataError(f"{source}, {part} split: {len(a)} samples but {len(b)} labels")
    if x.shape[1:] != x_test.shape[1:]:
        raise DataError(f"{source}: train samples have shape {x.shape[1:]} but test samples "
                        f"{x_test.shape[1:]}")
    with np.errstate(over="ignore"):  # beyond float32's range: inf, refused just below
        x, x_test = x.astype(np.float32), x_test.astype(np.float32)
    for part, a in (("train", x), ("test", x_test)):
        _finite_inputs(a, f"{source}, {part} split")
    if shape is not None:
        try:
            x, x_test = x.reshape(len(x), *shape), x_test.reshape(len(x_test), *shape)
        except ValueError:
            raise DataError(f"{source}: data.shape {list(shape)} does not fit samples of "
                            f"{int(np.prod(x.shape[1:]))} values") from None
    info = {"input_shape": list(x.shape[1:]), "num_classes": int(max(y.max(initial=0),
                                                                      y_test.max(initial=0)) + 1)}
    return {"train": ArrayDataset(x, y), "test": ArrayDataset(x_test, y_test)}, info


def _finite_inputs(x: np.ndarray, where: str) -> None:
    """A NaN or infinite input is a DataError naming the first sample that holds one: met
    in training, it surfaces batches later as a non-finite loss, blamed on the learning
    rate."""
    bad = ~np.isfinite(x)
    if bad.any():
        sample, *at = (int(i) for i in np.argwhere(bad)[0])
        raise DataError(f"{where}: {int(bad.sum())} input value(s) are NaN, infinite or "
                        f"beyond float32's range, the first in sample {sample} at "
                        f"{tuple(at)} ({x[(sample, *at)]}); fill or drop those samples first")


def _labels(y: Any, where: str) -> np.ndarray:
    """Class indices as int64; a fractional, NaN or negative label is an error, never
    truncated into some class."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise DataError(f"{where}: labels must be one class index per sample; got shape "
                        f"{tuple(y.shape)} (one-hot labels? take their argmax)")
    if y.dtype.kind not in "biuf":
        raise DataError(f"{where}: labels must be numbers; got dtype {y.dtype}")
    if y.dtype.kind == "f" and (bad := y[~(y == np.round(y))]).size:
        raise DataError(f"{where}: labels must be whole numbers (class indices); got "
                        f"{bad[:3].tolist()}")
    if y.size and y.min() < 0:
        raise DataError(f"{where}: labels must be >= 0 (class indices); got {y.min()}")
    return y.astype(np.int64)


@register_dataset("mnist1d")
def mnist1d(shape: list[int] | None = None) -> tuple[dict[str, ArrayDataset], dict[str, Any]]:
    """MNIST-1D (Greydanus, 2020): 4,000 train / 1,000 test signals of length 40, 10 classes.

    Made on this machine by the `mnist1d` package's own generator (`make_dataset` with its
    default arguments: never its download or its pickle cache), then cached as .npz.
    """
    path = cache_dir() / "mnist1d.npz"
    if not path.exists():
        if importlib.util.find_spec("mnist1d") is None:
            raise ImportError("the mnist1d dataset needs the mnist1d package: "
                              "pip install 'lamina[data]'")
        from mnist1d.data import get_dataset_args, make_dataset

        d = make_dataset(get_dataset_args())
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, x=d["x"], y=d["y"], x_test=d["x_test"], y_test=d["y_test"])
        os.replace(tmp, path)
    with np.load(path, allow_pickle=False) as d:
        return classification(d["x"], d["y"], d["x_test"], d["y_test"], shape)


@register_dataset("digits")
def digits(shape: list[int] | None = None, binarize: bool = False,
           test_fraction: float = 0.2) -> tuple[dict[str, ArrayDataset], dict[str, Any]]:
    """The 8x8 handwritten digits shipped with scikit-learn (1,797 images), scaled to [0, 1].

    binarize: threshold at 0.5, for Bernoulli models such as the RBM.
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError as e:
        raise ImportError("the digits dataset needs scikit-learn: pip install 'lamina[data]'"
                          ) from e
    d = load_digits()
    x, y = d.data / 16.0, d.target
    if binarize:
        x = (x > 0.5).astype(np.float32)
    order = np.random.default_rng(0).permutation(len(x))
    cut = int(len(x) * (1 - test_fraction))
    tr, te = order[:cut], order[cut:]
    return classification(x[tr], y[tr], x[te], y[te], shape)


DEFAULT_TEXT_MODULES = (
    "textwrap", "string", "argparse", "dataclasses", "functools", "json/decoder",
)


def default_corpus() -> str:
    """The source of a few modules of the Python standard library, read at run time."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return "\n".join((stdlib / f"{m}.py").read_text(encoding="utf-8")
                     for m in DEFAULT_TEXT_MODULES)


ASCII_VOCAB = "\t\n" + "".join(chr(c) for c in range(32, 127))


@register_dataset("text")
def text(path: str | None = None, seq_len: int = 100, test_fraction: float = 0.1,
         vocab: Literal["ascii", "corpus"] = "ascii"
         ) -> tuple[dict[str, ArrayDataset], dict[str, Any]]:
    """A character-level corpus cut into sequences: x = chars[i:i+T], y = chars[i+1:i+T+1].

    Args:
        path: a UTF-8 text file; default: a few standard-library modules' source.
        seq_len: characters per sequence.
        test_fraction: the share of sequences (at the end) held out for testing.
        vocab: "ascii" (97 symbols: tab, newline and printable ASCII; others become '?'),
            the same on every machine, so a model config can name its size; or "corpus"
            (the corpus's own characters, sorted).
    """
    corpus = Path(path).read_text(encoding="utf-8") if path else default_corpus()
    symbols = ASCII_VOCAB if vocab == "ascii" else "".join(sorted(set(corpus)))
    lookup = {c: i for i, c in enumerate(symbols)}
    unknown = lookup.get("?", 0)
    encoded = np.fromiter((lookup.get(c, unknown) for c in corpus), np.int64, len(corpus))
    n = (len(encoded) - 1) // seq_len
    if n < 2:
        raise ValueError(f"text dataset: the corpus ({len(corpus)} characters) is too short "
                         f"for two sequences of {seq_len}")
    x = encoded[: n * seq_len].reshape(n, seq_len)
    y = encoded[1: n * seq_len + 1].reshape(n, seq_len)
    cut = max(1, int(n * (1 - test_fraction)))
    freq = np.bincount(encoded, minlength=len(symbols)) / len(encoded)
    entropy = float(-(freq[freq > 0] * np.log(freq[freq > 0])).sum())
    info = {"vocab": symbols, "num_classes": len(symbols), "unigram_entropy": entropy,
            "input_shape": [seq_len], "ordered": True}
    return {"train": ArrayDataset(x[:cut], y[:cut]), "test": ArrayDataset(x[cut:], y[cut:])}, info
