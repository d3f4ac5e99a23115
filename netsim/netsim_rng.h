/*
 * netsim_rng.h: seeded random streams.  The public functions are declared
 * in netsim.h; nothing else is needed across modules.
 */
#ifndef NETSIM_RNG_H
#define NETSIM_RNG_H

#include "netsim.h"

#endif /* NETSIM_RNG_H */
