"""``ccarena kernel load NAME | unload NAME | list`` for operators.

Refusals (not root, no BTF, kernel too old, tools missing, unknown name,
verifier rejection, ...) are one line ``ccarena: error: ...`` and exit 2;
a verifier rejection adds the last lines of the verifier log under it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .errors import KernelError

EXIT_REFUSED = 2
#: How a refusal names a --param value: ``--param alpha: ...``.
PARAM_FIELD = "--param "


def run(args: argparse.Namespace) -> int:
    try:
        if args.kernel_command == "load":
            return _load(args.name, args.params)
        if args.kernel_command == "unload":
            return _unload(args.name)
        if args.kernel_command == "list":
            return _list()
    except KernelError as err:
        print(f"ccarena: error: {err}", file=sys.stderr)
        for line in err.details:
            print(f"  {line}", file=sys.stderr)
        return EXIT_REFUSED
    print("ccarena: error: kernel: expected load NAME, unload NAME or list (see ccarena kernel --help)", file=sys.stderr)
    return EXIT_REFUSED


def _parse_params(items: list[str]) -> dict[str, Any]:
    """``--param KEY=VALUE`` as a scenario's ``params`` table: the value read
    as ``--set`` reads one (``3ms``, ``1%``, ``0.01``, ``1``); the names,
    units and checks are the scenario's (ccarena.scenario.resolve_params)."""
    from ..scenario import parse_override

    return dict(parse_override(item, option="--param") for item in items)


def _load(name: str, param_items: list[str]) -> int:
    from .session import load

    loaded = load(name, _parse_params(param_items) or None, field_prefix=PARAM_FIELD)
    kname = loaded.kernel_name
    if loaded.action == "registered":
        settings = f" with {loaded.target.settings()}" if loaded.target.changed else ""
        print(f"ccarena: registered {kname} (cc/{loaded.target.source}.c{settings}, verified by the kernel, "
              f"map id {loaded.map_id})")
    else:
        print(f"ccarena: {kname} is already registered; kept it")
    print(
        "\n".join(
            [
                "select it:",
                f"  system-wide:  sysctl -w net.ipv4.tcp_congestion_control={kname}",
                f"  one route:    ip route change <prefix> via <gw> dev <dev> congctl {kname}",
                f'  one socket:   setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "{kname}", {len(kname)})',
                f"  (unprivileged programs also need it in net.ipv4.tcp_allowed_congestion_control)",
                "remove it:",
                f"  ccarena kernel unload {kname if loaded.target.params else name}",
            ]
        )
    )
    return 0


def _unload(name: str) -> int:
    from .session import unload

    done = unload(name)
    print(f"ccarena: unregistered {done.kernel_name}")
    if done.sockets:
        print(
            f"note: {done.sockets} socket(s) still run {done.kernel_name}; they keep it until they close, "
            "then the kernel frees it"
        )
    if done.users:
        pids = ", ".join(str(pid) for pid, _ in done.users)
        print(f"note: it was in use by ccarena process(es) {pids}; their new sockets can no longer select it")
    return 0


def _list() -> int:
    from .status import status

    st = status()
    rows = [("name", "kernel name", "registered", "by")]
    rows += [(r.name, r.kernel_name, "yes" if r.registered else "no", r.by) for r in st.ours]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print()
    print(f"kernel available: {' '.join(st.available)}")
    print(f"kernel default:   {st.default}")
    return 0
