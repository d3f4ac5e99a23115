/*
 * netsim_time.h: picosecond time and exact rate arithmetic (docs/netsim.md,
 * "Time").  The public functions are declared in <netsim/netsim.h>.
 */
#ifndef NETSIM_TIME_H
#define NETSIM_TIME_H

#include <netsim/netsim.h>

/* NETSIM_PS_PER_S is the number of picoseconds in a second. */
#define NETSIM_PS_PER_S 1000000000000ULL

/* netsim_time_ps_per_byte returns the exact serialisation time of one byte
   at |rate_bps| when it is a whole number of picoseconds (80 at 100 Gb/s,
   20 at 400 Gb/s), or 0 when it is not (then callers use
   netsim_time_tx on cumulative bytes). */
uint64_t netsim_time_ps_per_byte(uint64_t rate_bps);

#endif /* NETSIM_TIME_H */
