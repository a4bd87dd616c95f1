"""The scorecard's views: scorecard.md, scorecard.png (small multiples)
and the section of ``ccarena report`` — all rendered from scorecard.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RECORD = "scorecard.json"
MARKDOWN = "scorecard.md"
FIGURE = "scorecard.png"


def _fmt(entry: dict[str, Any], unit: str) -> str:
    m, ci = entry["mean"], entry["ci95"]
    if m is None:
        return "n/a"
    digits = {"": 3, "%": 2}.get(unit, 1)
    text = f"{m:.{digits}f}"
    if ci is not None:
        text += f" ± {ci:.{digits}f}"
    return text + (f" {unit}" if unit else "")


def table_rows(record: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    header = ["rank", "algorithm", "mean rank"] + [
        f"{c['label']} ({'↑' if c['better'] == 'higher' else '↓'})" for c in record["criteria"]
    ]
    rows = []
    for o in record["overall"]:
        cc = o["cc"]
        cells = [str(o["rank"]), cc, f"{o['mean_rank']:.2f}"]
        for c in record["criteria"]:
            e = c["scores"][cc]
            cells.append(f"{_fmt(e, c['unit'])} (#{e['rank']:g})")
        rows.append(cells)
    return header, rows


def markdown(record: dict[str, Any]) -> str:
    header, rows = table_rows(record)
    lines = [
        "# ccarena scorecard",
        "",
        f"{len(record['algorithms'])} algorithms, seeds {', '.join(map(str, record['seeds']))}; "
        f"each cell: mean over seeds ± 95% confidence interval (Student t), then its rank for that criterion. "
        f"Overall: the mean of the ranks.",
        "",
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += ["", "## Criteria", ""]
    lines += [f"- **{c['label']}** ({c['better']} is better): {c['meaning']}." for c in record["criteria"]]
    lines += ["", f"![small multiples]({FIGURE})", ""]
    return "\n".join(lines)


def figure(record: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    crits = record["criteria"]
    order = [o["cc"] for o in record["overall"]]
    cols = 5
    nrows = (len(crits) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(3.4 * cols, 3.1 * nrows), dpi=100, squeeze=False)
    for ax, c in zip(axes.flat, crits):
        means = [c["scores"][cc]["mean"] or 0.0 for cc in order]
        # The interval as the record cuts it to the criterion's range (no
        # delay below 0 ms): whiskers below and above each mean.
        spans = [c["scores"][cc].get("interval") or (m, m) for cc, m in zip(order, means)]
        errors = [[m - lo for m, (lo, _) in zip(means, spans)], [hi - m for m, (_, hi) in zip(means, spans)]]
        y = range(len(order))
        ax.barh(list(y), means, xerr=errors, color="#4c72b0", capsize=2)
        ax.set_yticks(list(y), order, fontsize=8)
        ax.invert_yaxis()
        arrow = "higher better" if c["better"] == "higher" else "lower better"
        ax.set_title(f"{c['label']}\n({arrow})", fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        if c["unit"]:
            ax.set_xlabel(c["unit"], fontsize=8)
    for ax in list(axes.flat)[len(crits):]:
        ax.axis("off")
    fig.suptitle("ccarena scorecard: algorithms in overall rank order (best at the top); "
                 "whiskers: 95% interval, cut to the criterion's range", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)


def write_outputs(out: Path, record: dict[str, Any]) -> None:
    from ..rundir import atomic_file, write_file_atomic

    write_file_atomic(out / RECORD, json.dumps(record, indent=1, allow_nan=False) + "\n")
    write_file_atomic(out / MARKDOWN, markdown(record) + "\n")
    with atomic_file(out / FIGURE) as tmp:
        figure(record, tmp)  # PNG, matplotlib's default format


def html_section(d: Path):
    from ..html import page as h
    from ..html.sources import Section

    record = json.loads((d / RECORD).read_text(encoding="utf-8"))
    header, rows = table_rows(record)
    parts = [
        f'<p class="meta">{h.esc(d)} — {len(record["algorithms"])} algorithms, seeds '
        f'{h.esc(", ".join(map(str, record["seeds"])))}</p>',
        "<p>Each cell: mean over seeds ± the 95% confidence interval (Student t), then the rank for that "
        "criterion (↑ higher is better, ↓ lower). Overall: the mean of the ranks.</p>",
        h.table(header, rows, numeric=range(2, len(header))),
        "<ul>" + "".join(f"<li><b>{h.esc(c['label'])}</b>: {h.esc(c['meaning'])}.</li>" for c in record["criteria"]) + "</ul>",
    ]
    if (d / FIGURE).is_file():
        parts.append(h.image(d / FIGURE, "Small multiples: one panel per criterion, algorithms in overall rank order"))
    parts.append(f"<p>Run it again (cached points are reused): <code>{h.esc('ccarena scorecard --out ' + str(d))}</code></p>")
    return Section(f"scorecard-{d.name}".lower(), f"Scorecard {d.name}", "scorecard", "".join(parts))
