/*
 * <netsim/switch.h>: switches: ECMP and the routes each switch holds
 * (docs/netsim.md, "Switches, routing and ECMP"). Part of netsim's API:
 * include <netsim/netsim.h>, which includes this header after the ones whose
 * types it uses.
 */
#ifndef NETSIM_SWITCH_API_H
#define NETSIM_SWITCH_API_H

#ifndef NETSIM_H
#  error "include <netsim/netsim.h>, not <netsim/switch.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* netsim_ecmp_hash hashes 5-tuple |key| with switch seed |seed|: the
   fields are packed into two 64-bit words, each xored into the state and
   run through netsim_mix64.  Equal keys and seeds give equal hashes; any
   change of a field or the seed changes about half the bits. */
uint64_t netsim_ecmp_hash(uint64_t seed, const netsim_flowkey *key);

/* netsim_ecmp_pick maps hash |h| onto [0, |n|) by the high 32 bits
   (multiply-shift, no modulo bias worth measuring). */
static inline uint32_t netsim_ecmp_pick(uint64_t h, uint32_t n) {
  return (uint32_t)(((h >> 32) * (uint64_t)n) >> 32);
}

/* netsim_switch_node returns the switch's node id. */
uint32_t netsim_switch_node(const netsim_switch *sw);

/* netsim_switch_index returns the switch's index among switches. */
uint32_t netsim_switch_index(const netsim_switch *sw);

/* netsim_switch_n_ports returns the number of ports. */
uint32_t netsim_switch_n_ports(const netsim_switch *sw);

/* netsim_switch_seed and netsim_switch_set_seed read and replace the ECMP
   hash seed. */
uint64_t netsim_switch_seed(const netsim_switch *sw);
void netsim_switch_set_seed(netsim_switch *sw, uint64_t seed);

/* netsim_switch_port_link returns the link leaving |port|, or NULL. */
netsim_link *netsim_switch_port_link(netsim_switch *sw, uint32_t port);

/* netsim_switch_next_hops writes up to |cap| ports of the ECMP set
   towards host |dst_host| into |ports| and returns the set's size. */
uint32_t netsim_switch_next_hops(const netsim_switch *sw, uint32_t dst_host,
                                 uint32_t *ports, uint32_t cap);

/* netsim_switch_route returns the port the switch forwards a packet with
   5-tuple |key| to (its ECMP pick), or NETSIM_ERR_NOENT if it has no
   route to key->dst: not a host's address, or a host that no routed link
   reaches (after a link failure, once routing reconverged). */
int netsim_switch_route(const netsim_switch *sw, const netsim_flowkey *key);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_SWITCH_API_H */
