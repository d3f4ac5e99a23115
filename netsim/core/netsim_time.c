/*
 * netsim_time.c: exact serialisation times in integer picoseconds.
 *
 * bytes * 8 * 10^12 overflows 64 bits past 2.3 MB, so the quotient is
 * built digit by digit in base 10^6: bits = q*rate + r, then r*10^6 and
 * its remainder times 10^6 again.  Each product stays below rate * 10^6,
 * which fits for rate <= NETSIM_RATE_MAX (18 Tb/s).  No 128-bit type is
 * needed and the result is exact (then rounded up: a packet has not left
 * until its last bit has).
 */
#include "netsim_time.h"

#include <assert.h>

netsim_time netsim_time_tx(uint64_t bytes, uint64_t rate_bps) {
  uint64_t bits, q, r, q2, r2, q3, r3;

  assert(rate_bps > 0 && rate_bps <= NETSIM_RATE_MAX);
  assert(bytes <= UINT64_MAX / 8);
  bits = bytes * 8;
  q = bits / rate_bps;
  r = bits % rate_bps;
  q2 = (r * 1000000ULL) / rate_bps;
  r2 = (r * 1000000ULL) % rate_bps;
  q3 = (r2 * 1000000ULL) / rate_bps;
  r3 = (r2 * 1000000ULL) % rate_bps;
  return q * NETSIM_PS_PER_S + q2 * 1000000ULL + q3 + (r3 != 0);
}

uint64_t netsim_time_bytes(netsim_time dt, uint64_t rate_bps) {
  /* dt = a*10^12 + c*10^6 + d; bytes = floor(dt * rate / (8 * 10^12)).
     Each of a*rate, c*rate, d*rate is split into whole bytes and a
     remainder in units of 1/(8*10^12) byte; the remainders are summed
     (below 2.4*10^13) and carried. */
  const uint64_t unit = 8ULL * NETSIM_PS_PER_S;
  uint64_t a = dt / NETSIM_PS_PER_S, b = dt % NETSIM_PS_PER_S;
  uint64_t c = b / 1000000ULL, d = b % 1000000ULL;
  uint64_t A = a * rate_bps, B = c * rate_bps, C = d * rate_bps;
  uint64_t whole, rem;

  assert(rate_bps <= NETSIM_RATE_MAX);
  whole = A / 8 + B / 8000000ULL + C / unit;
  rem = (A % 8) * NETSIM_PS_PER_S + (B % 8000000ULL) * 1000000ULL + C % unit;
  return whole + rem / unit;
}

uint64_t netsim_time_ps_per_byte(uint64_t rate_bps) {
  const uint64_t ps_bits = 8ULL * NETSIM_PS_PER_S;

  if (rate_bps == 0 || ps_bits % rate_bps != 0) {
    return 0;
  }
  return ps_bits / rate_bps;
}
