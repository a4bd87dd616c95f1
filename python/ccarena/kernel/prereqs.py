"""What loading a BPF congestion control needs, checked up front so the
user gets one line instead of a libbpf error.

Order matters: the cheapest and most fundamental refusal comes first
(root, then BTF, then the kernel version, then the tools).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
from pathlib import Path

from . import paths
from .errors import KernelError

# cong_control(sk, ack, flag, rs) -- the signature cc/*.c implement -- is
# Linux 6.10's (commit "tcp: add new args to cong_control").
MIN_KERNEL = (6, 10)
LIBBPF_HEADER = Path("/usr/include/bpf/bpf_helpers.h")


def is_root() -> bool:
    """Tests monkeypatch this to simulate an unprivileged user."""
    return os.geteuid() == 0


def kernel_release() -> str:
    """Tests monkeypatch this to simulate an old kernel."""
    return platform.release()


def kernel_version(release: str) -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", release)
    if not m:
        raise KernelError(f"cannot read the kernel version from '{release}'")
    return int(m.group(1)), int(m.group(2))


def tool(name: str) -> str:
    """Path of clang / bpftool; CCARENA_CLANG / CCARENA_BPFTOOL override."""
    return os.environ.get(f"CCARENA_{name.upper()}") or name


def require_root(action: str) -> None:
    if not is_root():
        raise KernelError(f"{action} needs root (CAP_BPF and CAP_NET_ADMIN); run it with sudo")


def require_kernel() -> None:
    if not paths.VMLINUX_BTF.exists():
        raise KernelError(
            f"this kernel has no BTF ({paths.VMLINUX_BTF}); BPF congestion controls need CONFIG_DEBUG_INFO_BTF=y"
        )
    release = kernel_release()
    if kernel_version(release) < MIN_KERNEL:
        raise KernelError(
            f"kernel {release} is too old: ccarena's congestion controls use the "
            f"cong_control(sk, ack, flag, rs) of Linux >= {MIN_KERNEL[0]}.{MIN_KERNEL[1]}"
        )


def require_tools(*names: str) -> None:
    for name in names:
        if shutil.which(tool(name)) is None:
            pkg = {"clang": "clang", "bpftool": "bpftool"}.get(name, name)
            raise KernelError(f"{name} not found (Debian: apt-get install {pkg}; or `make deps`)")
    if "clang" in names and not LIBBPF_HEADER.exists():
        raise KernelError(f"libbpf headers not found ({LIBBPF_HEADER}; Debian: apt-get install libbpf-dev)")


def require_all(action: str) -> None:
    """Everything `kernel load` needs: root, BTF, kernel >= 6.10, clang, bpftool."""
    require_root(action)
    require_kernel()
    require_tools("clang", "bpftool")
