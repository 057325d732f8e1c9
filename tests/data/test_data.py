"""Datasets and the DataLoader."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import lamina as lm
from lamina import DataError
from lamina.data import (
    ArrayDataset,
    DataLoader,
    Dataset,
    Subset,
    default_collate,
    load_dataset,
    random_split,
    read_idx,
)


def test_loader_batches_shuffles_by_seed_and_epoch_and_drops_last() -> None:
    ds = ArrayDataset(np.arange(10, dtype=np.float32)[:, None], np.arange(10))
    batches = list(DataLoader(ds, batch_size=4))
    assert [len(b[1]) for b in batches] == [4, 4, 2]
    assert isinstance(batches[0][0], lm.Tensor) and batches[0][0].shape == (4, 1)
    assert len(DataLoader(ds, 4)) == 3 and len(DataLoader(ds, 4, drop_last=True)) == 2
    assert [len(b[1]) for b in DataLoader(ds, 4, drop_last=True)] == [4, 4]

    def order(loader, epoch):
        loader.set_epoch(epoch)
        return np.concatenate([b[1].array for b in loader])

    a, b = DataLoader(ds, 3, shuffle=True, seed=1), DataLoader(ds, 3, shuffle=True, seed=1)
    assert np.array_equal(order(a, 0), order(b, 0))
    assert not np.array_equal(order(a, 0), order(a, 1))
    assert sorted(order(a, 1)) == list(range(10))
    assert not np.array_equal(order(a, 0), order(DataLoader(ds, 3, shuffle=True, seed=2), 0))


def test_loader_collates_datasets_without_get_batch() -> None:
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.array([i], np.float32), np.int64(i * i)

    x, y = next(iter(DataLoader(Squares(), batch_size=5)))
    assert x.shape == (5, 1) and list(y.array) == [0, 1, 4, 9, 16]


def test_array_dataset_checks_lengths() -> None:
    with pytest.raises(ValueError, match=r"one length; got \[3, 2\]"):
        ArrayDataset(np.zeros(3), np.zeros(2))


def test_random_split_parts_are_disjoint_cover_the_data_and_depend_on_the_seed() -> None:
    ds = ArrayDataset(np.arange(100) * 10, np.arange(100))
    train, val = random_split(ds, [0.9, 0.1], seed=4)
    assert (len(train), len(val)) == (90, 10)
    assert sorted([*train.indices, *val.indices]) == list(range(100))
    assert list(val.indices) == sorted(val.indices)  # each part keeps the dataset's order
    assert np.array_equal(random_split(ds, [0.9, 0.1], seed=4)[1].indices, val.indices)
    assert not np.array_equal(random_split(ds, [0.9, 0.1], seed=5)[1].indices, val.indices)
    assert val.indices.tolist() != list(range(90, 100))  # random, not the tail
    x, y = val[3]
    assert (x, y) == (10 * val.indices[3], val.indices[3])


def test_random_split_rounds_to_the_shares_and_gives_every_positive_share_a_sample() -> None:
    def sizes(n, shares):
        return [len(p) for p in random_split(ArrayDataset(np.arange(n)), shares)]

    assert sizes(10, [0.34, 0.33, 0.33]) == [4, 3, 3]  # largest remainders
    assert sizes(10, [1.0, 0.0]) == [10, 0]
    assert sizes(10, [0.99, 0.01]) == [9, 1]
    assert sizes(4, [0.5, 0.0001, 0.4999]) == [1, 1, 2]
    with pytest.raises(ValueError, match=r"sum to 1; got \[0\.9, 0\.2\]"):
        random_split(ArrayDataset(np.arange(10)), [0.9, 0.2])
    with pytest.raises(ValueError, match="1 samples cannot fill 2 parts"):
        random_split(ArrayDataset(np.arange(1)), [0.5, 0.5])


def test_a_subset_batches_through_its_dataset() -> None:
    ds = ArrayDataset(np.arange(20, dtype=np.float32)[:, None], np.arange(20))
    subset = Subset(ds, [7, 2, 11])
    x, y = next(iter(DataLoader(subset, 3)))
    assert y.array.tolist() == [7, 2, 11] and x.shape == (3, 1)

    class NoBatch(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.array([i], np.float32), np.int64(i)

    plain = Subset(NoBatch(), [4, 1])
    assert not hasattr(plain, "get_batch")  # so a loader's own collate is used
    pairs = []
    x, y = next(iter(DataLoader(plain, 2, collate=lambda s: (pairs.append(s) or
                                                             default_collate(s)))))
    assert y.array.tolist() == [4, 1] and len(pairs) == 1


def _write_idx(path, array, compress):
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(
        int(d).to_bytes(4, "big") for d in array.shape)
    data = header + array.astype(np.uint8).tobytes()
    with (gzip.open if compress else open)(path, "wb") as f:
        f.write(data)


@pytest.mark.parametrize("compress", [False, True])
def test_idx_dataset_reads_mnist_layout(tmp_path, compress) -> None:
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (6, 4, 5))
    labels = rng.integers(0, 10, 6)
    suffix = ".gz" if compress else ""
    _write_idx(tmp_path / f"train-images-idx3-ubyte{suffix}", images, compress)
    _write_idx(tmp_path / f"train-labels-idx1-ubyte{suffix}", labels, compress)
    _write_idx(tmp_path / f"t10k-images-idx3-ubyte{suffix}", images[:2], compress)
    _write_idx(tmp_path / f"t10k-labels-idx1-ubyte{suffix}", labels[:2], compress)
    splits, info = load_dataset("idx", path=str(tmp_path))
    x, y = splits["train"][3]
    assert x.shape == (1, 4, 5) and info["input_shape"] == [1, 4, 5]
    np.testing.assert_allclose(x[0], images[3] / 255.0, rtol=1e-6)
    assert y == labels[3] and len(splits["test"]) == 2


def test_idx_dataset_names_the_missing_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="has no train-images-idx3-ubyte"):
        load_dataset("idx", path=str(tmp_path))
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="bad magic number"):
        read_idx(tmp_path / "bad")


def test_npz_and_csv_datasets(tmp_path) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 3)), rng.integers(0, 2, 8)
    np.savez(tmp_path / "d.npz", x=x, y=y, x_test=x[:2], y_test=y[:2])
    splits, info = load_dataset("npz", path=str(tmp_path / "d.npz"), shape=[3, 1])
    assert splits["train"][0][0].shape == (3, 1) and info["num_classes"] == 2
    table = np.column_stack([x, y])
    np.savetxt(tmp_path / "d.csv", table, delimiter=",", header="a,b,c,label")
    splits, _ = load_dataset("csv", path=str(tmp_path / "d.csv"),
                             test_path=str(tmp_path / "d.csv"))
    np.testing.assert_allclose(splits["train"][5][0], x[5], rtol=1e-6)
    assert splits["train"][5][1] == y[5]
    # The label named in the header, here in the first column.
    np.savetxt(tmp_path / "e.csv", table[:, [3, 0, 1, 2]], delimiter=",",
               header='"label", a,b,c', comments="")
    named, _ = load_dataset("csv", path=str(tmp_path / "e.csv"),
                            test_path=str(tmp_path / "e.csv"), label_column="label")
    np.testing.assert_array_equal(named["train"].arrays[0], splits["train"].arrays[0])
    np.testing.assert_array_equal(named["train"].arrays[1], splits["train"].arrays[1])


def test_text_dataset_targets_are_the_next_character(tmp_path) -> None:
    (tmp_path / "t.txt").write_text("hello world, héllo again\n" * 20)
    splits, info = load_dataset("text", path=str(tmp_path / "t.txt"), seq_len=10)
    x, y = splits["train"][0]
    assert x.shape == (10,) and np.array_equal(x[1:], y[:-1])
    assert info["num_classes"] == 97 and info["vocab"][x[0]] == "h"
    assert info["vocab"][splits["train"][0][0][1]] == "e"
    _, corpus = load_dataset("text", path=str(tmp_path / "t.txt"), seq_len=10, vocab="corpus")
    assert "é" in corpus["vocab"]
    assert 0 < info["unigram_entropy"] < np.log(97)


def test_default_text_corpus_is_the_standard_library() -> None:
    splits, info = load_dataset("text", seq_len=100)
    text = "".join(info["vocab"][i] for i in splits["train"][0][0])
    assert len(splits["train"]) > 1000 and text.isascii()


def test_digits_dataset() -> None:
    pytest.importorskip("sklearn")
    splits, info = load_dataset("digits", binarize=True)
    assert len(splits["train"]) + len(splits["test"]) == 1797
    x, _ = splits["train"][0]
    assert x.shape == (64,) and set(np.unique(x)) <= {0.0, 1.0}


@pytest.mark.slow
def test_mnist1d_is_generated_locally_and_cached(tmp_path, monkeypatch) -> None:
    pytest.importorskip("mnist1d")
    monkeypatch.setenv("LAMINA_CACHE", str(tmp_path))
    splits, info = load_dataset("mnist1d", shape=[1, 40])
    assert (len(splits["train"]), len(splits["test"])) == (4000, 1000)
    assert info == {"input_shape": [1, 40], "num_classes": 10}
    assert (tmp_path / "mnist1d.npz").exists()
    again, _ = load_dataset("mnist1d")
    np.testing.assert_array_equal(again["train"][7][0], splits["train"][7][0][0])


def test_shards_are_equal_disjoint_parts_of_each_epochs_order() -> None:
    ds = ArrayDataset(np.arange(11, dtype=np.float32)[:, None], np.arange(11))
    whole = DataLoader(ds, 2, shuffle=True, seed=4)
    parts = [DataLoader(ds, 2, shuffle=True, seed=4, shard=(i, 2)) for i in range(2)]
    for loader in (whole, *parts):
        loader.set_epoch(3)
    got = [np.concatenate([b[1].array for b in p]) for p in parts]
    assert [len(g) for g in got] == [5, 5] and [len(p) for p in parts] == [3, 3]
    np.testing.assert_array_equal(np.concatenate(got), whole.order()[:10])  # one left over
    with pytest.raises(ValueError, match=r"shard must be \(index, count\)"):
        DataLoader(ds, 2, shard=(2, 2))


CSV_GOOD = "a,b,label\n1,2,0\n3,4,1\n"


@pytest.mark.parametrize("train, options, message", [
    ("a,b,label\n1,2,0.5\n3,4,1\n", {},  # truncated to class 0 before
     r"train\.csv, .*test\.csv\), train split: labels must be whole numbers \(class "
     r"indices\); got \[0\.5\]$"),
    ("a,b,label\n1,2,-1\n3,4,1\n", {}, r"train split: labels must be >= 0 .*; got -1"),
    # A bad cell is named by its line, its column's name and its text.
    ("a,b,label\n1,2,0\n\n# a comment\n1,,0\n", {},
     r"^csv dataset: .*train\.csv: line 5, column 'b' \(2\): '' is empty; fill or drop such "
     r"rows first \(lamina does not impute\)$"),
    ("a,b,label\n1,2,0\n3, x ,1\n", {}, r"train\.csv: line 3, column 'b' \(2\): 'x' is not a "
                                     r"finite number; fill or drop"),
    # NaN and inf parse as numbers, and would surface as a non-finite loss batches later.
    ("a,b,label\n1,2,0\nnan,4,1\n", {}, r"train\.csv: line 3, column 'a' \(1\): 'nan' is not"),
    ("1,2,0\n3,-inf,1\n", {"skip_header": False},
     r"train\.csv: line 2, column \(2\): '-inf' is not a finite number"),
    ("a,b,label\n1,2,0\n3,4\n", {}, r"train\.csv: line 3 has 2 cells where the rows before "
                                  r"have 3$"),
    # Finite in the file, beyond float32 in training.
    ("a,b,label\n1,2,0\n3,1e39,1\n", {},
     r"train split: 1 input value\(s\) are NaN, infinite or beyond float32's range, the "
     r"first in sample 1 at \(1,\) \(inf\); fill or drop those samples first$"),
    ("a,label\n1,0\n3,1\n", {},
     r"train samples have shape \(1,\) but test samples \(2,\)$"),
    (CSV_GOOD, {"shape": [3]}, r"data\.shape \[3\] does not fit samples of 2 values$"),
    (CSV_GOOD, {"label_column": 3}, r"train\.csv: label_column 3 is outside its 3 columns$"),
    (CSV_GOOD, {"label_column": "lable"}, r"train\.csv: no column 'lable' in the header \(did "
                                          r"you mean 'label'\?\); columns: \['a', 'b', 'label'\]$"),
    (CSV_GOOD, {"label_column": "label", "skip_header": False},
     r"label_column 'label' names a column of the header line, but skip_header is false"),
])
def test_bad_csv_data_is_a_data_error_naming_the_file(tmp_path, train, options, message
                                                      ) -> None:
    (tmp_path / "train.csv").write_text(train)
    (tmp_path / "test.csv").write_text(CSV_GOOD)
    with pytest.raises(DataError, match=message):
        load_dataset("csv", path=str(tmp_path / "train.csv"),
                     test_path=str(tmp_path / "test.csv"), **options)


def test_npz_inputs_that_are_not_finite_name_their_sample(tmp_path) -> None:
    x = np.zeros((4, 2, 3), np.float32)
    x_test = x.copy()
    x_test[2, 1, 0] = x_test[3, 0, 0] = np.nan
    np.savez(tmp_path / "nan.npz", x=x, y=np.arange(4), x_test=x_test, y_test=np.arange(4))
    with pytest.raises(DataError, match=r"nan\.npz\), test split: 2 input value\(s\) are NaN,"
                                        r" .* the first in sample 2 at \(1, 0\) \(nan\)"):
        load_dataset("npz", path=str(tmp_path / "nan.npz"))


def test_npz_labels_are_checked_and_missing_arrays_named(tmp_path) -> None:
    x = np.zeros((3, 2), np.float32)
    np.savez(tmp_path / "onehot.npz", x=x, y=np.eye(3), x_test=x, y_test=np.arange(3))
    with pytest.raises(DataError, match=r"one class index per sample; got shape \(3, 3\)"):
        load_dataset("npz", path=str(tmp_path / "onehot.npz"))
    np.savez(tmp_path / "short.npz", x=x, y=np.arange(2), x_test=x, y_test=np.arange(3))
    with pytest.raises(DataError, match=r"train split: 3 samples but 2 labels"):
        load_dataset("npz", path=str(tmp_path / "short.npz"))
    np.savez(tmp_path / "partial.npz", x=x, y=np.arange(3))
    with pytest.raises(DataError, match=r"lacks arrays \['x_test', 'y_test'\]"):
        load_dataset("npz", path=str(tmp_path / "partial.npz"))
    np.savez(tmp_path / "ok.npz", x=x, y=np.array([0.0, 2.0, 1.0]), x_test=x,
             y_test=np.arange(3))
    splits, info = load_dataset("npz", path=str(tmp_path / "ok.npz"))
    assert splits["train"].arrays[1].tolist() == [0, 2, 1] and info["num_classes"] == 3
