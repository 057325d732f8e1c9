"""Execution plans: trace a step once, then run it as an ordered list of kernels over
preallocated buffers (`lamina.plan.compile`)."""

from lamina.plan.plan import Plan, compile
from lamina.plan.trace import TraceError

__all__ = ["Plan", "TraceError", "compile"]
