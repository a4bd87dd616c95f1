# Data mining: the flow sizes of a data-mining cluster, Greenberg et al.,
# "VL2: A Scalable and Flexible Data Center Network", SIGCOMM 2009
# (Fig. 2), as the datacenter literature simulates it (pFabric,
# SIGCOMM 2013; CONGA, SIGCOMM 2014; Homa, SIGCOMM 2018 as "W4").
#
# The points are those of github.com/datacenter/empirical-traffic-gen,
# file VL2_CDF.txt (Alizadeh's traffic generator; its middle column, a
# line index, left out), the same numbers as HKUST-SING/TrafficGenerator's
# conf/VL2_CDF.txt and the ns-3 load-balancing simulations'
# examples/load-balance/VL2_CDF.txt.
#
# Format (ccarena's size files): "bytes cumulative-probability" per line,
# neither falling, the last probability 1; sizes in between are
# interpolated linearly. Mean about 12.66 MB, and heavy-tailed: 80% of the
# flows are at most 10 KB, while the 2% above 100 MB carry 87% of the
# bytes (so a run needs minutes at 10 Gbit/s to see the tail).
0          0
180        0.1
216        0.2
560        0.3
900        0.4
1100       0.5
1870       0.6
3160       0.7
10000      0.8
400000     0.9
3160000    0.95
100000000  0.98
1000000000 1
