/*
 * srd_rtb.c: the sent-packet ring.
 */
#include "srd_rtb.h"

#include <assert.h>
#include <string.h>

#include "srd_macro.h"

int srd_rtb_init(srd_rtb *rtb, uint32_t size, const srd_mem *mem) {
  assert(srd_is_pow2(size));
  memset(rtb, 0, sizeof(*rtb));
  rtb->mem = mem;
  rtb->size = size;
  rtb->mask = size - 1;
  rtb->ents = mem->calloc(size, sizeof(srd_rtb_ent), mem->user_data);
  return rtb->ents ? 0 : SRD_ERR_NOMEM;
}

void srd_rtb_fini(srd_rtb *rtb) {
  if (rtb->ents) {
    rtb->mem->free(rtb->ents, rtb->mem->user_data);
    rtb->ents = NULL;
  }
}

void srd_rtb_reset(srd_rtb *rtb, uint32_t first_seq) {
  memset(rtb->ents, 0, rtb->size * sizeof(srd_rtb_ent));
  rtb->head = rtb->next = first_seq;
  rtb->inflight_pkts = 0;
  rtb->inflight_bytes = 0;
}

srd_rtb_ent *srd_rtb_add(srd_rtb *rtb, uint32_t bytes) {
  srd_rtb_ent *e;

  assert(!srd_rtb_full(rtb));
  e = &rtb->ents[rtb->next & rtb->mask];
  e->seq = rtb->next++;
  e->state = SRD_RTB_INFLIGHT;
  e->bytes = bytes;
  ++rtb->inflight_pkts;
  rtb->inflight_bytes += bytes;
  return e;
}

void srd_rtb_leave_flight(srd_rtb *rtb, srd_rtb_ent *e, uint8_t state) {
  assert(e->state == SRD_RTB_INFLIGHT && state != SRD_RTB_INFLIGHT);
  e->state = state;
  --rtb->inflight_pkts;
  rtb->inflight_bytes -= e->bytes;
}

void srd_rtb_retire(srd_rtb *rtb, srd_tstamp keep_lost_from) {
  while (rtb->head != rtb->next) {
    srd_rtb_ent *e = &rtb->ents[rtb->head & rtb->mask];
    if (e->state == SRD_RTB_INFLIGHT ||
        (e->state == SRD_RTB_LOST && e->tx_ts >= keep_lost_from &&
         !srd_rtb_full(rtb))) {
      break;
    }
    e->state = SRD_RTB_FREE;
    ++rtb->head;
  }
}

srd_rtb_ent *srd_rtb_oldest(srd_rtb *rtb) {
  uint32_t s;

  if (rtb->inflight_pkts == 0) {
    return NULL;
  }
  for (s = rtb->head; s != rtb->next; ++s) {
    srd_rtb_ent *e = &rtb->ents[s & rtb->mask];
    if (e->state == SRD_RTB_INFLIGHT) {
      return e;
    }
  }
  srd_unreachable();
}
