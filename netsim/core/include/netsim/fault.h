/*
 * <netsim/fault.h>: faults: link failures, degraded rates, loss, bit errors
 * and duplication at a time (docs/netsim.md, "Faults and reconvergence").
 * Part of netsim's API: include <netsim/netsim.h>, which includes this
 * header after the ones whose types it uses.
 */
#ifndef NETSIM_FAULT_API_H
#define NETSIM_FAULT_API_H

#ifndef NETSIM_H
#  error "include <netsim/netsim.h>, not <netsim/fault.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* netsim_fault_link_down takes the cable of link |link_id| (both
   directions) down at |at| (now if in the past): packets queued or in
   flight on it are lost, and packets sent onto it are lost until routing
   reconverges, settings.reconverge later, and stops using it.  Returns 0,
   NETSIM_ERR_NOENT or NETSIM_ERR_POOL (no free event). */
int netsim_fault_link_down(netsim_sim *sim, uint32_t link_id, netsim_time at);

/* netsim_fault_link_up brings the cable back up at |at|; routing uses it
   again settings.reconverge later.  Returns as netsim_fault_link_down. */
int netsim_fault_link_up(netsim_sim *sim, uint32_t link_id, netsim_time at);

/* netsim_fault_degrade sets both directions of the cable to |rate_bps| at
   |at| (0 restores the configured rates).  Returns 0, NETSIM_ERR_NOENT,
   NETSIM_ERR_INVAL or NETSIM_ERR_POOL. */
int netsim_fault_degrade(netsim_sim *sim, uint32_t link_id, uint64_t rate_bps,
                         netsim_time at);

/* netsim_fault_loss sets random loss |p| on both directions of the cable
   now.  Returns 0, NETSIM_ERR_NOENT or NETSIM_ERR_INVAL. */
int netsim_fault_loss(netsim_sim *sim, uint32_t link_id, double p);

/* netsim_fault_loss_all sets random loss |p| on every link now (with
   |fabric_only|, only on switch-to-switch links).  Returns 0 or
   NETSIM_ERR_INVAL. */
int netsim_fault_loss_all(netsim_sim *sim, double p, int fabric_only);

/* netsim_fault_ber sets bit-error rate |ber| (netsim_link_set_ber) on both
   directions of the cable now.  Returns 0, NETSIM_ERR_NOENT or
   NETSIM_ERR_INVAL. */
int netsim_fault_ber(netsim_sim *sim, uint32_t link_id, double ber);

/* netsim_fault_ber_all sets bit-error rate |ber| on every link now (with
   |fabric_only|, only on switch-to-switch links).  Returns 0 or
   NETSIM_ERR_INVAL. */
int netsim_fault_ber_all(netsim_sim *sim, double ber, int fabric_only);

/* netsim_fault_dup makes both directions of the cable duplicate packets
   with probability |p|, each copy |delay| after its original
   (netsim_link_set_dup), now.  Returns 0, NETSIM_ERR_NOENT,
   NETSIM_ERR_INVAL or NETSIM_ERR_NOMEM. */
int netsim_fault_dup(netsim_sim *sim, uint32_t link_id, double p,
                     netsim_time delay);

/* netsim_fault_dup_all does the same on every link now (with
   |fabric_only|, only on switch-to-switch links).  Returns 0,
   NETSIM_ERR_INVAL or NETSIM_ERR_NOMEM. */
int netsim_fault_dup_all(netsim_sim *sim, double p, netsim_time delay,
                         int fabric_only);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_FAULT_API_H */
