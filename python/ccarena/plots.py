"""goodput.png: per-flow goodput (top, with the link's capacity when it
changes over time) and bottleneck queueing delay (bottom) over time, with
the measurement window shaded."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from . import tables, units
from .flow_groups import flow_groups

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.figure import Figure

    from .results import Result

#: Legends beyond this many flows are folded into columns.
_LEGEND_ROWS = 8


#: The measurement window's label, above the goodput panel (outside the data).
WINDOW_LABEL = "measurement window"
#: Legend label of the link's capacity (drawn when it changes over time).
CAPACITY_LABEL = "link capacity"


#: zlib's level for goodput.png: 3 compresses the headline's plot in ~21
#: ms against ~32 ms at Pillow's default (6), for a file 4% larger (134
#: against 129 kB); the pixels are the same.
PNG_COMPRESS_LEVEL = 3


def plot_goodput(result: "Result", path: Path) -> None:
    # Deterministic bytes: no timestamp or version in the PNG's metadata.
    goodput_figure(result).savefig(path, dpi=110, metadata={"Software": None},
                                   pil_kwargs={"compress_level": PNG_COMPRESS_LEVEL})


def goodput_figure(result: "Result") -> "Figure":
    """The figure of goodput.png (its artists are what tests look at)."""
    # A bare Figure (no pyplot): savefig renders PNG with the Agg canvas,
    # without pyplot's backend and figure-manager machinery to import.
    from matplotlib.figure import Figure

    flows = tables.flow_columns(result.raw)
    link = tables.link_columns(result.raw)
    # A topology's rows are per link: link 0 (the bottleneck's place) for
    # the capacity line, a queueing-delay line per link.
    names = [entry["name"] for entry in result.scenario.human.get("link", [])] if "link" in link else []
    per_link = [{key: values[link["link"] == k] for key, values in link.items()} for k in range(len(names))]
    if per_link:
        link = per_link[0]
    window = result.summary["window"]
    labels = result.scenario.flow_labels

    fig = Figure(figsize=(10, 6.5))
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    n = len(labels)
    # Rows are (interval, flow) with every flow in every interval.
    t = flows["t_s"][::n] if n else flows["t_s"]
    goodput = flows["goodput_mbps"].reshape(-1, n) if n else flows["goodput_mbps"]
    if result.scenario.config.get("workloads"):
        # The workloads' flows have no rows of their own: the link's
        # throughput (wire bytes) shows what they all send.
        top.plot(link["t_s"], link["tx_mbps"], color="tab:gray", linewidth=0.8, label="link throughput (all flows)")
    for label, columns in _line_groups(result):
        values = goodput[:, columns]
        if len(columns) == 1:
            top.plot(t, values[:, 0], linewidth=1.0, label=label)
            continue
        (line,) = top.plot(t, values.mean(axis=1), linewidth=1.0, label=f"{label}: mean, min-max band")
        top.fill_between(t, values.min(axis=1), values.max(axis=1), color=line.get_color(), alpha=0.2, linewidth=0)
    capacity = capacity_steps(result.scenario.config, link)
    if capacity is not None:
        x, mbps, drawstyle = capacity
        # Behind the flows, which it bounds.
        top.plot(x, mbps, drawstyle=drawstyle, color="black", linestyle="--", linewidth=0.8, zorder=1.5,
                 label=CAPACITY_LABEL)
    top.set_ylabel("goodput (Mbit/s)" if n else "throughput (Mbit/s)")
    top.set_ylim(bottom=0)
    top.legend(loc="upper right", fontsize="small", ncol=max(1, -(-len(top.lines) // _LEGEND_ROWS)))
    # Room between the axes and the title for the window's label.
    queues = "each link's queueing delay" if len(per_link) > 1 else "bottleneck queueing delay"
    top.set_title(f"{result.scenario.name}: per-flow goodput and {queues}", pad=14, y=1.0)

    if len(per_link) > 1:
        for name, rows in zip(names, per_link, strict=True):
            bottom.plot(rows["t_s"], rows["queue_delay_ms"], linewidth=0.8, label=f"link {name}")
    else:
        bottom.plot(link["t_s"], link["queue_delay_ms"], color="black", linewidth=0.8)
        for ms, label, style in aqm_references(result.scenario.config["bottleneck"]):
            bottom.axhline(ms, color="tab:red", linestyle=style, linewidth=0.9, label=label)
    if bottom.get_legend_handles_labels()[0]:
        bottom.legend(loc="upper right", fontsize="small")
    bottom.set_ylabel("queueing delay (ms)")
    bottom.set_xlabel("time (s)")
    bottom.set_ylim(bottom=0)

    for ax in (top, bottom):
        ax.axvspan(window["from_s"], window["to_s"], color="tab:gray", alpha=0.12, linewidth=0)
        ax.grid(True, linewidth=0.3)
    _label_window(top, window)

    # Fixed margins rather than tight_layout(), which draws the whole
    # figure once more to measure it (~0.1 s of every run): the figure's
    # size is fixed, and these leave room for 6-digit tick labels.
    fig.subplots_adjust(left=0.075, right=0.985, top=0.915, bottom=0.075, hspace=0.06)
    return fig


def _label_window(ax, window: dict) -> None:
    """Name the shaded window just above the axes, where no data is drawn:
    from its start rightwards, or, for a window in the right half, from its
    end leftwards (so the label stays over the axes)."""
    low, high = ax.get_xlim()
    left = window["from_s"] - low <= (high - low) / 2
    ax.text(window["from_s"] if left else window["to_s"], 1.0, WINDOW_LABEL, transform=ax.get_xaxis_transform(),
            ha="left" if left else "right", va="bottom", fontsize="x-small", color="dimgray")


def capacity_steps(cfg: dict, link: dict[str, "np.ndarray"]) -> "tuple[np.ndarray, np.ndarray, str] | None":
    """The link's capacity over time as (times s, Mbit/s, matplotlib
    drawstyle), for a link whose rate changes (a trace or a rate schedule);
    None for a constant rate, which draws no line. ``link``: the run's
    :func:`tables.link_columns`.

    A schedule is drawn from its changes, each from its own instant on. A
    trace from link.parquet's ``rate_mbps``: each sample is the trace's
    capacity over the telemetry interval that ends at it (a trace can hold
    millions of delivery opportunities; the interval is what the flows'
    goodput is measured over too).
    """
    import numpy as np

    bn = cfg["bottleneck"]
    if bn.get("trace"):
        return link["t_s"], link["rate_mbps"], "steps-pre"
    if not bn.get("schedule"):
        return None
    at_ns = [0] + [change["at_ns"] for change in bn["schedule"]] + [cfg["duration_ns"]]
    rate_bps = [bn["rate_bps"]] + [change["rate_bps"] for change in bn["schedule"]]
    return np.asarray(at_ns) / 1e9, np.asarray(rate_bps + rate_bps[-1:]) / 1e6, "steps-post"


def aqm_references(bn: dict) -> list[tuple[float, str, str]]:
    """The queue discipline's delay references for the queueing-delay
    panel, ms: CoDel's / FQ-CoDel's / PIE's target, RED's thresholds and a
    step marker's threshold (sizes as delays at the link's rate)."""
    as_ms = lambda nbytes: nbytes * 8 / bn["rate_bps"] * 1e3  # noqa: E731
    aqm = bn["aqm"]
    if aqm in ("codel", "fq_codel", "pie"):
        return [(bn[aqm]["target_ns"] / 1e6, f"{aqm} target", "--")]
    if aqm == "red":
        return [(as_ms(bn["red"]["min_bytes"]), "RED min (at link rate)", ":"),
                (as_ms(bn["red"]["max_bytes"]), "RED max (at link rate)", "--")]
    mark = bn.get("mark_threshold")
    if mark:
        (unit, k), = mark.items()
        ms = {"ns": k / 1e6, "bytes": as_ms(k), "packets": as_ms(k * units.PACKET_WIRE_BYTES)}[unit]
        return [(ms, "mark threshold" + ("" if unit == "ns" else " (at link rate)"), "--")]
    return []


def _line_groups(result: "Result") -> list[tuple[str, list[int]]]:
    """(legend label, flow indices) of each line of the goodput panel: one
    per flow, or per group of flows (flow_groups.py)."""
    labels = result.scenario.flow_labels
    groups = flow_groups(result.scenario)
    if groups is None:
        return [(label, [i]) for i, label in enumerate(labels)]
    entries = result.scenario.human.get("flow", [])
    return [
        (f"all {len(g.flows)} flows" if g.entry is None
         else f"flow[{g.entry}]: {entries[g.entry]['cc']}, {entries[g.entry]['rtt']} x {len(g.flows)}", g.flows)
        for g in groups
    ]
