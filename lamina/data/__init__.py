"""Datasets and loaders. Import as `lamina.data`."""

from lamina.data.builtin import dataset_names, load_dataset, read_idx, register_dataset
from lamina.data.dataset import (
    ArrayDataset,
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)

__all__ = [
    "ArrayDataset",
    "DataLoader",
    "Dataset",
    "Subset",
    "TensorDataset",
    "dataset_names",
    "default_collate",
    "load_dataset",
    "random_split",
    "read_idx",
    "register_dataset",
]
