"""Datasets, samplers and loaders (`torch.utils.data`'s, also as `lamina.utils.data`), and
lamina's built-in datasets. Import as `lamina.data`."""

from lamina.data.builtin import dataset_names, load_dataset, register_dataset
from lamina.data.collate import default_collate, default_convert
from lamina.data.dataset import (
    ArrayDataset,
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from lamina.data.file_datasets import read_idx
from lamina.data.loader import DataLoader
from lamina.data.sampler import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from lamina.data.workers import WorkerInfo, get_worker_info

__all__ = [
    "ChainDataset",
    "DistributedSampler",
    "StackDataset",
    "ArrayDataset",
    "BatchSampler",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "dataset_names",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "load_dataset",
    "random_split",
    "read_idx",
    "register_dataset",
]
