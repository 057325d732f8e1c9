"""Datasets and loaders. Import as `lamina.data`."""

from lamina.data.builtin import dataset_names, load_dataset, read_idx, register_dataset
from lamina.data.dataset import ArrayDataset, DataLoader, Dataset, default_collate

__all__ = [
    "ArrayDataset",
    "DataLoader",
    "Dataset",
    "dataset_names",
    "default_collate",
    "load_dataset",
    "read_idx",
    "register_dataset",
]
