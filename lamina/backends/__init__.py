"""`lamina.backends`, as `torch.backends` on a machine with no GPU: the flags scripts set
(`cudnn.benchmark = True`, `cuda.matmul.allow_tf32 = True`) are accepted and change
nothing, since lamina computes with NumPy on the CPU; `mps.is_available()` is False."""

from lamina.backends import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
