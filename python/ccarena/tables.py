"""The engine's telemetry columns as pyarrow tables (timeseries.parquet and
link.parquet), in the units people read: seconds, Mbit/s, ms."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .scenario import ResolvedScenario

if TYPE_CHECKING:
    import pyarrow as pa

#: ca_state values (Linux enum tcp_ca_state).
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")


def flow_table(scenario: ResolvedScenario, raw: dict[str, Any]) -> "pa.Table":
    """One row per (interval, flow)."""
    import pyarrow as pa

    s = raw["flow_series"]
    ccs = [f["cc"] for f in scenario.config["flows"]]

    def scaled(key: str, factor: float) -> "pa.Array":
        return pa.array([None if v is None else v * factor for v in s[key]], pa.float64())

    return pa.table(
        {
            "t_s": pa.array([t / 1e9 for t in s["t_ns"]], pa.float64()),
            "flow": pa.array(s["flow"], pa.uint32()),
            "cc": pa.array([ccs[i] for i in s["flow"]], pa.string()).dictionary_encode(),
            "goodput_mbps": scaled("goodput_bps", 1e-6),
            "cwnd": pa.array(s["cwnd"], pa.uint32()),
            "inflight": pa.array(s["inflight"], pa.uint32()),
            "pacing_rate_mbps": scaled("pacing_rate_bps", 1e-6),
            "srtt_ms": scaled("srtt_us", 1e-3),
            "rtt_ms": scaled("rtt_us", 1e-3),
            "min_rtt_ms": scaled("min_rtt_us", 1e-3),
            "ca_state": pa.array(s["ca_state"], pa.uint8()),
            "cc_mode": pa.array(s["cc_mode"], pa.uint32()),
            "pacing_gain": pa.array(s["pacing_gain"], pa.float64()),
            "cwnd_gain": pa.array(s["cwnd_gain"], pa.float64()),
            "bw_estimate_mbps": scaled("bw_estimate_bps", 1e-6),
            "queue_bytes": pa.array(s["queue_bytes"], pa.uint64()),
            "retransmits": pa.array(s["retransmits"], pa.uint64()),
        }
    )


def link_table(scenario: ResolvedScenario, raw: dict[str, Any]) -> "pa.Table":
    """One row per interval at the bottleneck."""
    import pyarrow as pa

    s = raw["link_series"]
    t_ns = s["t_ns"]
    starts = [0, *t_ns[:-1]]
    tx_mbps = [b * 8 / ((t - t0) / 1e9) / 1e6 if t > t0 else 0.0 for b, t, t0 in zip(s["tx_bytes"], t_ns, starts)]
    return pa.table(
        {
            "t_s": pa.array([t / 1e9 for t in t_ns], pa.float64()),
            "queue_bytes": pa.array(s["queue_bytes"], pa.uint64()),
            "queue_delay_ms": pa.array([None if v is None else v / 1e3 for v in s["queue_delay_us"]], pa.float64()),
            "drops": pa.array(s["drops"], pa.uint64()),
            "rate_mbps": pa.array([r / 1e6 for r in s["rate_bps"]], pa.float64()),
            "tx_mbps": pa.array(tx_mbps, pa.float64()),
        }
    )
