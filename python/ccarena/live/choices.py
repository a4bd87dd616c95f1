"""The live testbed's choices (``ccarena live run --senders/--qdisc/
--socket-buffers``), apart from testbed.py so that every command's parser
can list them without importing the testbed."""

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
