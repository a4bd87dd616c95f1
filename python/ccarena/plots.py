"""goodput.png: per-flow goodput (top) and bottleneck queueing delay
(bottom) over time, with the measurement window shaded."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from . import units
from .flow_groups import flow_groups

if TYPE_CHECKING:
    from .results import Result

#: Legends beyond this many flows are folded into columns.
_LEGEND_ROWS = 8


def plot_goodput(result: "Result", path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ts = result.timeseries
    link = result.link
    window = result.summary["window"]
    labels = result.scenario.flow_labels

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(10, 6.5), height_ratios=(3, 2))
    n = len(labels)
    # Rows are (interval, flow) with every flow in every interval.
    t = ts.column("t_s").to_numpy()[::n]
    goodput = ts.column("goodput_mbps").to_numpy(zero_copy_only=False).reshape(-1, n)
    for label, columns in _line_groups(result):
        values = goodput[:, columns]
        if len(columns) == 1:
            top.plot(t, values[:, 0], linewidth=1.0, label=label)
            continue
        (line,) = top.plot(t, values.mean(axis=1), linewidth=1.0, label=f"{label}: mean, min-max band")
        top.fill_between(t, values.min(axis=1), values.max(axis=1), color=line.get_color(), alpha=0.2, linewidth=0)
    top.set_ylabel("goodput (Mbit/s)")
    top.set_ylim(bottom=0)
    top.legend(loc="upper right", fontsize="small", ncol=max(1, -(-len(top.lines) // _LEGEND_ROWS)))
    top.set_title(f"{result.scenario.name}: per-flow goodput and bottleneck queueing delay")

    bottom.plot(
        link.column("t_s").to_numpy(),
        link.column("queue_delay_ms").to_numpy(zero_copy_only=False),
        color="black",
        linewidth=0.8,
    )
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
    top.text(window["from_s"], 0.02, " measurement window", transform=top.get_xaxis_transform(),
             va="bottom", fontsize="x-small", color="dimgray")

    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


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
    entries = result.scenario.human["flow"]
    return [
        (f"all {len(g.flows)} flows" if g.entry is None
         else f"flow[{g.entry}]: {entries[g.entry]['cc']}, {entries[g.entry]['rtt']} x {len(g.flows)}", g.flows)
        for g in groups
    ]
