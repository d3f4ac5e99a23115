/*
 * srd_rtt.h: round-trip time estimator, RFC 6298 smoothing in nanoseconds.
 * One runs per path and one per peer (over all of its paths).
 *
 * The functions are defined in srd_rtt.c; an estimator is plain caller
 * storage, nothing is allocated, nothing fails.
 */
#ifndef SRD_RTT_H
#define SRD_RTT_H

#include <stdint.h>

#include <srd/srd.h>

/* srd_rtt is one RTT estimator. */
typedef struct srd_rtt {
  /* srtt is the smoothed RTT, 0 before the first sample. */
  srd_duration srtt;
  /* rttvar is the smoothed mean deviation. */
  srd_duration rttvar;
  /* min_rtt is the smallest sample seen (the base RTT), UINT64_MAX before
     the first. */
  srd_duration min_rtt;
  /* latest is the most recent sample. */
  srd_duration latest;
  /* samples counts samples. */
  uint64_t samples;
} srd_rtt;

/* srd_rtt_init resets |rtt| (any contents) to "no sample yet". */
void srd_rtt_init(srd_rtt *rtt);

/* srd_rtt_update folds |sample| into |rtt|: srtt += (s - srtt)/8,
   rttvar += (|s - srtt| - rttvar)/4, the first sample sets srtt = s and
   rttvar = s/2 (RFC 6298 section 2).  It also updates min_rtt, latest
   and samples.  A sample of 0 is taken as given; callers drop samples
   they cannot trust (srd_tx.c). */
void srd_rtt_update(srd_rtt *rtt, srd_duration sample);

/* srd_rtt_rto returns srtt + max(4 rttvar, |granularity|) + |ack_delay|,
   at least |rto_min|; before any sample max(|rto_initial|, |rto_min|).
   No backoff and no cap: srd_ep_rto adds both. */
srd_duration srd_rtt_rto(const srd_rtt *rtt, srd_duration rto_min,
                         srd_duration rto_initial, srd_duration ack_delay,
                         srd_duration granularity);

#endif /* SRD_RTT_H */
