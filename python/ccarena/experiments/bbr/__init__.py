"""The BBR paper: N. Cardwell, Y. Cheng, C. S. Gunn, S. Hassas Yeganeh,
V. Jacobson, "BBR: Congestion-Based Congestion Control", ACM Queue 14(5),
2016 (../shared/papers/bbr-cardwell-2016.txt). Every figure with data from
a controlled path (Figs. 1-6, 8, 10) and the token-bucket policer of its
text on the simulator; :mod:`.paper` holds the testbeds and the measures
they share. Figs. 7 and 9 are Google production data (B4, YouTube) and
have no scenario to run.
"""

from __future__ import annotations

from ..framework import Experiment
from . import delayed_acks, fig1, fig2, fig3, fig4_5, fig6, fig8, fig10, policer, probe_rtt, vs_loss_based
from .paper import PAPER

#: In the paper's order.
EXPERIMENTS: tuple[Experiment, ...] = (
    fig1.EXPERIMENT,
    fig2.EXPERIMENT,
    fig3.EXPERIMENT,
    fig4_5.EXPERIMENT,
    fig6.EXPERIMENT,
    fig8.EXPERIMENT,
    fig10.EXPERIMENT,
    policer.EXPERIMENT,
    probe_rtt.EXPERIMENT,
    vs_loss_based.EXPERIMENT,
    delayed_acks.EXPERIMENT,
)

__all__ = ["EXPERIMENTS", "PAPER"]
