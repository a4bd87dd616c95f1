"""The engine's telemetry columns in the units people read (seconds,
Mbit/s, ms): as numpy arrays (what the plot draws) and as pyarrow tables
(timeseries.parquet and link.parquet).

The tables are built from the arrays' buffers (``pa.Array.from_buffers``),
not with ``pa.array``: that one imports pandas, when it is installed, to
recognise pandas objects (~0.3 s of every ``ccarena run``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .scenario import ResolvedScenario

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

#: ca_state values (Linux enum tcp_ca_state).
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")


def _scaled(values: "Sequence | np.ndarray", factor: float = 1.0) -> "np.ndarray":
    """Floats times ``factor`` (a list's None becomes NaN, which the
    tables hold as null)."""
    import numpy as np

    return np.asarray(values, dtype=np.float64) * factor


def _ints(values: "Sequence | np.ndarray", dtype: str) -> "np.ndarray":
    """Integers; a list with None (a live run's column its application
    does not report) becomes a masked array, which the tables hold as null."""
    import numpy as np

    if isinstance(values, list) and None in values:
        missing = np.asarray([v is None for v in values])
        return np.ma.masked_array(np.asarray([0 if v is None else v for v in values], dtype=np.dtype(dtype)),
                                  mask=missing)
    return np.asarray(values, dtype=np.dtype(dtype))


def flow_columns(raw: dict[str, Any]) -> dict[str, "np.ndarray"]:
    """timeseries.parquet's columns but ``cc``, one row per (interval,
    flow), in its order."""
    s = raw["flow_series"]
    return {
        "t_s": _scaled(s["t_ns"], 1e-9),
        "flow": _ints(s["flow"], "uint32"),
        "goodput_mbps": _scaled(s["goodput_bps"], 1e-6),
        "cwnd": _ints(s["cwnd"], "uint32"),
        "inflight": _ints(s["inflight"], "uint32"),
        "pacing_rate_mbps": _scaled(s["pacing_rate_bps"], 1e-6),
        "srtt_ms": _scaled(s["srtt_us"], 1e-3),
        "rtt_ms": _scaled(s["rtt_us"], 1e-3),
        "min_rtt_ms": _scaled(s["min_rtt_us"], 1e-3),
        "ca_state": _ints(s["ca_state"], "uint8"),
        "cc_mode": _ints(s["cc_mode"], "uint32"),
        "pacing_gain": _scaled(s["pacing_gain"]),
        "cwnd_gain": _scaled(s["cwnd_gain"]),
        "bw_estimate_mbps": _scaled(s["bw_estimate_bps"], 1e-6),
        "delivery_rate_mbps": _scaled(s["delivery_rate_bps"], 1e-6),
        # NaN (the algorithm exports no variable) becomes null.
        "cc_var": _scaled(s["cc_var"]),
        # BBR's ACK-aggregation filter, packets; null where the algorithm reports none.
        "extra_acked": _scaled(s["extra_acked"]),
        "queue_bytes": _ints(s["queue_bytes"], "uint64"),
        "retransmits": _ints(s["retransmits"], "uint64"),
        # With reverse paths: ACKs at the sender, the compressed ones, and
        # the 10th percentile and median of the gaps between them, in µs (a
        # compressed ACK's gap is a small fraction of a ms; null without a gap).
        **({"acks": _ints(s["acks"], "uint32"), "acks_compressed": _ints(s["acks_compressed"], "uint32"),
            "ack_gap_p10_us": _scaled(s["ack_gap_p10_us"]), "ack_gap_p50_us": _scaled(s["ack_gap_p50_us"])}
           if "acks" in s else {}),
    }


def link_columns(raw: dict[str, Any]) -> dict[str, "np.ndarray"]:
    """link.parquet's columns, one row per interval at the bottleneck (a
    topology's: per interval and link, with the link's index)."""
    import numpy as np

    s = raw["link_series"]
    t_ns = np.asarray(s["t_ns"], dtype=np.int64)
    # Each sample covers (previous sample, this sample]; the first from 0.
    # A topology's rows are (sample, link): the previous sample of the same link.
    n_links = int(s["link"].max()) + 1 if "link" in s and len(s["link"]) else 1
    span_s = np.diff(t_ns.reshape(-1, n_links), axis=0, prepend=0).reshape(-1) / 1e9
    tx_bits = np.asarray(s["tx_bytes"], dtype=np.float64) * 8
    return {
        "t_s": _scaled(s["t_ns"], 1e-9),
        **({"link": _ints(s["link"], "uint32")} if "link" in s else {}),
        "queue_bytes": _ints(s["queue_bytes"], "uint64"),
        "queue_delay_ms": _scaled(s["queue_delay_us"], 1e-3),
        "drops": _ints(s["drops"], "uint64"),
        "rate_mbps": _scaled(s["rate_bps"], 1e-6),
        "tx_mbps": np.divide(tx_bits, span_s * 1e6, out=np.zeros_like(tx_bits), where=span_s > 0),
    }


def flow_table(scenario: ResolvedScenario, raw: dict[str, Any]) -> "pa.Table":
    """timeseries.parquet: :func:`flow_columns` and each row's ``cc``."""
    import numpy as np
    import pyarrow as pa

    columns = {name: _arrow(values) for name, values in flow_columns(raw).items()}
    flow_cc = [f["cc"] for f in scenario.config["flows"]]
    names = sorted(set(flow_cc))
    cc_index = np.asarray([names.index(cc) for cc in flow_cc], dtype=np.int32)
    flow = np.asarray(raw["flow_series"]["flow"], dtype=np.int64)
    cc = pa.DictionaryArray.from_arrays(_arrow(cc_index[flow]), _strings(names))
    order = list(columns)
    order.insert(order.index("flow") + 1, "cc")
    return pa.table({name: cc if name == "cc" else columns[name] for name in order})


def link_table(scenario: ResolvedScenario, raw: dict[str, Any]) -> "pa.Table":
    """link.parquet: :func:`link_columns`."""
    import pyarrow as pa

    return pa.table({name: _arrow(values) for name, values in link_columns(raw).items()})


def _arrow(values: "np.ndarray") -> "pa.Array":
    """An Arrow array over a numpy array's buffer; a float that is not
    finite (what the engine leaves undefined) or a masked value is null."""
    import numpy as np
    import pyarrow as pa

    validity = None
    if isinstance(values, np.ma.MaskedArray):
        validity = pa.py_buffer(np.packbits(~np.ma.getmaskarray(values), bitorder="little"))
        values = values.filled(0)
    values = np.ascontiguousarray(values)
    if values.dtype.kind == "f":
        finite = np.isfinite(values)
        if not finite.all():
            validity = pa.py_buffer(np.packbits(finite, bitorder="little"))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [validity, pa.py_buffer(values)])


def _strings(texts: list[str]) -> "pa.Array":
    """A string array (offsets and UTF-8 bytes)."""
    import numpy as np
    import pyarrow as pa

    data = [t.encode() for t in texts]
    offsets = np.cumsum([0, *map(len, data)], dtype=np.int32)
    return pa.StringArray.from_buffers(len(texts), pa.py_buffer(offsets), pa.py_buffer(b"".join(data)))
