/*
 * tool_clock.h: the wall clock and the memory a benchmark reports.  Only
 * the benchmarks (srd-bench, netsim-bench, udp-baseline, srd-sim bench)
 * time themselves; libsrd, netsim and the tests never read a clock
 * (shared/style.md 2.3).
 */
#ifndef TOOL_CLOCK_H
#define TOOL_CLOCK_H

#include <stdint.h>

/* tool_now_ns returns CLOCK_MONOTONIC in nanoseconds: for intervals,
   never for dates. */
uint64_t tool_now_ns(void);

/* tool_now_s returns CLOCK_MONOTONIC in seconds. */
double tool_now_s(void);

/* tool_peak_rss_mb returns the process's peak resident memory so far in
   MiB (getrusage's ru_maxrss, which Linux counts in KiB, over 1024). */
double tool_peak_rss_mb(void);

#endif /* TOOL_CLOCK_H */
