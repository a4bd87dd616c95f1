"""The kernel side: register / unregister a struct_ops object with bpftool
and read what the kernel has.

Lifetime (legacy ``.struct_ops`` section, see build.py): ``bpftool
struct_ops register OBJ`` verifies the programs, updates the map, which
registers the tcp_congestion_ops, and exits; the registration holds the map
alive. ``bpftool struct_ops unregister id N`` removes the name from the
kernel's list at once. Sockets already using it are not disturbed: each
holds a reference to the map (the map's refcount is 1 + sockets), keeps
running the programs and the kernel frees them when the last one closes --
the kernel never answers EBUSY. While that happens ``bpftool struct_ops
list`` still shows the map (state TOBEFREE), so "is it registered" is
answered by tcp_available_congestion_control, and unregistering goes by the
id of the map in state INUSE.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from . import paths, prereqs
from .errors import KernelError

_TIMEOUT_S = 120
_INUSE = "BPF_STRUCT_OPS_STATE_INUSE"


def available() -> list[str]:
    """Congestion controls the kernel offers now (all namespaces share it)."""
    return paths.AVAILABLE.read_text().split()


def default_cc() -> str:
    """This network namespace's default (net.ipv4.tcp_congestion_control)."""
    return paths.DEFAULT.read_text().strip()


@dataclass(frozen=True)
class Map:
    id: int
    name: str
    state: str  # BPF_STRUCT_OPS_STATE_INUSE, ..._TOBEFREE
    sockets: int  # sockets holding it (refcount - 1 while registered)


def maps(kernel_name: str) -> list[Map]:
    """struct_ops maps named kernel_name (registered or lingering)."""
    res = _bpftool("-j", "struct_ops", "dump", "name", kernel_name)
    if res.returncode != 0 or not res.stdout.strip():
        return []
    found: list[Map] = []
    current: dict[str, object] | None = None
    for item in json.loads(res.stdout):
        if "bpf_map_info" in item:
            current = item["bpf_map_info"]
            continue
        value = item.get("bpf_struct_ops_tcp_congestion_ops")
        if current is None or value is None:
            continue
        common = value.get("common", {})
        refs = int(common.get("refcnt", {}).get("refs", {}).get("counter", 1))
        state = str(common.get("state", ""))
        live = refs - 1 if state == _INUSE else refs
        found.append(Map(id=int(current["id"]), name=str(current["name"]), state=state, sockets=max(live, 0)))
        current = None
    return found


def register(obj: Path, kernel_name: str, log: Path) -> int | None:
    """Register obj; the id of its map, or None if another process
    registered the same name meanwhile. KernelError with the end of the
    verifier log if the kernel rejects it.

    bpftool writes its output to ``log`` (not a pipe), so that if this
    process is killed while bpftool runs (bpftool, in its own session,
    finishes), the map id it registered can still be read there:
    :func:`logged_map_id`."""
    with open(log, "w") as out:
        res = _bpftool("struct_ops", "register", str(obj), stdout=out)
    if res.returncode == 0:
        return logged_map_id(log)
    text = log.read_text(errors="replace")
    if kernel_name in available():
        return None
    prog, reason, lines = verifier_excerpt(text)
    if lines:
        where = f" (program '{prog}')" if prog else ""
        raise KernelError(f"the kernel's verifier rejected {kernel_name}{where}: {reason}", lines)
    lines = [line for line in text.strip().splitlines() if line.strip()]
    raise KernelError(
        f"bpftool could not register {kernel_name}: {lines[-1] if lines else f'exit {res.returncode}'}", lines[-6:-1]
    )


def logged_map_id(log: Path) -> int | None:
    """The map id in the output of a ``register`` (its ``log``), if it got
    that far."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    m = re.search(r"Registered tcp_congestion_ops \S+ id (\d+)", text)
    return int(m.group(1)) if m else None


def registered_ids(kernel_name: str) -> list[int]:
    """Ids of the struct_ops maps that register kernel_name now (state
    INUSE: not those lingering until their last socket closes)."""
    return [m.id for m in maps(kernel_name) if m.state == _INUSE]


def unregister(kernel_name: str, map_id: int | None = None) -> int:
    """Unregister kernel_name (only if its map is ``map_id``, when given);
    returns how many sockets still run it (they keep it until they close).
    KernelError if it is not registered (by that map)."""
    live = [m for m in maps(kernel_name) if m.state == _INUSE and map_id in (None, m.id)]
    if not live:
        if map_id is not None:
            raise KernelError(f"{kernel_name} is not registered by map id {map_id}")
        if kernel_name in available():
            raise KernelError(f"{kernel_name} is registered but bpftool cannot find its struct_ops map")
        raise KernelError(f"{kernel_name} is not registered")
    sockets = 0
    for m in live:
        res = _bpftool("struct_ops", "unregister", "id", str(m.id))
        if res.returncode != 0 and kernel_name in available():
            detail = " ".join(res.stderr.split()) or f"exit {res.returncode}"
            raise KernelError(f"could not unregister {kernel_name} (map id {m.id}): {detail}")
        sockets += m.sockets
    return sockets


def verifier_excerpt(stderr: str, keep: int = 6) -> tuple[str, str, list[str]]:
    """(program, reason, last lines) of the first verifier log in libbpf's
    output; reason is the log's last meaningful line. Empty if none."""
    m = re.search(
        r"prog '([^']+)': -- BEGIN PROG LOAD LOG --\n(.*?)-- END PROG LOAD LOG --", stderr, flags=re.DOTALL
    )
    if not m:
        return "", "", []
    lines = [
        line.rstrip()
        for line in m.group(2).splitlines()
        if line.strip() and not line.startswith(("processed ", "verification time", "stack depth"))
    ]
    if not lines:
        return m.group(1), "rejected", []
    tail = lines[-keep:]
    # The verifier annotates instructions with "; <source> @ file.c:line":
    # keep the last such line so the excerpt says where in the C it failed.
    source = [line for line in lines[: len(lines) - keep] if line.startswith("; ")]
    if source and not any(line.startswith("; ") for line in tail):
        tail = [source[-1], *tail[1:]]
    return m.group(1), lines[-1], tail


def _bpftool(*args: str, stdout: IO[str] | None = None) -> subprocess.CompletedProcess[str]:
    """bpftool ARGS; its output captured, or with ``stdout`` written there
    (stderr too)."""
    streams: dict[str, Any] = (
        {"capture_output": True} if stdout is None else {"stdout": stdout, "stderr": subprocess.STDOUT}
    )
    try:
        return subprocess.run(
            [prereqs.tool("bpftool"), *args], text=True, timeout=_TIMEOUT_S, check=False,
            # Its own session: a Ctrl-C at the terminal reaches only ccarena,
            # which then unregisters in order; it must not kill the bpftool
            # doing that (or registering) half-way.
            start_new_session=True,
            **streams,
        )
    except FileNotFoundError:
        raise KernelError("bpftool not found (Debian: apt-get install bpftool; or `make deps`)") from None
