"""Sized flows and [[workload]]s in the live engine: which connections the
sender agent opens when, how the receiver tells them apart, and their
records shaped as the simulator's (crates/sim/src/result.rs,
WorkloadFlows), so that workload_results.py serves both engines.

A workload's arrivals are the simulator's own: the times and sizes its
event loop draws from the run's seed (``_core.workload_arrivals``, one
definition in crates/sim/src/workload.rs). At each the sender opens a
connection from the workload's address (the delay line's endpoint for the
workload: its RTT and path) with the source port ``SOURCE_PORT_BASE`` +
the flow's number, by which the receiver knows it, and writes the flow's
bytes in whole segments, as the simulator's sender does; an arrival that
finds ``max_active`` of the workload's flows in progress (written and not
yet all acknowledged) is refused and counted, as in the simulator.

A flow's completion time runs from the moment its connection is
established to the moment its receiver has every byte, as in the
simulator, whose flows count from the end of their handshake
(crates/sim/src/flow_table.rs, Flow::fct_ns): the handshake's round trip
is left out of both. The time alone
that a slowdown divides by is the simulator's (api.py, workload_results.py:
the same flow alone on the empty path); the live engine does not run
each size alone.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ScenarioError
from ..workload_results import NOT_DONE

#: Workload flow k connects from this source port + k.
SOURCE_PORT_BASE = 10_000
#: So the ports stay below 65536 (and one run's records in the agents' memory).
MAX_WORKLOAD_FLOWS = 50_000


def payload_bytes(size_bytes: int, mss: int) -> int:
    """What a sized flow's sender writes: its size in whole segments, as
    the simulator's sender sends it (crates/sim/src/flow_table.rs,
    complete_at_bytes)."""
    return -(-size_bytes // mss) * mss


def schedule(cfg: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    """Every workload arrival of the run as (workload, arrival ns, size
    bytes, bytes to write), in arrival order (the flow's number is its
    index). Refuses more than MAX_WORKLOAD_FLOWS."""
    from .. import _core

    text = json.dumps(cfg)
    flows = []
    for w in range(len(cfg.get("workloads") or [])):
        times, sizes = _core.workload_arrivals(text, w)
        flows += [(w, t, size, payload_bytes(size, cfg["mss"])) for t, size in zip(times, sizes, strict=True)]
    if len(flows) > MAX_WORKLOAD_FLOWS:
        raise ScenarioError("workload", f"{len(flows)} arrivals; the live engine opens at most {MAX_WORKLOAD_FLOWS} "
                                        "workload connections in a run (shorten it or lower the load)")
    return sorted(flows, key=lambda f: (f[1], f[0]))


def records(flows: list[tuple[int, int, int, int]], tx: dict[str, Any], rx: dict[str, Any],
            n_workloads: int) -> tuple[list[dict[str, int]], dict[str, Any]]:
    """(per workload its counts, the started flows' records as numpy
    columns) from the agents' reports: the sender's (``started``: not
    refused; ``connected_ns``, None if the connection was not established;
    ``retransmits``; per workload ``refused`` and ``peak_active``) and the
    receiver's (``workload_done_ns``: when it had every byte, None if not
    by the run's end)."""
    import numpy as np

    sent, got = tx["workload"], rx["workload_done_ns"]
    started = [k for k in range(len(flows)) if sent["started"][k]]

    def fct(k: int) -> int:
        done, connected = got[k], sent["connected_ns"][k]
        return NOT_DONE if done is None or connected is None else max(0, done - connected)

    columns = {
        "workload": np.asarray([flows[k][0] for k in started], dtype=np.uint32),
        "start_ns": np.asarray([flows[k][1] for k in started], dtype=np.uint64),
        "size_bytes": np.asarray([flows[k][2] for k in started], dtype=np.uint64),
        "fct_ns": np.asarray([fct(k) for k in started], dtype=np.uint64),
        "retransmits": np.asarray([sent["retransmits"][k] for k in started], dtype=np.uint64),
    }
    counts = [{"arrived": sum(1 for f in flows if f[0] == w), "refused": sent["refused"][w],
               "peak_active": sent["peak_active"][w]} for w in range(n_workloads)]
    return counts, columns
