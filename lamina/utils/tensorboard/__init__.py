"""`lamina.utils.tensorboard`, as `torch.utils.tensorboard`: SummaryWriter writes
TensorBoard event files (through the `tensorboard` package: `pip install
'lamina[tensorboard]'`).

Examples:
    >>> from lamina.utils.tensorboard import SummaryWriter
    >>> with SummaryWriter(tmp_dir) as writer:
    ...     writer.add_scalar("loss", 0.5, global_step=1)
"""

from lamina.utils.tensorboard.writer import SummaryWriter

__all__ = ["SummaryWriter"]
