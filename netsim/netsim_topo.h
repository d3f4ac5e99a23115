/*
 * netsim_topo.h: topology builders (fat tree, leaf-spine, dumbbell); the
 * public calls are in netsim.h.
 */
#ifndef NETSIM_TOPO_H
#define NETSIM_TOPO_H

#include "netsim.h"

#endif /* NETSIM_TOPO_H */
