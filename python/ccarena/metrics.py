"""summary.json: what a run measured, derived from the engine's counters.

Everything here is a pure function of the resolved scenario and the
engine's result, rounded to fixed precision, so that the same scenario and
seed give byte-identical summaries (no timestamps, wall times or paths).
"""

from __future__ import annotations

import json
import math
from typing import Any

from .scenario import ResolvedScenario
from .topology import is_topology
from .topology import summarize as summarize_topology

#: Decimal places kept for every float in summary.json.
DIGITS = 6


def _round(x: float | None) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    value = round(float(x), DIGITS)
    return 0.0 if value == 0 else value  # no "-0.0"


def jain_index(values: list[float]) -> float | None:
    """Jain's fairness index (sum x)^2 / (n sum x^2); None if all zero."""
    squares = sum(v * v for v in values)
    if not values or squares == 0:
        return None
    return sum(values) ** 2 / (len(values) * squares)


def summarize(scenario: ResolvedScenario, raw: dict[str, Any]) -> dict[str, Any]:
    """The summary.json document for one run."""
    cfg = scenario.config
    window_s = (cfg["measure_to_ns"] - cfg["measure_from_ns"]) / 1e9
    goodputs = [f["delivered_bytes_window"] * 8 / window_s / 1e6 for f in raw["flows"]]
    total = sum(goodputs)

    # ECN counts appear once a flow negotiates ECN, so that other scenarios'
    # summaries stay as they were.
    uses_ecn = any(f.get("ecn", "off") != "off" for f in [*cfg["flows"], *cfg.get("workloads", [])])
    flows = []
    for i, (flow_cfg, res, goodput) in enumerate(zip(cfg["flows"], raw["flows"], goodputs, strict=True)):
        flows.append(
            {
                "index": i,
                "cc": flow_cfg["cc"],
                "rtt_ms": _round(flow_cfg["rtt_ns"] / 1e6),
                "start_s": _round(flow_cfg["start_ns"] / 1e9),
                "goodput_mbps": _round(goodput),
                # No delivery in the window at all: no share to speak of.
                "share": _round(goodput / total) if total > 0 else None,
                "retransmits": res["retransmits_window"],
                "retransmits_total": res["retransmits_total"],
                "rtos": res["rto_count"],
                "rtt_mean_ms": _round(res["rtt_mean_us"] / 1e3 if res["rtt_mean_us"] is not None else None),
                "rtt_p95_ms": _round(res["rtt_p95_us"] / 1e3 if res["rtt_p95_us"] is not None else None),
            }
        )
        if "size_bytes" in flow_cfg:
            # A sized flow: its completion time (None if it did not complete).
            fct_ns, alone_ns = res.get("fct_ns"), res.get("fct_alone_ns")
            flows[-1].update(size_bytes=flow_cfg["size_bytes"],
                             fct_ms=_round(fct_ns / 1e6) if fct_ns is not None else None,
                             fct_alone_ms=_round(alone_ns / 1e6) if alone_ns is not None else None,
                             slowdown=_round(fct_ns / alone_ns) if fct_ns is not None and alone_ns else None)
        if uses_ecn:
            # Over the whole run (None where an engine cannot see it).
            flows[-1].update(
                ecn=flow_cfg.get("ecn", "off"),
                ce_marked=res.get("ce_marked"),
                ce_received=res.get("ce_received"),
                delivered_ce=res.get("delivered_ce"),
            )

    link = raw["link"]
    capacity = link["capacity_bytes_window"]

    def ms(key: str) -> float | None:
        value = link[key]
        return _round(value / 1e3) if value is not None else None

    conservation = {
        "buffer_bytes": cfg["bottleneck"]["buffer_bytes"],
        "max_queue_bytes": link["max_queue_bytes"],
        "flows": [
            {
                "index": i,
                "sent": f["sent_segments"],
                "arrived": f["arrived_segments"],
                "dropped": f["dropped_segments"],
                "in_network": f["in_network_segments"],
                # None where the engine counts no segments (a live run's iperf3).
                "balanced": None if f["sent_segments"] is None else f["sent_segments"]
                == f["arrived_segments"] + f["dropped_segments"] + f["in_network_segments"],
            }
            for i, f in enumerate(raw["flows"])
        ],
    }

    extra: dict[str, Any] = {}
    if cfg.get("workloads"):
        # Only with workloads, so that other summaries stay as they were.
        from .workload_results import summarize as summarize_workloads

        extra["workloads"] = summarize_workloads(cfg, scenario.human, raw, _round)
    topology: dict[str, Any] = {}
    if is_topology(cfg):
        # Only for a topology, so that the dumbbell's summaries stay as
        # they were; the top level keeps describing link 0.
        per_flow, links = summarize_topology(cfg, scenario.human, raw, goodputs, _round)
        for entry, more in zip(flows, per_flow, strict=True):
            entry.update(more)
        topology["links"] = links

    return {
        "engine": "sim",
        "scenario": {"name": scenario.name, "input": scenario.human, "config": _recorded(cfg)},
        "window": {"from_s": _round(cfg["measure_from_ns"] / 1e9), "to_s": _round(cfg["measure_to_ns"] / 1e9)},
        "flows": flows,
        "jain": _round(jain_index(goodputs)),
        # Wire bytes the bottleneck sent / what it could have sent (not
        # goodput / rate: headers and retransmits count as used capacity).
        "utilization": _round(link["tx_bytes_window"] / capacity if capacity else None),
        "goodput_total_mbps": _round(total),
        "queue_delay_ms": {
            "mean": ms("queue_delay_mean_us"),
            "p50": ms("queue_delay_p50_us"),
            "p95": ms("queue_delay_p95_us"),
            "p99": ms("queue_delay_p99_us"),
        },
        "drops": link["drops_window"],
        **({"marks": link.get("marks_window")} if uses_ecn else {}),
        "bottleneck_packets": link["tx_packets_total"],
        "conservation": conservation,
        **topology,
        **extra,
    }


def dumps(summary: dict[str, Any]) -> str:
    """Canonical JSON text: sorted keys, two-space indent, trailing newline."""
    return json.dumps(summary, sort_keys=True, indent=2, allow_nan=False) + "\n"


def _recorded(cfg: dict[str, Any]) -> dict[str, Any]:
    """The config as summary.json records it (a link trace by its size and
    digest, not its every instant)."""
    trace = cfg["bottleneck"].get("trace")
    if trace is None:
        return cfg
    from .link_trace import summary_of

    return {**cfg, "bottleneck": {**cfg["bottleneck"], "trace": summary_of(trace)}}
