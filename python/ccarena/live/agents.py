"""ccarena's own application for a live run (``--app agent``, the
default): a receiver agent in the receiver namespace and a sender agent
that opens every flow's and workload's connections (agent.py), children
of the engine (processes.Child). The same interface as iperf3.Iperf3App:
``start(t0)``, ``wait_traffic(deadline)``, ``results()``."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from ..errors import ScenarioError
from . import testbed, workloads
from .agent import APP_UNSENT_BYTES, DRAIN_S
from .capacity import fastest_rate_bps
from .ccs import cc_key
from .processes import READY_TIMEOUT_S, Child


#: What a flow that stops before the run's end may hold unsent in its
#: socket (TCP_NOTSENT_LOWAT), in seconds of the fastest link's rate, at
#: least APP_UNSENT_BYTES: the simulator's flow stops sending at its stop,
#: where a socket that took megabytes (64-MB buffers) sent them after it
#: (bbq-fig13's departing 10 ms flow kept the queue full 2.6 s after its
#: stop). 20 ms leaves the writer room to refill it in time.
STOP_UNSENT_S = 0.02


def stop_unsent_bytes(cfg: dict[str, Any]) -> int:
    """TCP_NOTSENT_LOWAT of a flow that stops (STOP_UNSENT_S)."""
    return max(APP_UNSENT_BYTES, int(fastest_rate_bps(cfg) * STOP_UNSENT_S / 8))


class Agents:
    def __init__(self, cfg: dict[str, Any], names: testbed.Names, kernel_cc: dict, endpoints: list[dict[str, Any]],
                 arrivals: list[tuple[int, int, int, int]], children: list[Child]) -> None:
        flows = cfg["flows"]
        timing = {"interval_ns": cfg["interval_ns"], "duration_ns": cfg["duration_ns"]}
        ports = [testbed.BASE_PORT + i for i in range(len(endpoints))]
        sizes = [None if f.get("size_bytes") is None else workloads.payload_bytes(f["size_bytes"], cfg["mss"])
                 for f in flows]
        wls = cfg.get("workloads") or []
        agent = [sys.executable, "-m", "ccarena.live.agent"]
        receiver_cfg = {**timing, "addr": testbed.RECEIVER_ADDR, "ports": ports[:len(flows)], "sizes": sizes}
        sender_cfg: dict[str, Any] = {**timing}
        if wls:
            both = {"ports": ports[len(flows):], "source_port_base": workloads.SOURCE_PORT_BASE}
            receiver_cfg["workload"] = {**both, "targets": [a[3] for a in arrivals]}
            sender_cfg["workload"] = {**both, "flows": [[w, t, size] for w, t, _, size in arrivals],
                                      "max_active": [w["max_active"] for w in wls],
                                      "cc": [kernel_cc[cc_key(w)] for w in wls], "dst": testbed.RECEIVER_ADDR,
                                      "src": [testbed.flow_addr(len(flows) + j) for j in range(len(wls))]}
        self.receiver = Child("receiver", ["ip", "netns", "exec", names.rx, *agent, "recv", json.dumps(receiver_cfg)])
        children.append(self.receiver)
        sender_cfg["flows"] = [
            {"src": testbed.flow_addr(i), "dst": testbed.RECEIVER_ADDR, "port": ports[i],
             "cc": kernel_cc[cc_key(f)], "start_ns": f["start_ns"], "stop_ns": f["stop_ns"],
             **({"size": sizes[i]} if sizes[i] is not None else {}),
             **({"app": app_schedule(cfg, i)} if f.get("app") else {}),
             **({"unsent_bytes": stop_unsent_bytes(cfg)} if f["stop_ns"] is not None and not f.get("app") else {}),
             **({"netns": f"/run/netns/{names.senders[i]}"} if names.senders else {})}
            for i, f in enumerate(flows)
        ]
        self.sender = Child("sender", ["ip", "netns", "exec", names.tx, *agent, "send", json.dumps(sender_cfg)])
        children.append(self.sender)
        deadline = time.monotonic() + READY_TIMEOUT_S
        if self.receiver.next_line(deadline) != "ready":
            raise ScenarioError("live", "receiver did not start")
        line = self.sender.next_line(deadline)
        if line != "ready":
            raise ScenarioError("live", json.loads(line).get("error", line))
        self.rx_doc: dict[str, Any] = {}
        self.deadline = 0.0

    def start(self, t0: int) -> None:
        self.receiver.send(str(t0))
        self.sender.send(str(t0))

    def wait_traffic(self, deadline: float) -> None:
        """Until the receiver's last tick (its per-tick counts)."""
        self.rx_doc = json.loads(self.receiver.next_line(deadline))
        self.deadline = deadline

    def results(self) -> tuple[dict[str, Any], dict[str, Any], None]:
        tx_doc = json.loads(self.sender.next_line(self.deadline + DRAIN_S))  # after the network drained
        self.receiver.send("end")
        self.rx_doc.update(json.loads(self.receiver.next_line(time.monotonic() + 5)))
        return self.rx_doc, tx_doc, None


def app_schedule(cfg: dict[str, Any], i: int) -> dict[str, Any]:
    """Flow i's application for the sender agent: its rate and its ON
    periods, the simulator's own draws (crates/sim/src/app.rs)."""
    from .. import _core

    return {"rate_bps": cfg["flows"][i]["app"].get("rate_bps"), "mss": cfg["mss"],
            "on": _core.app_on_periods(json.dumps(cfg), i)}
