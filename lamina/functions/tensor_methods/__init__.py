"""PyTorch's Tensor methods and operators, installed on `lamina.autograd.Tensor` when the
ops load: they call the ops, which sit above the core that defines Tensor.

Each class below is a group of methods; `install` copies them onto Tensor, as if Tensor
inherited them (none uses `super()`).
"""

from __future__ import annotations

from lamina.autograd.tensor import Tensor
from lamina.functions.tensor_methods.activations import ActivationMethods
from lamina.functions.tensor_methods.compare import CompareMethods
from lamina.functions.tensor_methods.complex_methods import ComplexMethods
from lamina.functions.tensor_methods.composite import CompositeMethods
from lamina.functions.tensor_methods.convert import ConvertMethods
from lamina.functions.tensor_methods.gamma import GammaMethods
from lamina.functions.tensor_methods.index import IndexMethods
from lamina.functions.tensor_methods.inplace import InplaceMethods
from lamina.functions.tensor_methods.inplace_views import InplaceViewMethods
from lamina.functions.tensor_methods.linalg_methods import LinalgMethods
from lamina.functions.tensor_methods.math import MathMethods
from lamina.functions.tensor_methods.memory import MemoryMethods
from lamina.functions.tensor_methods.operators import OperatorMethods
from lamina.functions.tensor_methods.pieces import PieceMethods
from lamina.functions.tensor_methods.products import ProductMethods
from lamina.functions.tensor_methods.reduce import ReduceMethods
from lamina.functions.tensor_methods.scatter import ScatterMethods
from lamina.functions.tensor_methods.shape import ShapeMethods
from lamina.functions.tensor_methods.slicing import SlicingMethods
from lamina.functions.tensor_methods.sorting import SortingMethods
from lamina.functions.tensor_methods.special import SpecialMethods
from lamina.functions.tensor_methods.statistics import StatisticsMethods
from lamina.functions.tensor_methods.storage import StorageMethods
from lamina.functions.tensor_methods.to_python import PythonMethods

GROUPS = (OperatorMethods, ShapeMethods, PieceMethods, IndexMethods, MathMethods,
          ActivationMethods, CompareMethods, ReduceMethods, SortingMethods,
          ConvertMethods, PythonMethods, InplaceMethods, CompositeMethods, SlicingMethods,
          StatisticsMethods, MemoryMethods, SpecialMethods, GammaMethods, ProductMethods,
          InplaceViewMethods, ScatterMethods, LinalgMethods, StorageMethods, ComplexMethods)
_SKIP = {"__module__", "__doc__", "__dict__", "__weakref__", "__qualname__", "__slots__"}


def install(cls: type = Tensor) -> None:
    """Put every group's methods on `cls`, where it does not define them itself."""
    for group in GROUPS:
        for name, value in vars(group).items():
            if name not in _SKIP and name not in vars(cls):
                setattr(cls, name, value)
    cls.__hash__ = object.__hash__  # tensors key dicts by identity, __eq__ compares values


__all__ = ["GROUPS", "install"]
