"""lamina: a define-by-run deep-learning framework on NumPy, with PyTorch's names.

    >>> import lamina as lm
    >>> x = lm.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4., 6.])
"""

import importlib as _importlib

from lamina import (
    accelerator,
    amp,
    autograd,
    backends,
    cuda,
    functions,
    nn,
    optim,
    parallel,
    return_types,
    runtime,
    utils,
)
from lamina.amp import autocast
from lamina.autograd import (
    GradcheckError,
    Tensor,
    backward,
    backward_stream,
    enable_grad,
    gradcheck,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
    tensor,
)
from lamina.autograd.anomaly import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from lamina.autograd.function import Function
from lamina.compiler import (
    compile,
    get_float32_matmul_precision,
    set_float32_matmul_precision,
)
from lamina.creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from lamina.creation_random import (
    bernoulli,
    multinomial,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
)
from lamina.dtypes import (
    Size,
    bfloat16,
    bool,
    cdouble,
    cfloat,
    chalf,
    complex32,
    complex64,
    complex128,
    device,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    layout,
    long,
    set_default_dtype,
    short,
    strided,
    uint8,
)
from lamina.errors import DataError, DTypeError, OutOfMemoryError, ShapeError
from lamina.finite_differences import gradient
from lamina.functions.loss_embedding import pdist
from lamina.interop import empty_permuted, empty_strided, from_dlpack, frombuffer, to_dlpack
from lamina.legacy_tensors import *  # noqa: F403  (torch.FloatTensor, torch.LongTensor, ...)
from lamina.legacy_tensors import __all__ as _legacy_tensors
from lamina.memory_formats import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from lamina.nn.torch_cells import *  # noqa: F403  (torch.lstm_cell, torch.ctc_loss, ...)
from lamina.nn.torch_cells import __all__ as _nn_cells
from lamina.nn.torch_functions import *  # noqa: F403  (torch.conv2d, torch.dropout, ...)
from lamina.nn.torch_functions import __all__ as _nn_functions
from lamina.parallel import get_num_threads, set_num_threads
from lamina.printing import set_printoptions
from lamina.promotion import promote_types
from lamina.random import (
    Generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from lamina.tensor_functions import *  # noqa: F403  (torch.exp, torch.cat, ...)
from lamina.tensor_functions import __all__ as _tensor_functions
from lamina.tensor_functions_dtypes import (
    are_deterministic_algorithms_enabled,
    asarray,
    can_cast,
    get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled,
    is_warn_always_enabled,
    result_type,
    set_deterministic_debug_mode,
    set_flush_denormal,
    set_warn_always,
    use_deterministic_algorithms,
)
from lamina.tensor_functions_extra import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    bucketize,
    cartesian_prod,
    cdist,
    column_stack,
    combinations,
    cosine_similarity,
    diagflat,
    dstack,
    isin,
    meshgrid,
    row_stack,
    searchsorted,
    tensordot,
)
from lamina.tensor_functions_misc import *  # noqa: F403  (windows, histogram, ...)
from lamina.tensor_functions_misc import __all__ as _misc_functions
from lamina.tensor_functions_stats import (
    corrcoef,
    cov,
    std_mean,
    trapezoid,
    var_mean,
)
from lamina.type_info import e, finfo, iinfo, inf, nan, newaxis, pi
from lamina.version import __version__
from lamina.window_functions import *  # noqa: F403  (hann_window, ...)
from lamina.window_functions import __all__ as _window_functions

Variable = Tensor
trapz = trapezoid  # PyTorch's older name

# Imported at first use, not by `import lamina`: files, plans, training and Ray bring in
# asyncio, ssl and multiprocessing, which a script that only builds and trains a model
# never needs. `lamina.plan` and `import lamina.plan` both work as before.
_LAZY_MODULES = ("data", "distributed", "distributions", "fft", "func", "hub", "io", "jit",
                 "linalg", "onnx", "plan", "profiler", "special", "testing", "train")
_LAZY_NAMES = {"load": "lamina.io.serialize", "save": "lamina.io.serialize",
               "vmap": "lamina.func"}


def __getattr__(name: str) -> object:
    if name in _LAZY_MODULES:
        return _importlib.import_module(f"lamina.{name}")
    if name in _LAZY_NAMES:
        value = getattr(_importlib.import_module(_LAZY_NAMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lamina' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_MODULES) | set(_LAZY_NAMES))


__all__ = [
    "DTypeError",
    "OutOfMemoryError",
    "DataError",
    "Function",
    "Generator",
    "GradcheckError",
    "ShapeError",
    "Size",
    "Tensor",
    "Variable",
    "__version__",
    "accelerator",
    "amp",
    "arange",
    "as_tensor",
    "autocast",
    "autograd",
    "backends",
    "backward",
    "backward_stream",
    "bernoulli",
    "bool",
    "bfloat16",
    "cdouble",
    "cfloat",
    "chalf",
    "complex32",
    "complex64",
    "complex128",
    "dtype",
    "e",
    "inf",
    "nan",
    "newaxis",
    "pi",
    "compile",
    "cuda",
    "device",
    "double",
    "empty",
    "empty_like",
    "enable_grad",
    "eye",
    "finfo",
    "from_dlpack",
    "frombuffer",
    "to_dlpack",
    "empty_strided",
    "empty_permuted",
    "float",
    "float16",
    "float32",
    "float64",
    "from_numpy",
    "full",
    "full_like",
    "functions",
    "get_default_dtype",
    "get_float32_matmul_precision",
    "get_num_threads",
    "get_rng_state",
    "gradcheck",
    "half",
    "iinfo",
    "inference_mode",
    "initial_seed",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "linspace",
    "logspace",
    "long",
    "manual_seed",
    "multinomial",
    "nn",
    "no_grad",
    "normal",
    "ones",
    "ones_like",
    "optim",
    "parallel",
    "promote_types",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "return_types",
    "runtime",
    "seed",
    "set_default_dtype",
    "set_float32_matmul_precision",
    "set_grad_enabled",
    "set_num_threads",
    "set_rng_state",
    "short",
    "strided",
    "layout",
    "memory_format",
    "contiguous_format",
    "preserve_format",
    "channels_last",
    "channels_last_3d",
    "tensor",
    "uint8",
    "utils",
    "zeros",
    "zeros_like",
    *_tensor_functions,
    *_legacy_tensors,
    *_nn_functions,
    *_nn_cells,
    *_misc_functions,
    *_window_functions,
    "gradient",
    "trapz",
    "are_deterministic_algorithms_enabled",
    "asarray",
    "corrcoef",
    "cov",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "bucketize",
    "can_cast",
    "cartesian_prod",
    "cdist",
    "column_stack",
    "combinations",
    "cosine_similarity",
    "diagflat",
    "dstack",
    "isin",
    "meshgrid",
    "pdist",
    "result_type",
    "row_stack",
    "searchsorted",
    "set_printoptions",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "set_anomaly_enabled",
    "std_mean",
    "tensordot",
    "trapezoid",
    "use_deterministic_algorithms",
    "get_deterministic_debug_mode",
    "set_deterministic_debug_mode",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_warn_always",
    "is_warn_always_enabled",
    "set_flush_denormal",
    "var_mean",
    *_LAZY_MODULES,
    *_LAZY_NAMES,
]
