"""The RTT-tuning blog: "BBR v2: A model-based congestion control - RTT
fairness tuning" (2020; ../shared/papers/bbrv2-rtt-tuning-blog-2020.txt):
BBR's RTT unfairness over the RTT ratio and the absolute difference, and
the fixes it names - its own tuning (a 5-10% pacing margin, a send
quantum linear in RTT), BBQ and DA-BBR - on the simulator, judged on BBRv2
(the blog's algorithm, cc/bbr2.c) and its tuning, next to BBR, BBRv3 (each
also tuned) and CUBIC.
"""

from __future__ import annotations

from ..framework import Experiment, Paper
from . import fairness_map

PAPER = Paper(
    key="blog",
    title="BBRv2 RTT-fairness tuning (blog)",
    citation="\"BBR v2: RTT fairness tuning\", blog post, 2020: BBR's RTT unfairness depends on both the RTT "
    "ratio and the absolute difference; a 5-10% pacing margin and a send quantum linear in RTT fix it",
    file="bbrv2-rtt-tuning-blog-2020.txt",
)

#: In the blog's order.
EXPERIMENTS: tuple[Experiment, ...] = (fairness_map.EXPERIMENT,)

__all__ = ["EXPERIMENTS", "PAPER"]
