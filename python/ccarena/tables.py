"""The engine's telemetry columns as pyarrow tables (timeseries.parquet and
link.parquet), in the units people read: seconds, Mbit/s, ms."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .scenario import ResolvedScenario

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

#: ca_state values (Linux enum tcp_ca_state).
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")


def _scaled(values: "Sequence | np.ndarray", factor: float = 1.0) -> "pa.Array":
    """Floats times ``factor``; what the engine leaves undefined (NaN, and
    any infinity) is null."""
    import numpy as np
    import pyarrow as pa

    array = np.asarray(values, dtype=np.float64) * factor  # a list's None -> NaN
    return pa.array(array, pa.float64(), mask=~np.isfinite(array))


def flow_table(scenario: ResolvedScenario, raw: dict[str, Any]) -> "pa.Table":
    """One row per (interval, flow)."""
    import pyarrow as pa

    s = raw["flow_series"]
    import numpy as np

    flow_cc = [f["cc"] for f in scenario.config["flows"]]
    names = sorted(set(flow_cc))
    cc_index = np.asarray([names.index(cc) for cc in flow_cc], dtype=np.int32)
    flow = pa.array(s["flow"], pa.uint32())

    def scaled(key: str, factor: float) -> "pa.Array":
        return _scaled(s[key], factor)

    return pa.table(
        {
            "t_s": _scaled(s["t_ns"], 1e-9),
            "flow": flow,
            "cc": pa.DictionaryArray.from_arrays(
                pa.array(cc_index[np.asarray(s["flow"], dtype=np.int64)], pa.int32()), pa.array(names, pa.string())
            ),
            "goodput_mbps": scaled("goodput_bps", 1e-6),
            "cwnd": pa.array(s["cwnd"], pa.uint32()),
            "inflight": pa.array(s["inflight"], pa.uint32()),
            "pacing_rate_mbps": scaled("pacing_rate_bps", 1e-6),
            "srtt_ms": scaled("srtt_us", 1e-3),
            "rtt_ms": scaled("rtt_us", 1e-3),
            "min_rtt_ms": scaled("min_rtt_us", 1e-3),
            "ca_state": pa.array(s["ca_state"], pa.uint8()),
            "cc_mode": pa.array(s["cc_mode"], pa.uint32()),
            "pacing_gain": _scaled(s["pacing_gain"]),
            "cwnd_gain": _scaled(s["cwnd_gain"]),
            "bw_estimate_mbps": scaled("bw_estimate_bps", 1e-6),
            "delivery_rate_mbps": scaled("delivery_rate_bps", 1e-6),
            # NaN (the algorithm exports no variable) becomes null.
            "cc_var": _scaled(s["cc_var"]),
            "queue_bytes": pa.array(s["queue_bytes"], pa.uint64()),
            "retransmits": pa.array(s["retransmits"], pa.uint64()),
        }
    )


def link_table(scenario: ResolvedScenario, raw: dict[str, Any]) -> "pa.Table":
    """One row per interval at the bottleneck."""
    import pyarrow as pa

    import numpy as np

    s = raw["link_series"]
    t_ns = np.asarray(s["t_ns"], dtype=np.int64)
    # Each sample covers (previous sample, this sample]; the first from 0.
    span_s = np.diff(t_ns, prepend=0) / 1e9
    tx_bits = np.asarray(s["tx_bytes"], dtype=np.float64) * 8
    tx_mbps = np.divide(tx_bits, span_s * 1e6, out=np.zeros_like(tx_bits), where=span_s > 0)
    return pa.table(
        {
            "t_s": _scaled(s["t_ns"], 1e-9),
            "queue_bytes": pa.array(s["queue_bytes"], pa.uint64()),
            "queue_delay_ms": _scaled(s["queue_delay_us"], 1e-3),
            "drops": pa.array(s["drops"], pa.uint64()),
            "rate_mbps": _scaled(s["rate_bps"], 1e-6),
            "tx_mbps": pa.array(tx_mbps, pa.float64()),
        }
    )
