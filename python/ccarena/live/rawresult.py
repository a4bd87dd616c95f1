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
when the drain timed out count as in_network.
"""

from __future__ import annotations

import json

from typing import Any

from ..cc_modes import DRAIN, PROBE_BW, PROBE_RTT, STARTUP

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


def _percentile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[index]


def capacity_bytes(cfg: dict[str, Any], from_ns: int, to_ns: int) -> int:
    """Bytes the link could send in [from, to): the simulator's own rule
    (its trace's opportunities, or its rate schedule's integral)."""
    from .. import _core

    return _core.capacity_bytes(json.dumps(cfg), from_ns, to_ns)


def build_raw(cfg: dict[str, Any], rx: dict[str, Any], tx: dict[str, Any],
              link_samples: dict[int, dict[str, Any]], userspace: dict[str, Any] | None = None) -> dict[str, Any]:
    """``userspace``: the delay line's final statistics when it was the
    bottleneck (per-packet sojourn percentiles, per-flow backlog)."""
    iv = cfg["interval_ns"]
    n_ticks = cfg["duration_ns"] // iv
    n_flows = len(cfg["flows"])
    rate_bps = cfg["bottleneck"]["rate_bps"]
    k_from = cfg["measure_from_ns"] // iv  # tick index (0: the start)
    k_to = min(n_ticks, cfg["measure_to_ns"] // iv)
    in_window = range(k_from + 1, k_to + 1)  # ticks whose interval ends inside the window

    rx_bytes = [[0] * n_flows] + rx["bytes"]  # index k: cumulative at tick k
    samples = [[None] * n_flows] + tx["samples"]

    def retrans_at(k: int, i: int) -> int:
        row = samples[k][i]
        return 0 if row is None else row[_RETRANS]

    # ---- link: forward-fill the counters over missed ticks.
    zero = {"bytes": 0, "packets": 0, "drops": 0, "backlog": 0, "rate_bps": rate_bps,
            "sojourn_sum_ns": 0, "sojourn_count": 0, "flow_backlog": [0] * n_flows}
    link_at = [zero]
    for k in range(1, n_ticks + 1):
        link_at.append(link_samples.get(k, link_at[-1]))

    series: dict[str, list] = {key: [] for key in (
        "t_ns", "flow", "goodput_bps", "cwnd", "inflight", "pacing_rate_bps", "srtt_us", "rtt_us", "min_rtt_us",
        "ca_state", "cc_mode", "pacing_gain", "cwnd_gain", "bw_estimate_bps", "delivery_rate_bps", "cc_var", "extra_acked",
        "queue_bytes", "retransmits")}
    link_series: dict[str, list] = {key: [] for key in (
        "t_ns", "queue_bytes", "queue_delay_us", "drops", "rate_bps", "tx_bytes")}
    for k in range(1, n_ticks + 1):
        t_ns = k * iv
        for i in range(n_flows):
            row = samples[k][i]
            series["t_ns"].append(t_ns)
            series["flow"].append(i)
            series["goodput_bps"].append((rx_bytes[k][i] - rx_bytes[k - 1][i]) * 8 / (iv / 1e9))
            series["cwnd"].append(0 if row is None else row[_CWND])
            series["inflight"].append(0 if row is None else row[_INFLIGHT])
            series["pacing_rate_bps"].append(None if row is None else float(row[_PACING]))
            srtt = None if row is None or row[_SRTT] == 0 else row[_SRTT]
            series["srtt_us"].append(srtt)
            series["rtt_us"].append(srtt)  # TCP_INFO has no latest sample
            series["min_rtt_us"].append(None if row is None or row[_MINRTT] in (0, 0xFFFFFFFF) else row[_MINRTT])
            series["ca_state"].append(0 if row is None else row[_CASTATE])
            series["cc_mode"].append(_mode(row, t_ns - cfg["flows"][i]["start_ns"]))
            series["pacing_gain"].append(None if row is None else row[_PGAIN])
            series["cwnd_gain"].append(None if row is None else row[_CGAIN])
            series["bw_estimate_bps"].append(None if row is None else row[_BW])
            series["delivery_rate_bps"].append(None if row is None else float(row[_DELIVERY]))
            series["cc_var"].append(None if row is None else row[_VAR])
            series["extra_acked"].append(None if row is None else row[_EXTRA_ACKED])
            series["queue_bytes"].append(link_at[k].get("flow_backlog", [0] * n_flows)[i])
            series["retransmits"].append(max(0, retrans_at(k, i) - retrans_at(k - 1, i)))
        now, before = link_at[k], link_at[k - 1]
        link_series["t_ns"].append(t_ns)
        link_series["queue_bytes"].append(now["backlog"])
        if "sojourn_count" in now and userspace is not None:  # per-packet sojourn, mean over the interval
            count = now["sojourn_count"] - before["sojourn_count"]
            delay_us = (now["sojourn_sum_ns"] - before["sojourn_sum_ns"]) / count / 1e3 if count > 0 else 0.0
        else:  # the kernel's queue: backlog / rate at the tick
            delay_us = now["backlog"] * 8 / now.get("rate_bps", rate_bps) * 1e6
        link_series["queue_delay_us"].append(delay_us)
        link_series["drops"].append(max(0, now["drops"] - before["drops"]))
        link_series["rate_bps"].append(now.get("rate_bps", rate_bps))
        link_series["tx_bytes"].append(max(0, now["bytes"] - before["bytes"]))

    flows = []
    for i in range(n_flows):
        srtts = sorted(float(samples[k][i][_SRTT]) for k in in_window
                       if samples[k][i] is not None and samples[k][i][_SRTT] > 0)
        final = tx["final"][i] or {}
        sent = final.get("data_segs_out", 0)
        arrived = min(sent, rx["data_segs_in"][i])
        # Read after the network drained (agent.py): what left and never
        # arrived was dropped -- at the bottleneck or, on a slow host,
        # elsewhere (summary live.losses) -- except the few segments still
        # unacknowledged if the drain timed out.
        dropped = max(0, sent - arrived - final.get("unacked", 0))
        flows.append({
            "delivered_bytes_window": rx_bytes[k_to][i] - rx_bytes[k_from][i],
            "delivered_bytes_total": rx_bytes[n_ticks][i],
            "retransmits_window": max(0, retrans_at(k_to, i) - retrans_at(k_from, i)),
            "retransmits_total": final.get("total_retrans", 0),
            "sent_segments": sent,
            "arrived_segments": arrived,
            "dropped_segments": dropped,
            "in_network_segments": max(0, sent - arrived - dropped),
            "rtt_mean_us": sum(srtts) / len(srtts) if srtts else None,
            "rtt_p95_us": _percentile(srtts, 0.95),
            "rto_count": final.get("total_rto") or 0,
            # ECN: marks by the userspace bottleneck, CE the receiver's
            # kernel counted, the sender's delivered_ce (None: not seen).
            "ce_marked": userspace["link"]["flow_marks"][i] if userspace is not None else None,
            "ce_received": (rx.get("received_ce") or [None] * n_flows)[i],
            "delivered_ce": final.get("delivered_ce"),
        })

    delays = sorted(link_series["queue_delay_us"][k - 1] for k in in_window)
    link = {
        "tx_bytes_window": link_at[k_to]["bytes"] - link_at[k_from]["bytes"],
        "capacity_bytes_window": capacity_bytes(cfg, cfg["measure_from_ns"], cfg["measure_to_ns"]),
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
    if userspace is not None:  # every packet's sojourn in the window, and the true maximum
        for key in ("mean", "p50", "p95", "p99"):
            link[f"queue_delay_{key}_us"] = userspace.get(f"sojourn_{key}_us")
        link["max_queue_bytes"] = userspace["link"]["max_backlog"]
    return {"flows": flows, "link": link, "flow_series": series, "link_series": link_series, "events": 0}
