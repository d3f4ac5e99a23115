/*
 * <netsim/rng.h>: random streams: the impairment model's generator and
 * netsim's stream classes (docs/netsim.md, "Determinism and seeds"). Part of
 * netsim's API: include <netsim/netsim.h>, which includes this header after
 * the ones whose types it uses.
 */
#ifndef NETSIM_RNG_API_H
#define NETSIM_RNG_API_H

#ifndef NETSIM_H
#  error "include <netsim/netsim.h>, not <netsim/rng.h>"
#endif

#include "impair.h"

#ifdef __cplusplus
extern "C" {
#endif

/* netsim_rng is one random stream: the impairment model's generator
   (impair_rng, splitmix64: one word of state), which every draw in netsim
   comes from. */
typedef impair_rng netsim_rng;

/* Stream classes: a component's stream is (master seed, class, id), so
   adding a link leaves every other component's stream unchanged.  A
   link's streams are its impairment model's (netsim_link_set_loss, _ber,
   _dup; impair.h's IMPAIR_STREAM_*): loss, bit errors and duplication
   each from its own, so that turning one on leaves the others' draws as
   they were; a host NIC's send jitter (netsim_host_set_tx_jitter) from
   the NIC link's jitter stream. */
#define NETSIM_STREAM_LINK IMPAIR_STREAM_LOSS
#define NETSIM_STREAM_SWITCH 2u
#define NETSIM_STREAM_TRAFFIC 3u
#define NETSIM_STREAM_CORRUPT IMPAIR_STREAM_CORRUPT
#define NETSIM_STREAM_DUP IMPAIR_STREAM_DUP
#define NETSIM_STREAM_JITTER IMPAIR_STREAM_JITTER
#define NETSIM_STREAM_USER 16u

/* netsim_rng_init seeds |rng| with the stream |id| of class |cls| derived
   from |master|. */
void netsim_rng_init(netsim_rng *rng, uint64_t master, uint32_t cls,
                     uint64_t id);

/* netsim_rng_next returns the next 64 random bits of |rng|. */
uint64_t netsim_rng_next(netsim_rng *rng);

/* netsim_rng_below returns a uniform value in [0, |n|), |n| > 0. */
uint32_t netsim_rng_below(netsim_rng *rng, uint32_t n);

/* netsim_rng_threshold converts probability |p| into the threshold that
   netsim_rng_next() values fall below with probability |p| (0 for p <= 0,
   UINT64_MAX for p >= 1). */
uint64_t netsim_rng_threshold(double p);

/* netsim_mix64 is a 64-bit finalizer (splitmix64/Stafford variant 13):
   every input bit affects every output bit. */
uint64_t netsim_mix64(uint64_t x);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_RNG_API_H */
