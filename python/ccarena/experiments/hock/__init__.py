"""Hock et al.: M. Hock, R. Bless, M. Zitterbart, "Experimental Evaluation
of BBR Congestion Control", IEEE ICNP 2017 (the talk's slides,
../shared/papers/hock-2017-bbr-evaluation-slides.txt). Each experiment of
the slides on the simulator; :mod:`.paper` holds the testbed and the
measures the experiments share.
"""

from __future__ import annotations

from ..framework import Experiment
from . import intra, large_buffer, model, rtt, single, small_buffer, vs_cubic
from .paper import PAPER

#: In the slides' order.
EXPERIMENTS: tuple[Experiment, ...] = (
    model.EXPERIMENT,
    single.EXPERIMENT,
    large_buffer.EXPERIMENT,
    small_buffer.EXPERIMENT,
    vs_cubic.EXPERIMENT,
    intra.EXPERIMENT,
    rtt.EXPERIMENT,
)

__all__ = ["EXPERIMENTS", "PAPER"]
