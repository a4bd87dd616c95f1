"""The live testbed's choices (``ccarena live run --senders/--qdisc/
--socket-buffers/--app/--delays``), apart from testbed.py so that every
command's parser can list them without importing the testbed."""

#: Where the senders run (``ccarena live run --senders``): every flow from
#: one namespace with an address each, or each flow from a namespace of its
#: own (its own stack, veth and qdisc; the router bridges the veths), as a
#: testbed of one host per sender has it.
SENDERS = ("shared", "separate")
#: The kernel bottleneck's shaper (``--qdisc``): TBF, which cuts GSO send
#: units into wire packets before the FIFO (see testbed.install_bottleneck), or
#: HTB, which queues, shapes and drops them whole, as testbeds built with
#: HTB do.
QDISCS = ("tbf", "htb")
#: The hosts' TCP socket buffer limits (``--socket-buffers``): ccarena's
#: (_TCP_MEM, up to 64 MB) or the kernel's defaults, as a host nobody
#: tuned has them.
SOCKET_BUFFERS = ("ccarena", "default")
#: The application that carries the flows (``--app``): ccarena's agents
#: (agent.py: TCP_INFO and BPF state every tick, exact loss accounting) or
#: iperf3, a client per flow and a server per flow at the receiver, its
#: goodput counted by the receiving iperf3 (iperf3.py), as testbeds built
#: around iperf3 count it.
APPS = ("agent", "iperf3")
#: Where the flows' base RTTs are applied (``--delays``): one delay line
#: for every flow, or a delay line and TUN device of its own per sender
#: (with separate senders), as testbeds with a delay per sender have it.
DELAYS = ("delay-line", "per-sender")
