/*
 * libnetsim: a deterministic, packet-level, discrete-event simulator of
 * datacenter fabrics (docs/netsim.md).
 *
 * Time is an integer count of picoseconds.  Events sit in a heap ordered by
 * (time, insertion sequence), so that equal-time events run in the order
 * they were scheduled and a run never depends on pointer values.  Packets
 * and one-shot events come from pools sized when the simulation is created:
 * nothing is allocated per event or per packet.  Every random stream (loss
 * on a link, the ECMP seed of a switch) is derived from the master seed and
 * the component's id, so the same topology, traffic and seed give the same
 * run, bit for bit, and netsim_sim_trace_hash() proves it.
 *
 * netsim moves opaque packets: it never looks inside a payload and knows
 * nothing of the transports that run in its hosts.  A transport attaches to
 * a host with netsim_host_set_rx() (packets in), netsim_host_send()
 * (packets out) and timers on the event list (netsim_sim_evl()).
 *
 * The API is one header per module, each with its functions' contracts:
 * <netsim/rng.h> (random streams), <netsim/evl.h> (the event list),
 * <netsim/pkt.h> (packets and their pool), <netsim/sim.h> (the
 * simulation), <netsim/link.h>, <netsim/switch.h>, <netsim/host.h>,
 * <netsim/topo.h> (topologies), <netsim/fault.h>, <netsim/traffic.h>
 * (built-in traffic) and <netsim/stats.h>.  This header holds what they
 * all use (time and rates, errors, memory) and includes them, in the
 * order their types build on one another: include it, not them.  The
 * objects are opaque; their definitions are netsim/core's own
 * (netsim_link.h and the other headers beside the sources).
 */
#ifndef NETSIM_H
#define NETSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NETSIM_ALIGN64 aligns a member (and its structure) on a cache line. */
#ifdef __cplusplus
#  define NETSIM_ALIGN64 alignas(64)
#else
#  define NETSIM_ALIGN64 _Alignas(64)
#endif

/* ------------------------------------------------------------------------ */
/* Time and rates                                                           */

/* netsim_time is a point in or span of virtual time in picoseconds. */
typedef uint64_t netsim_time;

#define NETSIM_PS ((netsim_time)1ULL)
#define NETSIM_NS ((netsim_time)1000ULL)
#define NETSIM_US ((netsim_time)1000000ULL)
#define NETSIM_MS ((netsim_time)1000000000ULL)
#define NETSIM_S ((netsim_time)1000000000000ULL)
/* NETSIM_TIME_NONE means "never" or "no event". */
#define NETSIM_TIME_NONE UINT64_MAX

/* Rates are uint64_t bits per second. */
#define NETSIM_KBPS(x) ((uint64_t)(x)*1000ULL)
#define NETSIM_MBPS(x) ((uint64_t)(x)*1000000ULL)
#define NETSIM_GBPS(x) ((uint64_t)(x)*1000000000ULL)

/* NETSIM_RATE_MAX is the highest rate the exact integer arithmetic below
   accepts (18 Tb/s). */
#define NETSIM_RATE_MAX ((uint64_t)18000000000000ULL)

/* netsim_time_tx returns the time |bytes| bytes take on a wire of
   |rate_bps| bits per second: ceil(bytes * 8 * 10^12 / rate_bps) ps,
   computed exactly in 64-bit integers (no overflow for any byte count a
   link can send in 200 days).  |rate_bps| is in (0, NETSIM_RATE_MAX]. */
netsim_time netsim_time_tx(uint64_t bytes, uint64_t rate_bps);

/* netsim_time_bytes returns how many whole bytes a wire of |rate_bps|
   sends in |dt|: floor(dt * rate_bps / (8 * 10^12)). */
uint64_t netsim_time_bytes(netsim_time dt, uint64_t rate_bps);

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

/* An argument is out of range. */
#define NETSIM_ERR_INVAL (-301)
/* The id or handle names nothing (a cancelled or fired event, a link or
   host that does not exist). */
#define NETSIM_ERR_NOENT (-302)
/* A pool (packets, payload buffers, one-shot events) is exhausted.  Not
   fatal: free something and retry. */
#define NETSIM_ERR_POOL (-303)
/* The packet was dropped (and returned to the pool). */
#define NETSIM_ERR_DROPPED (-304)
/* The operation does not fit the current state (e.g. a topology built
   twice, routes asked for before the network has hosts). */
#define NETSIM_ERR_STATE (-305)
/* Fatal errors are below NETSIM_ERR_FATAL. */
#define NETSIM_ERR_FATAL (-500)
/* Memory allocation failed. */
#define NETSIM_ERR_NOMEM (-501)

/* netsim_strerror returns a static description of |err|. */
const char *netsim_strerror(int err);

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */

/* netsim_mem is the allocator netsim uses, only while a simulation is
   built, changed (routing recomputed after a fault) or deleted; never per
   event or per packet. */
typedef struct netsim_mem {
  /* user_data is passed to every function below. */
  void *user_data;
  /* malloc allocates |size| bytes, like malloc(3). */
  void *(*malloc)(size_t size, void *user_data);
  /* free releases |ptr|, like free(3); |ptr| may be NULL. */
  void (*free)(void *ptr, void *user_data);
  /* calloc allocates zeroed memory, like calloc(3). */
  void *(*calloc)(size_t nmemb, size_t size, void *user_data);
} netsim_mem;

/* netsim_mem_default returns an allocator backed by the C library. */
const netsim_mem *netsim_mem_default(void);

#ifdef __cplusplus
}
#endif

/* The modules' APIs, each after the ones whose types it uses. */
#include <netsim/rng.h>
#include <netsim/evl.h>
#include <netsim/pkt.h>
#include <netsim/sim.h>
#include <netsim/link.h>
#include <netsim/switch.h>
#include <netsim/host.h>
#include <netsim/topo.h>
#include <netsim/fault.h>
#include <netsim/traffic.h>
#include <netsim/stats.h>

#endif /* NETSIM_H */
