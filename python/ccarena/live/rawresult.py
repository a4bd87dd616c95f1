"""The live run's measurements, shaped like the simulator's raw result
(crates/sim/src/result.rs), so that metrics.summarize, tables.py and
plots.py serve both engines.

What the kernel cannot tell us is approximated, and documented in
docs/live.md: RTT statistics come from the sender's smoothed RTT sampled
per tick (the simulator uses every ACK's sample); with the kernel's
bottleneck, queueing delay is the backlog / rate at each tick (not
per-packet sojourn) and per-flow queue occupancy is not available (0) --
the userspace bottleneck reports both exactly; conservation counts are TCP_INFO's
data segments out (sender) and in (receiver) at the end; they are read
after the network drained (agent.py), so a segment that left and did not
arrive was dropped (at the bottleneck or, on a slow host, elsewhere: see
the ``live.losses`` accounting), and only the segments still unacknowledged
when the drain timed out count as in_network. With iperf3 as the
application (iperf3.py) the samples are its interval reports: what they
lack is null, and there are no segment counts (null conservation).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..cc_modes import DRAIN, PROBE_BW, PROBE_RTT, STARTUP
from ..topology import is_topology, link_configs

#: Columns of a sender sample row (agent.py): cwnd, inflight, pacing bit/s,
#: srtt us, min_rtt us, ca_state, total_retrans, bw estimate bit/s, gains
#: (the kernel's BBR: TCP_CC_INFO; ours: the trace record), delivery rate
#: bit/s (tcpi_delivery_rate), the CC's mode, own variable and
#: ACK-aggregation estimate in packets (ours only).
(_CWND, _INFLIGHT, _PACING, _SRTT, _MINRTT, _CASTATE, _RETRANS, _BW, _PGAIN, _CGAIN, _DELIVERY, _MODE,
 _VAR, _EXTRA_ACKED) = range(14)



#: tcp_bbr.c's bbr_min_rtt_win_sec: no ProbeRTT before the min_rtt filter,
#: stamped at init, first expires.
_MIN_RTT_WINDOW_NS = 10 * 1_000_000_000


def kernel_bbr_mode(pacing_gain: float, cwnd_gain: float, since_start_ns: int = _MIN_RTT_WINDOW_NS) -> int:
    """The kernel BBR's mode from the gains TCP_CC_INFO reports (it has no
    mode field), as Linux's tcp_bbr.c sets them (bbr_update_gains): ProbeRTT
    is the only mode with cwnd_gain 1; Startup paces at high_gain (2.89)
    and Drain at its inverse (0.35); ProbeBW cycles 1.25, 0.75 and 1 with
    cwnd_gain 2. Before BBR's first ACK TCP_CC_INFO reports zeros or
    gains of 1 (measured at 20 ms); ProbeRTT cannot come before the
    min_rtt filter first expires, 10 s after the flow starts: Startup."""
    if cwnd_gain <= 0 or (cwnd_gain <= 1.01 and since_start_ns < _MIN_RTT_WINDOW_NS):
        return STARTUP
    if cwnd_gain <= 1.01:
        return PROBE_RTT
    if pacing_gain > 2.0:
        return STARTUP
    if pacing_gain < 0.5:
        return DRAIN
    return PROBE_BW


def _mode(row: list | None, since_start_ns: int) -> int:
    """A sample's cc_mode: ours report it (trace record); the kernel's BBR
    reports its gains, from which it follows; 0 for anything else."""
    if row is None:
        return 0
    if row[_MODE] is not None:
        return row[_MODE]
    if row[_PGAIN] is not None and row[_CGAIN] is not None:
        return kernel_bbr_mode(row[_PGAIN], row[_CGAIN], since_start_ns)
    return 0


def _float(row: list | None, column: int) -> float | None:
    """A sample's column as a float; None where there is no sample or the
    application did not report it."""
    return None if row is None or row[column] is None else float(row[column])


def _percentile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[index]


def capacity_bytes(cfg: dict[str, Any], from_ns: int, to_ns: int, link_cfg: dict[str, Any] | None = None) -> int:
    """Bytes the link (``link_cfg``; default the bottleneck) could send in
    [from, to): the simulator's own rule (its trace's opportunities, or its
    rate schedule's integral)."""
    from .. import _core

    if link_cfg is not None:
        cfg = {**cfg, "bottleneck": link_cfg}
    return _core.capacity_bytes(json.dumps(cfg), from_ns, to_ns)


def _forward_filled(samples: dict[int, Any], n_ticks: int, zero: Any) -> list[Any]:
    """Index k: the sample at tick k, or the last one before it (a late
    read covers the ticks it missed); ``zero`` at tick 0."""
    at = [zero]
    for k in range(1, n_ticks + 1):
        at.append(samples.get(k, at[-1]))
    return at


def _link_raw(cfg: dict[str, Any], link_cfg: dict[str, Any], link_at: list[dict[str, Any]],
              final: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, list]]:
    """One link's result and telemetry columns from its counters per tick
    (``link_at``, forward-filled) and, with the userspace bottleneck, its
    final statistics (``final``: counters and per-packet sojourn percentiles)."""
    iv = cfg["interval_ns"]
    n_ticks = cfg["duration_ns"] // iv
    k_from = cfg["measure_from_ns"] // iv
    k_to = min(n_ticks, cfg["measure_to_ns"] // iv)
    rate_bps = link_cfg["rate_bps"]
    series: dict[str, list] = {key: [] for key in (
        "t_ns", "queue_bytes", "queue_delay_us", "drops", "rate_bps", "tx_bytes")}
    for k in range(1, n_ticks + 1):
        now, before = link_at[k], link_at[k - 1]
        series["t_ns"].append(k * iv)
        series["queue_bytes"].append(now["backlog"])
        if "sojourn_count" in now and final is not None:  # per-packet sojourn, mean over the interval
            count = now["sojourn_count"] - before["sojourn_count"]
            delay_us = (now["sojourn_sum_ns"] - before["sojourn_sum_ns"]) / count / 1e3 if count > 0 else 0.0
        else:  # the kernel's queue: backlog / rate at the tick
            delay_us = now["backlog"] * 8 / now.get("rate_bps", rate_bps) * 1e6
        series["queue_delay_us"].append(delay_us)
        series["drops"].append(max(0, now["drops"] - before["drops"]))
        series["rate_bps"].append(now.get("rate_bps", rate_bps))
        series["tx_bytes"].append(max(0, now["bytes"] - before["bytes"]))
    delays = sorted(series["queue_delay_us"][k - 1] for k in range(k_from + 1, k_to + 1))
    link = {
        "tx_bytes_window": link_at[k_to]["bytes"] - link_at[k_from]["bytes"],
        "capacity_bytes_window": capacity_bytes(cfg, cfg["measure_from_ns"], cfg["measure_to_ns"], link_cfg),
        "tx_packets_total": link_at[n_ticks]["packets"],
        "drops_window": link_at[k_to]["drops"] - link_at[k_from]["drops"],
        # (the zero sample before the first tick has no marks: a window from 0 s)
        "marks_window": (link_at[k_to]["marks"] - link_at[k_from].get("marks", 0)) if "marks" in link_at[k_to] else None,
        "queue_delay_mean_us": sum(delays) / len(delays) if delays else None,
        "queue_delay_p50_us": _percentile(delays, 0.5),
        "queue_delay_p95_us": _percentile(delays, 0.95),
        "queue_delay_p99_us": _percentile(delays, 0.99),
        "max_queue_bytes": max(s["backlog"] for s in link_at),
    }
    if final is not None:  # every packet's sojourn in the window, and the true maximum
        for key in ("mean", "p50", "p95", "p99"):
            link[f"queue_delay_{key}_us"] = final.get(f"sojourn_{key}_us")
        link["max_queue_bytes"] = final["max_backlog"]
    return link, series


def build_raw(cfg: dict[str, Any], rx: dict[str, Any], tx: dict[str, Any],
              link_samples: dict[int, dict[str, Any]], userspace: dict[str, Any] | None = None) -> dict[str, Any]:
    """``userspace``: the delay line's final statistics when it was the
    bottleneck (per-packet sojourn percentiles, per-flow backlog). A
    topology's samples and statistics have every link (``links``) and its
    flows' ACK counts (network.rs in crates/delayline)."""
    iv = cfg["interval_ns"]
    n_ticks = cfg["duration_ns"] // iv
    n_flows = len(cfg["flows"])
    k_from = cfg["measure_from_ns"] // iv  # tick index (0: the start)
    k_to = min(n_ticks, cfg["measure_to_ns"] // iv)
    in_window = range(k_from + 1, k_to + 1)  # ticks whose interval ends inside the window
    configs = link_configs(cfg)
    topology = is_topology(cfg)
    paths = [f.get("path", [0]) for f in cfg["flows"]]

    rx_bytes = [[0] * n_flows] + rx["bytes"]  # index k: cumulative at tick k
    samples = [[None] * n_flows] + tx["samples"]
    # iperf3's reports (iperf3.py) fill only some of a sample's columns
    # (None: not reported) and count no segments.
    agent = tx.get("telemetry", "agent") == "agent"

    def retrans_at(k: int, i: int) -> int:
        row = samples[k][i]
        return 0 if row is None else row[_RETRANS]

    # ---- links: forward-fill the counters over missed ticks.
    def zero(link_cfg: dict[str, Any]) -> dict[str, Any]:
        return {"bytes": 0, "packets": 0, "drops": 0, "backlog": 0, "rate_bps": link_cfg["rate_bps"],
                "sojourn_sum_ns": 0, "sojourn_count": 0, "flow_backlog": [0] * n_flows}

    if topology:
        net_at = _forward_filled(link_samples, n_ticks, {"links": [zero(c) for c in configs],
                                                         "acks": [0] * n_flows, "acks_compressed": [0] * n_flows})
        links_at = [[net_at[k]["links"][j] for k in range(n_ticks + 1)] for j in range(len(configs))]
        finals = userspace["links"] if userspace is not None else [None] * len(configs)
    else:
        links_at = [_forward_filled(link_samples, n_ticks, zero(configs[0]))]
        finals = [None if userspace is None else {**userspace["link"], **userspace}]
    link_parts = [_link_raw(cfg, c, at, final) for c, at, final in zip(configs, links_at, finals, strict=True)]
    acks = topology and any("reverse_path" in f for f in cfg["flows"])

    series: dict[str, list] = {key: [] for key in (
        "t_ns", "flow", "goodput_bps", "cwnd", "inflight", "pacing_rate_bps", "srtt_us", "rtt_us", "min_rtt_us",
        "ca_state", "cc_mode", "pacing_gain", "cwnd_gain", "bw_estimate_bps", "delivery_rate_bps", "cc_var", "extra_acked",
        "queue_bytes", "retransmits",
        *(("acks", "acks_compressed", "ack_gap_p10_us", "ack_gap_p50_us") if acks else ()))}
    for k in range(1, n_ticks + 1):
        t_ns = k * iv
        for i in range(n_flows):
            row = samples[k][i]
            series["t_ns"].append(t_ns)
            series["flow"].append(i)
            series["goodput_bps"].append((rx_bytes[k][i] - rx_bytes[k - 1][i]) * 8 / (iv / 1e9))
            series["cwnd"].append(0 if row is None else row[_CWND])
            series["inflight"].append(0 if row is None else row[_INFLIGHT])
            series["pacing_rate_bps"].append(_float(row, _PACING))
            srtt = None if row is None or row[_SRTT] == 0 else row[_SRTT]
            series["srtt_us"].append(srtt)
            series["rtt_us"].append(srtt)  # TCP_INFO has no latest sample
            series["min_rtt_us"].append(None if row is None or row[_MINRTT] in (0, 0xFFFFFFFF) else row[_MINRTT])
            series["ca_state"].append(0 if row is None else row[_CASTATE])
            series["cc_mode"].append(_mode(row, t_ns - cfg["flows"][i]["start_ns"]) if agent else None)
            series["pacing_gain"].append(None if row is None else row[_PGAIN])
            series["cwnd_gain"].append(None if row is None else row[_CGAIN])
            series["bw_estimate_bps"].append(None if row is None else row[_BW])
            series["delivery_rate_bps"].append(_float(row, _DELIVERY))
            series["cc_var"].append(None if row is None else row[_VAR])
            series["extra_acked"].append(None if row is None else row[_EXTRA_ACKED])
            # Its bytes in the queues of its data path's links (the simulator's
            # rule); the kernel bottleneck's bfifo keeps no per-flow count: null.
            series["queue_bytes"].append(sum(links_at[j][k]["flow_backlog"][i] for j in paths[i])
                                         if userspace is not None else None)
            series["retransmits"].append(max(0, retrans_at(k, i) - retrans_at(k - 1, i)))
            if acks:
                for key in ("acks", "acks_compressed"):
                    series[key].append(net_at[k][key][i] - net_at[k - 1][key][i])
                # The delay line's gaps since its last sample, as ACKs leave
                # it toward the sender: a tick without its own sample has
                # none (a late read's gaps span the ticks it missed; they
                # stay with the tick it was read at).
                for key in ("ack_gap_p10_us", "ack_gap_p50_us"):
                    gaps = link_samples[k].get(key) if k in link_samples else None
                    series[key].append(None if not gaps or gaps[i] is None else float(gaps[i]))
    link_series = {key: [part[key][k] for k in range(n_ticks) for _, part in link_parts]
                   for key in link_parts[0][1]}
    if topology:  # rows per (tick, link), with the link's index, as the simulator's
        link_series["link"] = np.tile(np.arange(len(configs), dtype=np.uint32), n_ticks)

    flows = []
    for i in range(n_flows):
        srtts = sorted(float(samples[k][i][_SRTT]) for k in in_window
                       if samples[k][i] is not None and (samples[k][i][_SRTT] or 0) > 0)
        final = tx["final"][i] or {}
        segments: dict[str, int | None] = dict.fromkeys(("sent", "arrived", "dropped", "in_network"))
        if agent:
            sent = final.get("data_segs_out", 0)
            arrived = min(sent, rx["data_segs_in"][i])
            # Read after the network drained (agent.py): what left and never
            # arrived was dropped -- at the bottleneck or, on a slow host,
            # elsewhere (summary live.losses) -- except the few segments still
            # unacknowledged if the drain timed out.
            dropped = max(0, sent - arrived - final.get("unacked", 0))
            segments = {"sent": sent, "arrived": arrived, "dropped": dropped,
                        "in_network": max(0, sent - arrived - dropped)}
        flows.append({
            "delivered_bytes_window": rx_bytes[k_to][i] - rx_bytes[k_from][i],
            "delivered_bytes_total": rx_bytes[n_ticks][i],
            "retransmits_window": max(0, retrans_at(k_to, i) - retrans_at(k_from, i)),
            "retransmits_total": final.get("total_retrans", 0),
            **{f"{key}_segments": n for key, n in segments.items()},
            "rtt_mean_us": sum(srtts) / len(srtts) if srtts else None,
            "rtt_p95_us": _percentile(srtts, 0.95),
            "rto_count": (final.get("total_rto") or 0) if agent else None,
            # ECN: marks by the userspace links of its path, CE the
            # receiver's kernel counted, the sender's delivered_ce (None: not seen).
            "ce_marked": sum(finals[j]["flow_marks"][i] for j in paths[i]) if userspace is not None else None,
            "ce_received": (rx.get("received_ce") or [None] * n_flows)[i],
            "delivered_ce": final.get("delivered_ce"),
        })
        if "reverse_path" in cfg["flows"][i] and userspace is not None:
            flows[-1]["acks_dropped"] = sum(finals[j]["flow_ack_drops"][i] for j in cfg["flows"][i]["reverse_path"])
    link, *links = (part[0] for part in link_parts)
    return {"flows": flows, "link": link, **({"links": links} if links else {}), "flow_series": series,
            "link_series": link_series, "events": 0}
