"""Built-in datasets that need no network, chosen by name in a job's `data` section.

Each loader returns {"train": Dataset, "test": Dataset} and an `info` dict (input shape,
number of classes, vocabulary for text).
"""

from __future__ import annotations

import difflib
import gzip
import importlib.util
import math
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


def _classification(x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray,
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
        return _classification(d["x"], d["y"], d["x_test"], d["y_test"], shape)


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
    return _classification(x[tr], y[tr], x[te], y[te], shape)


IDX_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
             "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


def read_idx(path: Path) -> np.ndarray:
    """Read one IDX file (gzipped or not): magic, dims as big-endian int32, then the data."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise DataError(f"{path}: not an IDX file of unsigned bytes (bad magic number)")
    ndim = raw[3]
    dims = np.frombuffer(raw, ">i4", count=ndim, offset=4)
    data = np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise DataError(f"{path}: truncated; expected {int(np.prod(dims))} values for shape "
                         f"{tuple(dims)}, got {data.size}")
    return data.reshape(tuple(int(d) for d in dims))


@register_dataset("idx")
def idx(path: str, shape: list[int] | None = None) -> tuple[dict[str, ArrayDataset], dict]:
    """MNIST or Fashion-MNIST in IDX format from a directory, gzipped or not."""
    root = Path(path)
    found = []
    for name in IDX_FILES:
        candidates = [root / name, root / f"{name}.gz"]
        hit = next((c for c in candidates if c.exists()), None)
        if hit is None:
            raise FileNotFoundError(f"idx dataset: {root} has no {name} (or {name}.gz); "
                                    f"expected the four files {list(IDX_FILES)}")
        found.append(read_idx(hit))
    x, y, x_test, y_test = found
    return _classification(x / 255.0, y, x_test / 255.0, y_test,
                           shape if shape is not None else [1, *x.shape[1:]])


@register_dataset("npz")
def npz(path: str, shape: list[int] | None = None) -> tuple[dict[str, ArrayDataset], dict]:
    """Arrays x, y, x_test, y_test from an .npz file (no pickles)."""
    with np.load(path, allow_pickle=False) as d:
        missing = [k for k in ("x", "y", "x_test", "y_test") if k not in d]
        if missing:
            raise DataError(f"npz dataset: {path} lacks arrays {missing}")
        arrays = []
        for k in ("x", "y", "x_test", "y_test"):
            try:
                arrays.append(d[k])
            except ValueError:  # NumPy's words suggest loading with pickles: never here
                raise DataError(f"npz dataset: {path}: array {k!r} holds Python objects, "
                                "which lamina never reads (they would be unpickled); save "
                                "it as a numeric array") from None
        return _classification(*arrays, shape, f"npz dataset ({path})")


@register_dataset("csv")
def csv(path: str, test_path: str, label_column: int | str = -1, skip_header: bool = True,
        shape: list[int] | None = None) -> tuple[dict[str, ArrayDataset], dict]:
    """Numeric CSV files, one sample a row, the label in `label_column`: its index, or
    its name in the header line."""
    def read(p: str) -> tuple[np.ndarray, np.ndarray]:
        column = _column(p, label_column) if isinstance(label_column, str) else label_column
        try:
            table = np.loadtxt(p, delimiter=",", skiprows=1 if skip_header else 0, ndmin=2)
        except ValueError as e:  # NumPy's words where the file's own are not found
            raise DataError(f"csv dataset: {p}: {_first_bad_cell(p, skip_header) or e}"
                            ) from None
        if not np.isfinite(table).all():
            raise DataError(f"csv dataset: {p}: {_first_bad_cell(p, skip_header)}")
        if not -table.shape[1] <= column < table.shape[1]:
            raise DataError(f"csv dataset: {p}: label_column {column} is outside its "
                            f"{table.shape[1]} columns")
        return np.delete(table, column, axis=1), table[:, column]

    if isinstance(label_column, str) and not skip_header:
        raise DataError(f"csv dataset: label_column {label_column!r} names a column of the "
                        "header line, but skip_header is false (no header); give its index")

    (x, y), (x_test, y_test) = read(path), read(test_path)
    return _classification(x, y, x_test, y_test, shape, f"csv dataset ({path}, {test_path})")


def _first_bad_cell(path: str, skip_header: bool) -> str:
    """Where a CSV file first holds a cell that is not a finite number, or a row of
    another length than the first, in the file's own terms: its line, the column's name
    in the header (where there is one) and the cell's text. Read only when loading has
    failed, so the common path is NumPy's alone."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    header = _header_names(lines[0]) if skip_header and lines else []
    width = None
    for number, line in enumerate(lines, start=1):
        if (skip_header and number == 1) or not line.strip() or line.lstrip().startswith("#"):
            continue  # as np.loadtxt skips them
        cells = line.split(",")
        width = width or len(cells)
        if len(cells) != width:
            return f"line {number} has {len(cells)} cells where the rows before have {width}"
        for i, cell in enumerate(cells):
            if not _is_finite_number(cell):
                name = f"{header[i]!r} " if i < len(header) else ""
                what = "is empty" if not cell.strip() else "is not a finite number"
                return (f"line {number}, column {name}({i + 1}): {cell.strip()!r} {what}; "
                        "fill or drop such rows first (lamina does not impute)")
    return ""


def _is_finite_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _header_names(line: str) -> list[str]:
    """The column names of a CSV header line, spaces and quotes around each taken off."""
    return [c.strip().strip('"') for c in line.rstrip("\r\n").split(",")]


def _column(path: str, name: str) -> int:
    """The index of the column called `name` in the CSV file's header line."""
    try:
        with open(path, encoding="utf-8") as f:
            header = _header_names(f.readline())
    except OSError as e:
        raise DataError(f"csv dataset: {path}: {e.strerror}") from None
    if name not in header:
        close = difflib.get_close_matches(name, header, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise DataError(f"csv dataset: {path}: no column {name!r} in the header{hint}; "
                        f"columns: {header}")
    return header.index(name)


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
