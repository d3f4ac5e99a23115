/*
 * test_chunk.c: the endpoint's chunk pool for unexpected messages
 * (srd_ep_chunk_take, srd_ep_rctx_release_chunks, srd_ep.h): a context
 * takes the chunks it reserved, each chunk once; taking past its
 * reservation or past the pool is SRD_ERR_NOMEM and changes nothing;
 * releasing gives chunks and reservation back.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "srd_ep.h"

enum { N_CHUNKS = 4 };

static srd_ep *pool_ep(void) {
  srd_settings s;
  srd_ep *ep = NULL;

  srd_settings_default(&s);
  s.unexp_bytes = N_CHUNKS * s.mtu;
  assert_int_equal(srd_ep_new(&ep, &s, srd_mem_default()), 0);
  assert_int_equal(ep->n_chunks, N_CHUNKS);
  assert_int_equal(ep->chunks_avail, N_CHUNKS);
  return ep;
}

/* reserve sets |c| up as srd_rx.c's new_ctx does for an unexpected
   message of |n| fragments. */
static void reserve(srd_ep *ep, srd_rctx *c, uint32_t n) {
  memset(c, 0, sizeof(*c));
  c->recv = SRD_NIL;
  c->chunks = SRD_NIL;
  c->reserved = n;
  ep->chunks_avail -= n;
}

static void test_chunk_take_reserved(void **state) {
  srd_ep *ep = pool_ep();
  srd_rctx c;
  uint8_t *mem[N_CHUNKS], *none = NULL, *keep;
  uint32_t i, j;
  (void)state;

  reserve(ep, &c, 2);
  for (i = 0; i < 2; ++i) {
    assert_int_equal(srd_ep_chunk_take(ep, &c, i, &mem[i]), 0);
    assert_non_null(mem[i]);
    memset(mem[i], (int)i, ep->chunk_size); /* the chunk is all there */
  }
  assert_ptr_not_equal(mem[0], mem[1]);
  assert_int_equal(c.reserved, 0);
  /* Past the reservation: refused, though the pool has chunks left. */
  keep = none;
  assert_int_equal(srd_ep_chunk_take(ep, &c, 2, &none), SRD_ERR_NOMEM);
  assert_ptr_equal(none, keep);
  assert_int_equal(c.reserved, 0);
  assert_int_equal(ep->chunks_avail, N_CHUNKS - 2);
  srd_ep_rctx_release_chunks(ep, &c);
  assert_int_equal(ep->chunks_avail, N_CHUNKS);
  assert_int_equal(c.chunks, SRD_NIL);

  /* Every chunk of the pool, once each. */
  reserve(ep, &c, N_CHUNKS);
  for (i = 0; i < N_CHUNKS; ++i) {
    assert_int_equal(srd_ep_chunk_take(ep, &c, i, &mem[i]), 0);
    for (j = 0; j < i; ++j) {
      assert_ptr_not_equal(mem[i], mem[j]);
    }
  }
  srd_ep_rctx_release_chunks(ep, &c);
  assert_int_equal(ep->chunks_avail, N_CHUNKS);
  srd_ep_del(ep);
}

/* A reservation the pool cannot honour (broken accounting) is refused at
   the first chunk the pool lacks. */
static void test_chunk_pool_empty(void **state) {
  srd_ep *ep = pool_ep();
  srd_rctx c;
  uint8_t *mem = NULL, *keep;
  uint32_t i;
  (void)state;

  reserve(ep, &c, N_CHUNKS);
  c.reserved = N_CHUNKS + 1; /* one more than was taken from the pool */
  for (i = 0; i < N_CHUNKS; ++i) {
    assert_int_equal(srd_ep_chunk_take(ep, &c, i, &mem), 0);
  }
  keep = mem;
  assert_int_equal(srd_ep_chunk_take(ep, &c, N_CHUNKS, &mem), SRD_ERR_NOMEM);
  assert_ptr_equal(mem, keep);
  assert_int_equal(c.reserved, 1);
  assert_true(srd_err_is_fatal(SRD_ERR_NOMEM));
  c.reserved = 0;
  srd_ep_rctx_release_chunks(ep, &c);
  assert_int_equal(ep->chunks_avail, N_CHUNKS);
  srd_ep_del(ep);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chunk_take_reserved),
      cmocka_unit_test(test_chunk_pool_empty),
  };

  return cmocka_run_group_tests_name("chunk", tests, NULL, NULL);
}
