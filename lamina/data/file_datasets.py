"""Datasets read from a user's files, chosen by name in a job's `data` section: MNIST's
IDX files, an .npz of four arrays (never pickles), numeric CSV. Each checks its input as
lamina.data.builtin's classification does, and names the file in every error."""

from __future__ import annotations

import difflib
import gzip
import math
from pathlib import Path

import numpy as np

from lamina.data.builtin import classification, register_dataset
from lamina.data.dataset import ArrayDataset
from lamina.errors import DataError

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
    return classification(x / 255.0, y, x_test / 255.0, y_test,
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
        return classification(*arrays, shape, f"npz dataset ({path})")


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
    return classification(x, y, x_test, y_test, shape, f"csv dataset ({path}, {test_path})")


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
