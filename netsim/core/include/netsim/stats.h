/*
 * <netsim/stats.h>: statistics: link shares, the busiest links and queue
 * sampling (docs/netsim.md, "Statistics"). Part of netsim's API: include
 * <netsim/netsim.h>, which includes this header after the ones whose types
 * it uses.
 */
#ifndef NETSIM_STATS_API_H
#define NETSIM_STATS_API_H

#ifndef NETSIM_H
#  error "include <netsim/netsim.h>, not <netsim/stats.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* netsim_stats_share writes to |share[i]| the fraction of the bytes sent
   on links |ids[0..n-1]| that went over link ids[i] (all 0 if none did)
   and returns the total bytes.  Use it on a switch's uplinks to see how
   ECMP spread the load. */
uint64_t netsim_stats_share(netsim_sim *sim, const uint32_t *ids, uint32_t n,
                            double *share);

/* What netsim_stats_busiest ranks links by. */
typedef enum netsim_busy_by {
  /* NETSIM_BUSY_BYTES: bytes that reached the far end. */
  NETSIM_BUSY_BYTES = 0,
  /* NETSIM_BUSY_QUEUE: mean queue depth (q_byte_ps). */
  NETSIM_BUSY_QUEUE,
  /* NETSIM_BUSY_MAX_QUEUE: deepest queue. */
  NETSIM_BUSY_MAX_QUEUE
} netsim_busy_by;

/* netsim_stats_busiest writes the ids of the up to |n| busiest links by
   |by| into |ids|, busiest first (ties by lower id), and returns how many.
   Returns 0 if the work array cannot be allocated. */
uint32_t netsim_stats_busiest(netsim_sim *sim, netsim_busy_by by, uint32_t n,
                              uint32_t *ids);

typedef struct netsim_sampler netsim_sampler;

/* netsim_sampler_new samples the queue depth of links |ids[0..n-1]| every
   |period| from |start| until |max_samples| samples are taken.  Returns
   0, NETSIM_ERR_INVAL, NETSIM_ERR_NOENT (bad link id) or
   NETSIM_ERR_NOMEM. */
int netsim_sampler_new(netsim_sampler **psmp, netsim_sim *sim,
                       const uint32_t *ids, uint32_t n, netsim_time start,
                       netsim_time period, uint32_t max_samples);

/* netsim_sampler_del stops and frees |smp| (NULL is fine); call it before
   netsim_sim_del. */
void netsim_sampler_del(netsim_sampler *smp);

/* netsim_sampler_count returns the number of samples taken. */
uint32_t netsim_sampler_count(const netsim_sampler *smp);

/* netsim_sampler_time returns when sample |i| was taken. */
netsim_time netsim_sampler_time(const netsim_sampler *smp, uint32_t i);

/* netsim_sampler_bytes returns link j's (|ids[j]|) queue depth in bytes
   at sample |i|. */
uint64_t netsim_sampler_bytes(const netsim_sampler *smp, uint32_t i,
                              uint32_t j);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_STATS_API_H */
