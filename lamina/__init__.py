"""lamina: a define-by-run deep-learning framework on NumPy.

    >>> import lamina as lm
    >>> x = lm.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    array([2., 4., 6.], dtype=float32)
"""

# First, before anything loads NumPy: it sets how long OpenBLAS's idle threads spin.
from lamina import parallel  # noqa: I001
from lamina import allocator  # noqa: F401  (keeps freed memory: lamina/allocator.py)
from lamina import data, functions, io, nn, optim, plan, train  # noqa: E402  (lm.nn, ...)
from lamina.autograd import (
    Function,
    GradcheckError,
    Tensor,
    backward,
    backward_stream,
    gradcheck,
    tensor,
)
from lamina.config import (
    enable_grad,
    get_rng_state,
    is_grad_enabled,
    manual_seed,
    no_grad,
    set_rng_state,
)
from lamina.errors import DataError, DTypeError, ShapeError
from lamina.parallel import get_num_threads, set_num_threads

Variable = Tensor

__version__ = "0.1.0"

__all__ = [
    "DTypeError",
    "DataError",
    "Function",
    "GradcheckError",
    "ShapeError",
    "Tensor",
    "Variable",
    "__version__",
    "backward",
    "backward_stream",
    "data",
    "enable_grad",
    "functions",
    "io",
    "nn",
    "optim",
    "parallel",
    "plan",
    "get_rng_state",
    "get_num_threads",
    "gradcheck",
    "is_grad_enabled",
    "manual_seed",
    "no_grad",
    "set_num_threads",
    "set_rng_state",
    "tensor",
    "train",
]
