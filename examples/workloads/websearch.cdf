# Web search: the flow sizes of a production web-search cluster,
# Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010 (Fig. 4, the
# query and background traffic of a 6,000-server cluster), as the
# datacenter literature simulates it (pFabric, SIGCOMM 2013; HPCC,
# SIGCOMM 2019; Homa, SIGCOMM 2018 as "W5").
#
# The points are those of github.com/datacenter/empirical-traffic-gen,
# file DCTCP_CDF (Alizadeh's traffic generator; its middle column, a line
# index, left out), the same numbers as HPCC's
# traffic_gen/WebSearch_distribution.txt (github.com/alibaba-edu/
# High-Precision-Congestion-Control, there with percentages) and
# HKUST-SING/TrafficGenerator's conf/DCTCP_CDF.txt.
#
# Format (ccarena's size files): "bytes cumulative-probability" per line,
# neither falling, the last probability 1; sizes in between are
# interpolated linearly. Mean 1,711,250 bytes; 53% of the flows are at
# most 80 KB, and the 30% above 1 MB carry 95% of the bytes.
0        0
10000    0.15
20000    0.2
30000    0.3
50000    0.4
80000    0.53
200000   0.6
1000000  0.7
2000000  0.8
5000000  0.9
10000000 0.97
30000000 1
