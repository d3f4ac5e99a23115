/*
 * srd_pcg.h: PCG32 (O'Neill, pcg-random.org, "pcg32" XSH RR), the
 * endpoint's only source of randomness, seeded from srd_settings.seed.
 *
 * The functions are defined in srd_pcg.c.  A generator is plain caller
 * storage (srd_ep.pcg); nothing allocates or fails.  Every draw of an
 * endpoint comes from its one generator in a fixed order, which is what
 * makes a run repeat bit for bit from its seed.
 */
#ifndef SRD_PCG_H
#define SRD_PCG_H

#include <stdint.h>

/* srd_pcg is one PCG32 generator. */
typedef struct srd_pcg {
  /* state is the LCG state. */
  uint64_t state;
  /* inc is the stream selector, always odd. */
  uint64_t inc;
} srd_pcg;

/* srd_pcg_init seeds |pcg| (any contents) with |seed| on stream |stream|
   (pcg32_srandom_r: any values, 0 included). */
void srd_pcg_init(srd_pcg *pcg, uint64_t seed, uint64_t stream);

/* srd_pcg_u32 returns the next 32 random bits. */
uint32_t srd_pcg_u32(srd_pcg *pcg);

/* srd_pcg_u64 returns the next 64 random bits. */
uint64_t srd_pcg_u64(srd_pcg *pcg);

/* srd_pcg_bounded returns a uniform value in [0, |bound|), |bound| > 0
   (Lemire's nearly divisionless method with rejection). */
uint32_t srd_pcg_bounded(srd_pcg *pcg, uint32_t bound);

#endif /* SRD_PCG_H */
