"""The kernels a plan lowers ops to (see base.Kernel), registered by op class."""

from lamina.plan.kernels import conv, elementwise, layers  # noqa: F401  (they register)
from lamina.plan.kernels.base import KERNELS, Kernel, kernel_for, lower
from lamina.plan.kernels.conv_pool import ConvMaxPool, fusable

__all__ = ["KERNELS", "ConvMaxPool", "Kernel", "fusable", "kernel_for", "lower"]
