"""goodput.png: per-flow goodput (top) and bottleneck queueing delay
(bottom) over time, with the measurement window shaded."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

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
    t = ts.column("t_s").to_numpy()
    flow = ts.column("flow").to_numpy()
    goodput = ts.column("goodput_mbps").to_numpy(zero_copy_only=False)
    for i, label in enumerate(labels):
        rows = flow == i
        top.plot(t[rows], goodput[rows], linewidth=1.0, label=label)
    top.set_ylabel("goodput (Mbit/s)")
    top.set_ylim(bottom=0)
    top.legend(loc="upper right", fontsize="small", ncol=max(1, -(-len(labels) // _LEGEND_ROWS)))
    top.set_title(f"{result.scenario.name}: per-flow goodput and bottleneck queueing delay")

    bottom.plot(
        link.column("t_s").to_numpy(),
        link.column("queue_delay_ms").to_numpy(zero_copy_only=False),
        color="black",
        linewidth=0.8,
    )
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
