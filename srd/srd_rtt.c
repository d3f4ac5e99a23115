/*
 * srd_rtt.c: RTT estimator.
 */
#include "srd_rtt.h"

#include "srd_macro.h"

void srd_rtt_init(srd_rtt *rtt) {
  rtt->srtt = 0;
  rtt->rttvar = 0;
  rtt->min_rtt = UINT64_MAX;
  rtt->latest = 0;
  rtt->samples = 0;
}

void srd_rtt_update(srd_rtt *rtt, srd_duration sample) {
  srd_duration dev;

  rtt->latest = sample;
  if (sample < rtt->min_rtt) {
    rtt->min_rtt = sample;
  }
  if (rtt->samples++ == 0) {
    rtt->srtt = sample;
    rtt->rttvar = sample / 2;
    return;
  }
  dev = sample > rtt->srtt ? sample - rtt->srtt : rtt->srtt - sample;
  /* rttvar = 3/4 rttvar + 1/4 dev; srtt = 7/8 srtt + 1/8 sample. */
  rtt->rttvar = (3 * rtt->rttvar + dev) / 4;
  rtt->srtt = (7 * rtt->srtt + sample) / 8;
}

srd_duration srd_rtt_rto(const srd_rtt *rtt, srd_duration rto_min,
                         srd_duration rto_initial, srd_duration ack_delay,
                         srd_duration granularity) {
  srd_duration rto;

  if (rtt->samples == 0) {
    return srd_max(rto_initial, rto_min);
  }
  rto = rtt->srtt + srd_max(4 * rtt->rttvar, granularity) + ack_delay;
  return srd_max(rto, rto_min);
}
