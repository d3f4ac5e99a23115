/*
 * <netsim/evl.h>: the event list: timers and one-shot events in virtual time
 * (docs/netsim.md, "Events"). Part of netsim's API: include
 * <netsim/netsim.h>, which includes this header after the ones whose types
 * it uses.
 */
#ifndef NETSIM_EVL_API_H
#define NETSIM_EVL_API_H

#ifndef NETSIM_H
#  error "include <netsim/netsim.h>, not <netsim/evl.h>"
#endif

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct netsim_evl netsim_evl;
typedef struct netsim_timer netsim_timer;

/* netsim_timer_cb is called when timer |tm| fires; |ctx| and |arg| are the
   two user words given to netsim_timer_init or netsim_evl_schedule.  The
   callback may set, stop or schedule any timer, |tm| included. */
typedef void (*netsim_timer_cb)(netsim_evl *evl, netsim_timer *tm, void *ctx,
                                uint64_t arg);

/* netsim_timer is an event in caller storage (a link's, a host's).  It is
   armed at most once at a time; netsim_evl_timer_set moves it.  Its time
   and sequence number live in the event list (netsim_evl_timer_expiry). */
struct netsim_timer {
  /* cb is the function called when the timer fires. */
  netsim_timer_cb cb;
  /* ctx is the first user word. */
  void *ctx;
  /* arg is the second user word. */
  uint64_t arg;
  /* slot is the event list's handle for the armed timer, or UINT32_MAX
     when idle. */
  uint32_t slot;
  /* pool_gen is 0 for a caller's timer; a pooled event's generation. */
  uint32_t pool_gen;
};

/* netsim_evid names a pooled one-shot event; 0 is never a valid id. */
typedef uint64_t netsim_evid;

/* netsim_evl_settings sizes an event list. */
typedef struct netsim_evl_settings {
  /* max_pooled is the number of one-shot events netsim_evl_schedule can
     have pending at once. */
  uint32_t max_pooled;
  /* heap_hint is the number of heap slots to reserve at creation (the
     heap grows, by doubling, only past its high-water mark). */
  uint32_t heap_hint;
} netsim_evl_settings;

/* netsim_evl_new creates an empty event list at time 0 in |*pevl|.
   Returns 0, or NETSIM_ERR_NOMEM. */
int netsim_evl_new(netsim_evl **pevl, const netsim_evl_settings *s,
                   const netsim_mem *mem);

/* netsim_evl_del frees |evl| (NULL is fine); pending timers are dropped
   without being called. */
void netsim_evl_del(netsim_evl *evl);

/* netsim_evl_now returns the current virtual time of |evl|. */
netsim_time netsim_evl_now(const netsim_evl *evl);

/* netsim_evl_next_time returns when the earliest pending event fires, or
   NETSIM_TIME_NONE. */
netsim_time netsim_evl_next_time(const netsim_evl *evl);

/* netsim_evl_pending returns the number of pending events. */
size_t netsim_evl_pending(const netsim_evl *evl);

/* netsim_evl_count returns the number of events fired so far. */
uint64_t netsim_evl_count(const netsim_evl *evl);

/* netsim_timer_init prepares caller storage |tm| as an idle timer calling
   |cb| with |ctx| and |arg|. */
void netsim_timer_init(netsim_timer *tm, netsim_timer_cb cb, void *ctx,
                       uint64_t arg);

/* netsim_timer_pending returns nonzero if |tm| is armed. */
static inline int netsim_timer_pending(const netsim_timer *tm) {
  return tm->slot != UINT32_MAX;
}

/* netsim_evl_timer_expiry returns when |tm| fires, or NETSIM_TIME_NONE if
   it is idle. */
netsim_time netsim_evl_timer_expiry(const netsim_evl *evl,
                                    const netsim_timer *tm);

/* netsim_evl_timer_set arms |tm| to fire at |at| (>= now), or moves it
   there if it is already armed; either way it takes a fresh sequence
   number, so it runs after every event already scheduled for |at|.
   Returns 0, NETSIM_ERR_INVAL (|at| in the past), or NETSIM_ERR_NOMEM
   (the heap could not grow). */
int netsim_evl_timer_set(netsim_evl *evl, netsim_timer *tm, netsim_time at);

/* netsim_evl_timer_stop disarms |tm| (no effect if idle). */
void netsim_evl_timer_stop(netsim_evl *evl, netsim_timer *tm);

/* netsim_evl_schedule schedules a one-shot pooled event calling |cb| with
   |ctx| and |arg| at |at|, and writes its id to |*pid| (|pid| may be
   NULL).  Returns 0, NETSIM_ERR_INVAL (|at| in the past), NETSIM_ERR_POOL
   (max_pooled events are pending) or NETSIM_ERR_NOMEM. */
int netsim_evl_schedule(netsim_evl *evl, netsim_time at, netsim_timer_cb cb,
                        void *ctx, uint64_t arg, netsim_evid *pid);

/* netsim_evl_cancel cancels the pending pooled event |id|.  Returns 0, or
   NETSIM_ERR_NOENT if it already fired or was cancelled. */
int netsim_evl_cancel(netsim_evl *evl, netsim_evid id);

/* netsim_evl_run_until fires, in (time, sequence) order, every event due at
   or before |until|, then sets the clock to |until| (unless
   netsim_evl_stop was called or the interrupt flag was seen set: see
   netsim_evl_set_interrupt).  Returns the number of events fired. */
uint64_t netsim_evl_run_until(netsim_evl *evl, netsim_time until);

/* netsim_evl_step fires the earliest event.  Returns 1, or 0 if none.
   Neither it nor netsim_evl_run_until may be called from a callback. */
int netsim_evl_step(netsim_evl *evl);

/* netsim_evl_stop makes the running netsim_evl_run_until return after the
   current event, with the clock left at that event's time. */
void netsim_evl_stop(netsim_evl *evl);

/* netsim_evl_set_interrupt makes netsim_evl_run_until check |*flag| before
   each event: once it is nonzero, run_until returns without firing
   another, the clock left at the last event's time (as after
   netsim_evl_stop), and every later call returns at once until the flag
   is cleared.  |flag| is meant to be set by a signal handler (the one
   kind of object a handler may write); the event list only reads it.  It
   must outlive |evl| or be replaced first; NULL (the default) checks
   nothing. */
void netsim_evl_set_interrupt(netsim_evl *evl,
                              const volatile sig_atomic_t *flag);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_EVL_API_H */
