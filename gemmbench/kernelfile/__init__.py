"""A user's own kernel file: its header parsed into a KernelSpec (header),
the arithmetic its geometry lines use (expr)."""

from .expr import Expr, ExprError, parse_dims
from .header import (KernelFileError, UserKernel, check_overrides, check_shapes, compile_summary, device_of, load,
                     parse_overrides)

__all__ = ["Expr", "ExprError", "KernelFileError", "UserKernel", "check_overrides", "check_shapes",
           "compile_summary", "device_of", "load", "parse_dims", "parse_overrides"]
