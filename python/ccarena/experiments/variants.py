"""What every paper package shares: the baseline algorithms, the seeds a
verdict needs, and Linux BBR as older kernels ran it.

One definition per fact; a paper's ``paper.py`` re-exports these under
its own names where its text uses them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

from .. import units
from .framework import MIN_SEEDS, Variant

#: cc/bbr.c: Linux 6.x BBR v1 (cc/include/bbr_core.h).
BBR = Variant("bbr", "bbr", label="BBR")
#: cc/cubic.c: Linux's CUBIC with HyStart.
CUBIC = Variant("cubic", "cubic", label="CUBIC")

#: Seeds per point: MIN_SEEDS, the fewest a verdict is judged over. The
#: papers show single runs without error bars; the spread over seeds (the
#: random ProbeBW start phase) is the only spread a verdict can use
#: (docs/experiments.md, "When a row agrees").
SEEDS: tuple[int, ...] = tuple(range(1, MIN_SEEDS + 1))
#: --quick: 30-s runs, one seed (a smoke test, not a reproduction).
QUICK_DURATION_S = 30


#: Inside :func:`first_seeds` (a live pass, linux.py): how many of the
#: seeds to run. A context variable, so that the limit holds only for the
#: code it wraps.
_SEED_LIMIT: ContextVar[int | None] = ContextVar("seed_limit", default=None)


def seeds(quick: bool) -> tuple[int, ...]:
    """The seeds of each point: all of SEEDS, or the first with --quick
    (or the first N inside :func:`first_seeds`)."""
    chosen = SEEDS[:1] if quick else SEEDS
    limit = _SEED_LIMIT.get()
    return chosen if limit is None else chosen[:limit]


@contextmanager
def first_seeds(n: int) -> Iterator[None]:
    """Every experiment runs (and analyses) only its first ``n`` seeds
    while the block runs: a live pass's repetitions."""
    token = _SEED_LIMIT.set(n)
    try:
        yield
    finally:
        _SEED_LIMIT.reset(token)

#: BBR before Linux 4.19/4.20 (the 4.9 and 4.14 kernels the papers ran)
#: lacks two things of the Linux 6.x BBR in bbr_core.h: the ACK-aggregation
#: allowance in cwnd and the 1% pacing margin. These parameters switch
#: both off.
OLDER_LINUX_PARAMS = MappingProxyType({"extra_acked_gain": 0, "pacing_margin": 0})


def older_linux(variant: Variant, version: str) -> Variant:
    """``variant`` with Linux ``version``'s cwnd and pacing ("bbr-linux49"
    for "4.9"): an ablation next to our Linux 6.x BBR."""
    return variant.derive(f"{variant.name}-linux{version.replace('.', '')}", OLDER_LINUX_PARAMS,
                          label=f"{variant.label}, Linux {version} cwnd/pacing")


def buffer(bdp: float) -> str:
    """A buffer of ``bdp`` bandwidth-delay products (scenario size string)."""
    return f"{bdp:g}bdp"


def scenario(
    flows: list[dict[str, Any]],
    *,
    seed: int,
    duration: float,
    rate: str,
    buffer: str,
    window: tuple[float, float] | None = None,
    interval: str | None = None,
    **bottleneck: Any,
) -> dict[str, Any]:
    """A scenario document: ``flows`` (from :func:`flow`) through one
    bottleneck of ``rate`` and ``buffer`` (plus any other ``[bottleneck]``
    keys: ``loss``, ``policer``, ``schedule``, ...), measured over
    ``window`` (default: the whole run), telemetry every ``interval``."""
    lo, hi = window if window is not None else (0.0, duration)
    doc: dict[str, Any] = {
        "duration": f"{duration:g}s",
        "seed": seed,
        "measure": {"from": f"{lo:g}s", "to": f"{hi:g}s"},
        "bottleneck": {"rate": rate, "buffer": buffer, **bottleneck},
        "flow": flows,
    }
    if interval is not None:
        doc["output"] = {"interval": interval}
    return doc


def flow(variant: Variant, rtt_ms: float, **extra: Any) -> dict[str, Any]:
    """A ``[[flow]]`` entry running ``variant`` (its cc and params) at
    base RTT ``rtt_ms``; ``extra`` adds fields (count, stop, rtt_schedule)."""
    if not isinstance(variant, Variant):
        raise TypeError(f"flow() takes a Variant, not {variant!r}")
    fields = variant.flow_fields()
    entry: dict[str, Any] = {"cc": fields["cc"], "rtt": f"{rtt_ms:g}ms"}
    if "params" in fields:
        entry["params"] = fields["params"]
    entry.update(extra)
    return entry
