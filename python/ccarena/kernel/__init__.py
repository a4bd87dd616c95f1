"""Our congestion controls in the running kernel, as BPF struct_ops.

    >>> from ccarena import kernel
    >>> kernel.ensure_available("bbr")            # the kernel's own
    'bbr'
    >>> with kernel.registered(["bbr@ccarena", "bbq"]) as regs:
    ...     regs["bbq"]                           # cc/bbq.c, registered
    'cc_bbq'
    ... # unregistered here (unless it was loaded before the block)

See docs/kernel.md. Everything that registers needs root, kernel BTF,
Linux >= 6.10, clang and bpftool; refusals raise KernelError (one line,
plus ``details``).
"""

from .build import build
from .errors import KernelError
from .names import KERNEL_BUILTINS, Target, our_algorithms, resolve
from .session import Loaded, Registrations, Unloaded, cleanup_stale, ensure_available, load, registered, unload
from .status import Row, Status, status

__all__ = [
    "KERNEL_BUILTINS",
    "KernelError",
    "Loaded",
    "Registrations",
    "Row",
    "Status",
    "Target",
    "Unloaded",
    "build",
    "cleanup_stale",
    "ensure_available",
    "load",
    "our_algorithms",
    "registered",
    "resolve",
    "status",
    "unload",
]
