"""What the experiments beyond the papers share: their "paper" (none: a
package of questions), the algorithms they compare, and a topology's
scenario document."""

from __future__ import annotations

from typing import Any

from .. import common, variants
from ..bbq.paper import BBQ
from ..blog.fairness_map import BBR3
from ..cws.paper import BBR_CWS
from ..framework import Paper, Variant

PAPER = Paper(
    key="beyond",
    title="beyond the papers",
    citation="questions the papers do not ask, on topologies they do not run: a parking lot, traffic both ways; "
    "shown, not judged (no paper states a number for them)",
    file="",
)

BBR = variants.BBR
CUBIC = variants.CUBIC
#: The algorithms the parking lot compares: BBR v1 and v3, the two fixes
#: of its unfairness the papers propose, and loss-based CUBIC.
ALGORITHMS: tuple[Variant, ...] = (BBR, BBR3, BBQ, BBR_CWS, CUBIC)

seeds = variants.seeds
#: A --quick run gives no verdicts (there are none here either).
finish = common.finish


def link(name: str, rate_mbps: float, buffer_bdp: float, delay_ms: float = 0.0) -> dict[str, Any]:
    """A ``[[link]]`` table: droptail, ``buffer_bdp`` BDPs of the longest
    base RTT crossing it."""
    entry: dict[str, Any] = {"name": name, "rate": f"{rate_mbps:g}Mbit", "buffer": variants.buffer(buffer_bdp)}
    if delay_ms:
        entry["delay"] = f"{delay_ms:g}ms"
    return entry


def topology(links: list[dict[str, Any]], flows: list[dict[str, Any]], *, seed: int, duration: float,
             window: tuple[float, float]) -> dict[str, Any]:
    """A scenario document over ``links``, measured over ``window``."""
    return {
        "duration": f"{duration:g}s",
        "seed": seed,
        "measure": {"from": f"{window[0]:g}s", "to": f"{window[1]:g}s"},
        "link": links,
        "flow": flows,
    }
