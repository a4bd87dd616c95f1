"""The few kinds of figure the experiments draw (matplotlib, Agg, PNG).

- :func:`time_panels`: stacked panels over time (goodput, RTT, queue ...);
- :func:`sweep`: a quantity against a swept parameter, mean and seed range;
- :func:`grouped_bars`: one bar per series in each group;
- :func:`heatmaps`: side-by-side heat maps on a shared colour scale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

DPI = 110


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    _pyplot().close(fig)


@dataclass
class Line:
    label: str
    y: np.ndarray
    t: np.ndarray | None = None  # default: the panel's time axis
    style: dict[str, Any] = field(default_factory=dict)


@dataclass
class Panel:
    ylabel: str
    lines: list[Line]
    ymin: float | None = 0.0
    ymax: float | None = None
    step: bool = False  # draw as steps (gains, modes)
    logy: bool = False
    #: A log scale above this value and a linear one below it (matplotlib's
    #: "symlog"), so that zero is drawn at zero, not clipped to a floor.
    symlog: float | None = None
    #: Legend position ("best" lets matplotlib find the emptiest corner).
    legend_loc: str = "upper right"
    #: A count (packets): whole-number ticks only.
    integer: bool = False


def _visible_range(
    t: np.ndarray, panel: Panel, xlim: tuple[float, float] | None
) -> tuple[float | None, float | None]:
    """Smallest and largest finite value of the panel's lines inside
    ``xlim`` (all of them without one); (None, None) if there is none."""
    lows, highs = [], []
    for line in panel.lines:
        x = np.asarray(t if line.t is None else line.t, dtype=float)
        y = np.asarray(line.y, dtype=float)
        sel = np.isfinite(y)
        if panel.logy:
            sel &= y > 0
        if xlim is not None:
            sel &= (x >= xlim[0]) & (x <= xlim[1])
        if sel.any():
            lows.append(float(y[sel].min()))
            highs.append(float(y[sel].max()))
    if not lows:
        return None, None
    return min(lows), max(highs)


def _zoom_y(ax: Any, t: np.ndarray, panel: Panel, xlim: tuple[float, float]) -> None:
    """Scale the y-axis to the data inside the shown x-range (matplotlib
    would scale to all of it), keeping the panel's fixed limits."""
    lo, hi = _visible_range(t, panel, xlim)
    if lo is None or hi is None:
        return
    if panel.logy:
        ax.set_ylim(lo / 1.15, hi * 1.15)
        return
    bottom = panel.ymin if panel.ymin is not None else lo
    top = panel.ymax if panel.ymax is not None else hi
    pad = 0.05 * max(top - bottom, abs(top), 1e-9)
    ax.set_ylim(bottom=bottom if panel.ymin is not None else bottom - pad,
                top=top if panel.ymax is not None else top + pad)


def time_panels(
    path: Path,
    title: str,
    t: np.ndarray,
    panels: Sequence[Panel],
    *,
    xlim: tuple[float, float] | None = None,
    spans: Sequence[tuple[float, float, str]] = (),
    marks: Sequence[tuple[float, str]] = (),
    height: float = 2.4,
    xlabel: str = "time (s)",
) -> None:
    """Stacked panels sharing the time axis (or another x axis, named by
    ``xlabel``, with each line's ``t`` its x values); ``spans`` shade (lo,
    hi, label) ranges, ``marks`` draw labelled vertical lines."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(10, 1.2 + height * len(panels)), squeeze=False)
    for ax, panel in zip(axes[:, 0], panels):
        for line in panel.lines:
            x = t if line.t is None else line.t
            style = {"linewidth": 1.0, **line.style}
            label = line.label or "_nolegend_"
            if panel.step:
                ax.step(x, line.y, where="pre", label=label, **style)
            else:
                ax.plot(x, line.y, label=label, **style)
        ax.set_ylabel(panel.ylabel)
        if panel.logy:
            ax.set_yscale("log")
        if panel.symlog is not None:
            ax.set_yscale("symlog", linthresh=panel.symlog)
        if panel.integer:
            from matplotlib.ticker import MaxNLocator

            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if xlim is not None:
            _zoom_y(ax, t, panel, xlim)
        elif not panel.logy and (panel.ymin is not None or panel.ymax is not None):
            ax.set_ylim(bottom=panel.ymin, top=panel.ymax)
        ax.grid(True, linewidth=0.3)
        if sum(1 for line in panel.lines if line.label) > 1:
            # A zoom shows the data's peaks where "upper right" is: let
            # matplotlib find the emptiest corner there.
            ax.legend(loc="best" if xlim is not None else panel.legend_loc, fontsize="small")
        for lo, hi, label in spans:
            ax.axvspan(lo, hi, color="tab:gray", alpha=0.12, linewidth=0)
        for x, label in marks:
            ax.axvline(x, color="dimgray", linewidth=0.8, linestyle="--")
    top = axes[0, 0]
    for lo, hi, label in spans:
        if label:
            top.text(lo, 1.01, label, transform=top.get_xaxis_transform(), fontsize="x-small", color="dimgray")
    for x, label in marks:
        if label:
            top.text(x, 1.01, f" {label}", transform=top.get_xaxis_transform(), fontsize="x-small", color="dimgray")
    if xlim is not None:
        top.set_xlim(*xlim)
    axes[-1, 0].set_xlabel(xlabel)
    fig.suptitle(title, fontsize="medium")
    _save(fig, path)


@dataclass
class Series:
    label: str
    mean: Sequence[float]
    lo: Sequence[float] | None = None
    hi: Sequence[float] | None = None
    style: dict[str, Any] = field(default_factory=dict)


def _errors(series: Series) -> np.ndarray | None:
    if series.lo is None or series.hi is None:
        return None
    mean = np.asarray(series.mean, dtype=float)
    # A mean of equal values can land an ulp outside them: no negative bars.
    return np.maximum(np.vstack([mean - np.asarray(series.lo, dtype=float),
                                 np.asarray(series.hi, dtype=float) - mean]), 0.0)


def _sparse_log_labels(x: Sequence[float], min_gap: float = 0.06, keep: Sequence[float] = ()) -> list[str]:
    """Tick labels on a log axis, leaving out those closer than ``min_gap``
    of the axis width to the last one labelled (800 next to 1000); the
    values in ``keep`` are always labelled."""
    span = np.log(max(x) / min(x)) or 1.0
    labels: list[str] = []
    last: float | None = None
    for i, v in enumerate(x):
        final = i == len(x) - 1
        crowded = last is not None and not final and np.log(v / last) / span < min_gap
        nearly_last = not final and np.log(x[-1] / v) / span < min_gap
        labels.append(f"{v:g}" if v in keep or not (crowded or nearly_last) else "")
        if labels[-1]:
            last = v
    return labels


def sweep(
    path: Path,
    title: str,
    x: Sequence[float],
    series: Sequence[Series],
    *,
    xlabel: str,
    ylabel: str,
    logx: bool = False,
    hline: tuple[float, str] | None = None,
    ylim: tuple[float, float] | None = (0.0, 100.0),
    reference: Series | None = None,
    integer_x: bool = False,
    logy: bool = False,
    hlines: Sequence[tuple[float, str, Mapping[str, Any]]] = (),
    labelled: Sequence[float] = (),
) -> None:
    """Each series' mean against ``x``, with its seed range as error bars.

    ``reference`` is a curve drawn as a reference, not as data (grey,
    dashed, no markers, unless its style says otherwise; e.g. the fair share
    1/(N+1)); ``hline`` one horizontal line (dark grey, dashed), ``hlines``
    several, each (y, label, style) with its own style over the same
    defaults, so that no two legend entries look alike; ``integer_x`` puts a
    tick at each x (counts: no fractional ticks); ``logy`` uses a log
    y-axis with plain-number ticks (1-2-5 from 0.1 to 100: shares in
    percent, delays in seconds); ``labelled``: x values whose tick is
    labelled on a log axis however close to a neighbour (the paper's 5 BDP
    next to 6).
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.6))
    for s in series:
        ax.errorbar(x, s.mean, yerr=_errors(s), marker="o", capsize=3, linewidth=1.2, label=s.label, **s.style)
    if reference is not None:
        ax.plot(x, reference.mean, label=reference.label, zorder=1,
                **{"color": "gray", "linestyle": "--", "linewidth": 1.0, **reference.style})
    for y, label, style in ([(hline[0], hline[1], {})] if hline is not None else []) + list(hlines):
        ax.axhline(y, label=label, **{"color": "dimgray", "linestyle": "--", "linewidth": 0.8, **style})
    if logx:
        ax.set_xscale("log")
        ax.set_xticks(list(x))
        ax.set_xticklabels(_sparse_log_labels(x, keep=labelled))
        ax.minorticks_off()
    elif integer_x:
        ax.set_xticks(list(x))
        ax.set_xticklabels([f"{v:g}" for v in x])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
        lo, hi = ylim if ylim is not None else ax.get_ylim()
        ticks = [v for v in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100) if lo <= v <= hi]
        ax.set_yticks(ticks)
        ax.set_yticklabels([f"{v:g}" for v in ticks])
        ax.minorticks_off()
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(True, linewidth=0.3)
    ax.legend(fontsize="small")
    ax.set_title(title, fontsize="medium")
    _save(fig, path)


def grouped_bars(
    path: Path,
    title: str,
    groups: Sequence[str],
    series: Sequence[Series],
    *,
    ylabel: str,
    xlabel: str = "",
    hline: tuple[float, str] | None = None,
    ylim: tuple[float, float] | None = (0.0, 100.0),
    references: Sequence[Sequence[float] | None] = (),
    reference_label: str = "the paper",
) -> None:
    """Bars per group, one per series, with their seed ranges.
    ``references``, aligned with ``series``: a value per group (NaN where
    there is none) drawn as a black bar-wide mark on the series' bar (the
    paper's numbers)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(groups) + 2), 4.6))
    width = 0.8 / max(1, len(series))
    x = np.arange(len(groups))
    labelled = False
    for i, s in enumerate(series):
        at = x + (i - (len(series) - 1) / 2) * width
        ax.bar(at, s.mean, width, yerr=_errors(s), capsize=3, label=s.label, **s.style)
        ref = np.asarray(references[i], dtype=float) if i < len(references) and references[i] is not None else None
        if ref is not None and np.isfinite(ref).any():
            ok = np.isfinite(ref)
            ax.hlines(ref[ok], at[ok] - width / 2, at[ok] + width / 2, colors="black", linewidth=2.2, zorder=3,
                      label=None if labelled else reference_label)
            labelled = True
    if hline is not None:
        ax.axhline(hline[0], color="dimgray", linestyle="--", linewidth=0.8, label=hline[1])
    ax.set_xticks(x)
    ax.set_xticklabels(groups)
    ax.set_ylabel(ylabel)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(True, axis="y", linewidth=0.3)
    ax.legend(fontsize="small")
    ax.set_title(title, fontsize="medium")
    _save(fig, path)


def heatmaps(
    path: Path,
    title: str,
    rows: Sequence[float | str],
    cols: Sequence[float],
    maps: Sequence[tuple[str, np.ndarray]],
    *,
    row_label: str,
    col_label: str,
    value_label: str,
    vmin: float = 0.0,
    vmax: float = 100.0,
    center: float | None = None,
    cmap: str = "viridis",
    fmt: str = ".0f",
    per_row: int | None = None,
) -> None:
    """One heat map per (title, values[rows, cols]) on one colour scale
    (``rows`` numbers, or names such as algorithms),
    ``per_row`` of them in each row of panels (default: all in one);
    NaN cells are left blank; every cell is labelled with its value.

    With ``center`` (e.g. the fair share) the scale diverges around it:
    pass a diverging ``cmap`` and limits symmetric around ``center``, so
    that equal distances from it get equal strength of colour. The panels
    share the row axis (labelled once) and are laid out so that no label
    runs into the next panel.
    """
    plt = _pyplot()
    ncols = min(per_row or len(maps), len(maps))
    nrows = -(-len(maps) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols + 1.6, 4.6 * nrows), squeeze=False, sharey=True,
                             layout="constrained")
    for ax in axes.flat[len(maps):]:
        ax.set_visible(False)
    image = None
    for k, (ax, (name, values)) in enumerate(zip(axes.flat, maps)):
        masked = np.ma.masked_invalid(values)
        image = ax.imshow(masked, origin="lower", cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
        ax.set_xticks(range(len(cols)))
        ax.set_xticklabels([f"{c:g}" for c in cols])
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([r if isinstance(r, str) else f"{r:g}" for r in rows])
        ax.set_xlabel(col_label)
        if k % ncols == 0:
            ax.set_ylabel(row_label)
        ax.set_title(name, fontsize="medium")
        for i in range(len(rows)):
            for j in range(len(cols)):
                if np.isfinite(values[i, j]):
                    if center is not None:
                        strong = abs(values[i, j] - center) > 0.6 * max(vmax - center, center - vmin)
                    else:
                        strong = values[i, j] < vmin + 0.55 * (vmax - vmin)
                    ax.text(j, i, format(values[i, j], fmt), ha="center", va="center", fontsize="small",
                            color="white" if strong else "black")
    bar = fig.colorbar(image, ax=list(axes.flat), label=value_label, shrink=0.9)
    if center is not None:
        bar.ax.axhline(center, color="black", linewidth=0.8)
    fig.suptitle(title, fontsize="medium")
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
