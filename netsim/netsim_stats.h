/*
 * netsim_stats.h: counters, per-port shares, busiest links and queue-depth
 * sampling; the public calls are in netsim.h.
 */
#ifndef NETSIM_STATS_H
#define NETSIM_STATS_H

#include "netsim.h"

#endif /* NETSIM_STATS_H */
