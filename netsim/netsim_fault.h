/*
 * netsim_fault.h: link failures with delayed routing reconvergence,
 * degraded rates and random loss; the public calls are in netsim.h.
 */
#ifndef NETSIM_FAULT_H
#define NETSIM_FAULT_H

#include "netsim.h"

/* What a scheduled fault does. */
#define NETSIM_FAULT_OP_DOWN 1u
#define NETSIM_FAULT_OP_UP 2u
#define NETSIM_FAULT_OP_ROUTE_DOWN 3u
#define NETSIM_FAULT_OP_ROUTE_UP 4u
#define NETSIM_FAULT_OP_DEGRADE 5u

#endif /* NETSIM_FAULT_H */
