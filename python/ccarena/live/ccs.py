"""Which kernel congestion control each flow of a live run uses.

A name the kernel has (``cubic``, ``reno``, ``bbr``, ...: its
tcp_available_congestion_control) is the kernel's own. ``NAME@ccarena``,
or a name only ccarena has (``bbq``), is our cc/NAME.c, registered as BPF
struct_ops for the run by ``ccarena.kernel`` and unregistered
afterwards.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from ..errors import ScenarioError

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
SUFFIX = "@ccarena"


def kernel_ccs() -> set[str]:
    try:
        return set(AVAILABLE.read_text().split())
    except OSError:
        return set()


def known_names(sim_ccs: set[str]) -> set[str]:
    """Every name a live scenario may use."""
    return kernel_ccs() | sim_ccs | {name + SUFFIX for name in sim_ccs}


def is_kernel_cc(cc: str) -> bool:
    """Is ``cc`` the kernel's own algorithm (not one of ours via BPF)?"""
    return not cc.endswith(SUFFIX) and cc in kernel_ccs()


def cc_key(flow: dict) -> tuple[str, tuple[int, ...]]:
    """A resolved flow's algorithm: its name and full parameter vector."""
    return flow["cc"], tuple(flow.get("params") or ())


def sim_name(cc: str) -> str:
    """The simulator's name for a live cc (``bbr@ccarena`` -> ``bbr``)."""
    return cc.removesuffix(SUFFIX)


def resolve_kernel_names(
    ccs: list[tuple[str, tuple[int, ...]]], stack: ExitStack
) -> dict[tuple[str, tuple[int, ...]], str]:
    """(scenario name, parameter vector) -> the name to pass to
    TCP_CONGESTION. Ours are registered now (ccarena.kernel.registered;
    non-default parameters build a variant ``cc_<name>_<hash>``) and
    unregistered when ``stack`` closes."""
    mapping: dict[tuple[str, tuple[int, ...]], str] = {}
    ours: dict[tuple[str, tuple[int, ...]], int] = {}  # -> first flow using it
    for i, key in enumerate(ccs):
        if key in mapping or key in ours:
            continue
        if is_kernel_cc(key[0]):
            mapping[key] = key[0]
        else:
            ours[key] = i
    if not ours:
        return mapping
    first = f"flow[{min(ours.values())}].cc"
    try:
        from .. import kernel
    except ImportError:
        raise ScenarioError(
            first, f"'{next(iter(ours))[0]}' is not a kernel congestion control here and ccarena's BPF loader "
            f"(ccarena.kernel) is not available (kernel has: {', '.join(sorted(kernel_ccs()))})"
        ) from None
    try:
        regs = stack.enter_context(kernel.registered([(cc, params or None) for cc, params in ours]))
        for cc, params in ours:
            mapping[(cc, params)] = regs.ensure_available(cc, params or None)
    except kernel.KernelError as err:
        raise ScenarioError(first, str(err).splitlines()[0] if str(err) else "cannot register") from None
    return mapping


def cleanup_registrations() -> list[str]:
    """Unregister BPF algorithms that crashed runs left registered."""
    try:
        from .. import kernel
    except ImportError:
        return []
    try:
        return kernel.cleanup_stale()
    except kernel.KernelError as err:
        raise ScenarioError("live", f"cleaning up BPF registrations: {err}") from None
