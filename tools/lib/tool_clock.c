/*
 * tool_clock.c: the wall clock and peak memory (tool_clock.h).
 */
#include "tool_clock.h"

#include <sys/resource.h>
#include <time.h>

uint64_t tool_now_ns(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double tool_now_s(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double tool_peak_rss_mb(void) {
  struct rusage ru;

  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}
