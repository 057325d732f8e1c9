"""`lamina.backends.cuda`: PyTorch's CUDA matmul flags, kept for scripts that set them
(`lamina.backends.cuda.matmul.allow_tf32 = True` changes nothing on the CPU)."""

from __future__ import annotations


class _Matmul:
    """The `matmul` flags object: attributes are accepted and kept."""

    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True


matmul = _Matmul()


def is_built() -> bool:
    """False: lamina has no CUDA build."""
    return False
