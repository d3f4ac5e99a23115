/*
 * netsim_traffic.h: built-in constant-rate and closed-loop window flows
 * for tests and the benchmark; the public calls are in netsim.h.
 */
#ifndef NETSIM_TRAFFIC_H
#define NETSIM_TRAFFIC_H

#include "netsim.h"

#endif /* NETSIM_TRAFFIC_H */
