"""The BBR-CWS paper: Song, Kim, Cho, "BBR-CWS: Improving the
Inter-Protocol Fairness of BBR", Electronics 2020, 9(5), 862
(../shared/papers/bbr-cws-song-2020.txt). Every figure with data on the
simulator; :mod:`.paper` holds the testbeds, the algorithm variants and
the measures (Jain's index per 0.1 s, leader changes) they share.
"""

from __future__ import annotations

from ..framework import Experiment
from . import fig4, fig5_6, fig8, fig9_12, fig13, fig14_15, table2
from .paper import PAPER

#: In the paper's order.
EXPERIMENTS: tuple[Experiment, ...] = (
    fig4.EXPERIMENT,
    fig5_6.EXPERIMENT,
    fig8.EXPERIMENT,
    fig9_12.EXPERIMENT,
    fig13.EXPERIMENT,
    table2.EXPERIMENT,
    fig14_15.EXPERIMENT,
)

__all__ = ["EXPERIMENTS", "PAPER"]
