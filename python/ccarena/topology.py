"""What a topology run adds to summary.json: each link's figures, each
flow's route and base RTT, and the max-min fair allocation the flows'
goodputs are compared with.

A topology is a scenario with [[link]] tables (docs/scenario-format.md,
"Topologies"); the resolved config then gives each flow a ``path`` (and
maybe a ``reverse_path``) of link indices, link 0 being ``bottleneck`` and
link k ``links[k-1]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import units

#: Max-min's water-filling stops raising flows through a link whose
#: capacity left is below this share of it (float rounding).
_SATURATED = 1e-9


def is_topology(cfg: Mapping[str, Any]) -> bool:
    """Whether a resolved config is a topology (its flows or its
    workloads, which may be all its traffic, have paths)."""
    return any("path" in f for f in [*cfg["flows"], *cfg.get("workloads", [])])


def link_configs(cfg: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every link's config, by index (the dumbbell: its bottleneck)."""
    return [cfg["bottleneck"], *cfg.get("links", [])]


def base_rtt_ns(delays: Sequence[int], flow: Mapping[str, Any]) -> int:
    """A resolved flow's base RTT, ns: its hosts' RTT and its links'
    ``delays`` both ways (the data path's again when it has no reverse
    path: its ACKs then take an unqueued mirror of it). The engine's rule
    (crates/sim/src/topology.rs), the one definition."""
    from . import _core

    return _core.base_rtt_ns(flow["rtt_ns"], list(delays), flow["path"], flow.get("reverse_path"))


def max_min(capacities: Sequence[float], paths: Sequence[Sequence[int] | None]) -> list[float | None]:
    """The max-min fair rates of flows over links (Bertsekas and Gallager,
    "Data Networks", 6.5.2: progressive filling). ``capacities`` per link;
    ``paths[i]`` the links flow i crosses, or None for a flow left out
    (its rate is None). Every flow's rate rises together until a link is
    full; the flows through it keep their rate, the others rise on."""
    rates: list[float | None] = [None if p is None else 0.0 for p in paths]
    left = list(capacities)
    rising = {i for i, p in enumerate(paths) if p}
    while rising:
        crossing = [[i for i in rising if k in paths[i]] for k in range(len(left))]  # type: ignore[operator]
        step = min(left[k] / len(fl) for k, fl in enumerate(crossing) if fl)
        for i in rising:
            rates[i] += step  # type: ignore[operator]
        full = set()
        for k, fl in enumerate(crossing):
            left[k] -= step * len(fl)
            if fl and left[k] <= _SATURATED * capacities[k]:
                full.update(fl)
        rising -= full
    return rates


def summarize(cfg: Mapping[str, Any], human: Mapping[str, Any], raw: Mapping[str, Any], goodputs: Sequence[float],
              rounded: Callable[[float | None], float | None]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(per-flow additions, per-link entries) of a topology's summary.json.

    Each flow gains its route by name, its base RTT (its hosts' RTT plus
    its links' delays both ways), the ACKs its reverse path dropped, and
    its max-min fair goodput (``maxmin_mbps``: the window's capacity of
    each link in goodput, MSS / wire bytes of the wire rate, shared by the
    bulk flows active in the window; sized flows and those outside the
    window get None) with its goodput over that (``of_maxmin``). Each link
    gets what the top level says of the bottleneck."""
    names = [link["name"] for link in human["link"]]
    configs = link_configs(cfg)
    results = [raw["link"], *raw.get("links", [])]
    delays = [link.get("delay_ns", 0) for link in configs]
    window_s = (cfg["measure_to_ns"] - cfg["measure_from_ns"]) / 1e9
    payload = units.MSS_BYTES / (units.MSS_BYTES + units.WIRE_OVERHEAD_BYTES)
    capacities = [r["capacity_bytes_window"] * 8 / window_s / 1e6 * payload for r in results]

    def bulk_in_window(f: Mapping[str, Any]) -> bool:
        stop = f.get("stop_ns")
        return ("size_bytes" not in f and f["start_ns"] < cfg["measure_to_ns"]
                and (stop is None or stop > cfg["measure_from_ns"]))

    fair = max_min(capacities, [f["path"] if bulk_in_window(f) else None for f in cfg["flows"]])
    flows = []
    for f, res, goodput, share in zip(cfg["flows"], raw["flows"], goodputs, fair, strict=True):
        entry: dict[str, Any] = {
            "path": [names[k] for k in f["path"]],
            "base_rtt_ms": rounded(base_rtt_ns(delays, f) / 1e6),
            "maxmin_mbps": rounded(share),
            "of_maxmin": rounded(goodput / share) if share else None,
        }
        if "reverse_path" in f:
            entry.update(reverse=[names[k] for k in f["reverse_path"]], acks_dropped=res.get("acks_dropped", 0))
        flows.append(entry)

    def ms(link: Mapping[str, Any], key: str) -> float | None:
        return rounded(link[key] / 1e3) if link[key] is not None else None

    links = []
    for k, (name, res) in enumerate(zip(names, results, strict=True)):
        capacity = res["capacity_bytes_window"]
        links.append({
            "index": k,
            "name": name,
            "utilization": rounded(res["tx_bytes_window"] / capacity if capacity else None),
            "queue_delay_ms": {p: ms(res, f"queue_delay_{p}_us") for p in ("mean", "p50", "p95", "p99")},
            "drops": res["drops_window"],
            "max_queue_bytes": res["max_queue_bytes"],
            "packets": res["tx_packets_total"],
        })
    return flows, links
