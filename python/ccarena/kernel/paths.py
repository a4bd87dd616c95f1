"""Where the sources, the build cache and the ownership records live.

Each location can be overridden from the environment (tests use this):

    CCARENA_CC_DIR      the cc/ directory (default: <repo>/cc)
    CCARENA_BPF_CACHE   built objects and vmlinux.h (default: <repo>/target/bpf/kernel)
    CCARENA_KERNEL_RUN  ownership records and the lock (default: /run/ccarena/kernel)
"""

from __future__ import annotations

import os
from pathlib import Path

# python/ccarena/kernel/paths.py -> the repository root.
_REPO = Path(__file__).resolve().parents[3]


def cc_dir() -> Path:
    return Path(os.environ.get("CCARENA_CC_DIR") or _REPO / "cc")


def cache_dir() -> Path:
    return Path(os.environ.get("CCARENA_BPF_CACHE") or _REPO / "target" / "bpf" / "kernel")


def run_dir() -> Path:
    return Path(os.environ.get("CCARENA_KERNEL_RUN") or "/run/ccarena/kernel")


AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
DEFAULT = Path("/proc/sys/net/ipv4/tcp_congestion_control")
VMLINUX_BTF = Path("/sys/kernel/btf/vmlinux")
