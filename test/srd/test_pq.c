/*
 * test_pq.c: the intrusive min-heap: ordering by key, ties broken by id,
 * key updates in both directions, removal from any place, and a seeded
 * randomized comparison with a brute-force model.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "srd_macro.h"
#include "srd_pq.h"

typedef struct item {
  uint32_t tag;
  srd_pq_entry pe;
} item;

#define ITEM(E) ((item *)(void *)((char *)(E)-offsetof(item, pe)))

static void init(srd_pq *pq, size_t cap) {
  assert_int_equal(srd_pq_init(pq, cap, srd_mem_default()), 0);
}

/* check_heap asserts the heap property and that every entry knows its
   index. */
static void check_heap(const srd_pq *pq) {
  size_t i;

  for (i = 0; i < pq->len; ++i) {
    const srd_pq_entry *e = pq->q[i];
    assert_int_equal(e->index, i);
    if (i > 0) {
      const srd_pq_entry *p = pq->q[(i - 1) / 2];
      assert_true(p->key < e->key || (p->key == e->key && p->id < e->id));
    }
  }
}

/* pop removes and returns the top's tag. */
static uint32_t pop(srd_pq *pq) {
  srd_pq_entry *e = srd_pq_top(pq);

  assert_non_null(e);
  srd_pq_remove(pq, e);
  assert_true(e->index == SRD_PQ_BAD_INDEX);
  check_heap(pq);
  return ITEM(e)->tag;
}

static void test_pq_order(void **state) {
  static const uint64_t keys[] = {50, 30, 90, 10, 70, 20, 80, 60, 40, 0};
  item it[10];
  srd_pq pq;
  size_t i;
  (void)state;

  init(&pq, 10);
  assert_true(srd_pq_empty(&pq));
  assert_null(srd_pq_top(&pq));
  for (i = 0; i < 10; ++i) {
    it[i].tag = (uint32_t)keys[i];
    srd_pq_entry_init(&it[i].pe, (uint32_t)i);
    assert_true(it[i].pe.index == SRD_PQ_BAD_INDEX);
    srd_pq_push(&pq, &it[i].pe, keys[i]);
    check_heap(&pq);
  }
  assert_false(srd_pq_empty(&pq));
  assert_int_equal(pq.len, 10);
  for (i = 0; i < 10; ++i) {
    assert_int_equal(pop(&pq), 10 * i);
  }
  assert_true(srd_pq_empty(&pq));
  assert_null(srd_pq_top(&pq));

  /* Large keys, including the largest. */
  srd_pq_push(&pq, &it[0].pe, UINT64_MAX);
  srd_pq_push(&pq, &it[1].pe, UINT64_MAX - 1);
  srd_pq_push(&pq, &it[2].pe, 1ull << 63);
  assert_ptr_equal(srd_pq_top(&pq), &it[2].pe);
  srd_pq_remove(&pq, &it[2].pe);
  assert_ptr_equal(srd_pq_top(&pq), &it[1].pe);
  srd_pq_remove(&pq, &it[1].pe);
  assert_ptr_equal(srd_pq_top(&pq), &it[0].pe);
  srd_pq_fini(&pq);
}

static void test_pq_ties_by_id(void **state) {
  static const uint32_t ids[] = {4, 2, 9, 1, 7, 3};
  item it[6], low;
  srd_pq pq;
  size_t i;
  (void)state;

  init(&pq, 8);
  for (i = 0; i < 6; ++i) {
    it[i].tag = ids[i];
    srd_pq_entry_init(&it[i].pe, ids[i]);
    srd_pq_push(&pq, &it[i].pe, 1000);
  }
  /* A smaller key beats a smaller id. */
  low.tag = 100;
  srd_pq_entry_init(&low.pe, 100);
  srd_pq_push(&pq, &low.pe, 999);
  assert_int_equal(pop(&pq), 100);
  assert_int_equal(pop(&pq), 1);
  assert_int_equal(pop(&pq), 2);
  assert_int_equal(pop(&pq), 3);
  assert_int_equal(pop(&pq), 4);
  assert_int_equal(pop(&pq), 7);
  assert_int_equal(pop(&pq), 9);
  assert_true(srd_pq_empty(&pq));

  /* The order does not depend on insertion order. */
  for (i = 6; i-- > 0;) {
    srd_pq_push(&pq, &it[i].pe, 5);
  }
  assert_int_equal(pop(&pq), 1);
  assert_int_equal(pop(&pq), 2);
  srd_pq_fini(&pq);
}

static void test_pq_update(void **state) {
  item it[8], extra;
  srd_pq pq;
  size_t i;
  (void)state;

  init(&pq, 9);
  for (i = 0; i < 8; ++i) {
    it[i].tag = (uint32_t)i;
    srd_pq_entry_init(&it[i].pe, (uint32_t)i);
    srd_pq_push(&pq, &it[i].pe, 100 + 10 * i);
  }
  /* Down: the last to the top. */
  srd_pq_update(&pq, &it[7].pe, 5);
  check_heap(&pq);
  assert_ptr_equal(srd_pq_top(&pq), &it[7].pe);
  assert_true(it[7].pe.key == 5);
  /* Up: the top to the bottom. */
  srd_pq_update(&pq, &it[7].pe, 1000);
  check_heap(&pq);
  assert_ptr_equal(srd_pq_top(&pq), &it[0].pe);
  srd_pq_update(&pq, &it[0].pe, 1001);
  check_heap(&pq);
  assert_ptr_equal(srd_pq_top(&pq), &it[1].pe);
  /* Same key: nothing moves. */
  srd_pq_update(&pq, &it[1].pe, 110);
  check_heap(&pq);
  assert_ptr_equal(srd_pq_top(&pq), &it[1].pe);
  /* To a tie with a smaller id: the id decides. */
  srd_pq_update(&pq, &it[5].pe, 110);
  check_heap(&pq);
  assert_ptr_equal(srd_pq_top(&pq), &it[1].pe);
  srd_pq_update(&pq, &it[1].pe, 150);
  check_heap(&pq);
  assert_ptr_equal(srd_pq_top(&pq), &it[5].pe);
  /* Absent: update inserts. */
  extra.tag = 99;
  srd_pq_entry_init(&extra.pe, 99);
  srd_pq_update(&pq, &extra.pe, 1);
  check_heap(&pq);
  assert_int_equal(pq.len, 9);
  assert_ptr_equal(srd_pq_top(&pq), &extra.pe);
  /* The full order now. */
  assert_int_equal(pop(&pq), 99); /* 1 */
  assert_int_equal(pop(&pq), 5);  /* 110 */
  assert_int_equal(pop(&pq), 2);  /* 120 */
  assert_int_equal(pop(&pq), 3);  /* 130 */
  assert_int_equal(pop(&pq), 4);  /* 140 */
  assert_int_equal(pop(&pq), 1);  /* 150 */
  assert_int_equal(pop(&pq), 6);  /* 160 */
  assert_int_equal(pop(&pq), 7);  /* 1000 */
  assert_int_equal(pop(&pq), 0);  /* 1001 */
  assert_true(srd_pq_empty(&pq));
  srd_pq_fini(&pq);
}

static void test_pq_remove(void **state) {
  item it[15];
  srd_pq pq;
  size_t i;
  uint32_t last;
  (void)state;

  init(&pq, 15);
  for (i = 0; i < 15; ++i) {
    it[i].tag = (uint32_t)i;
    srd_pq_entry_init(&it[i].pe, (uint32_t)i);
    srd_pq_push(&pq, &it[i].pe, 10 * i);
  }
  /* Absent: nothing happens. */
  {
    item out;
    srd_pq_entry_init(&out.pe, 1);
    srd_pq_remove(&pq, &out.pe);
    assert_int_equal(pq.len, 15);
  }
  /* The middle, the top, the last slot, then again the same one. */
  srd_pq_remove(&pq, &it[6].pe);
  check_heap(&pq);
  assert_true(it[6].pe.index == SRD_PQ_BAD_INDEX);
  srd_pq_remove(&pq, &it[6].pe);
  assert_int_equal(pq.len, 14);
  srd_pq_remove(&pq, &it[0].pe);
  check_heap(&pq);
  assert_ptr_equal(srd_pq_top(&pq), &it[1].pe);
  srd_pq_remove(&pq, pq.q[pq.len - 1]);
  check_heap(&pq);
  assert_int_equal(pq.len, 12);
  /* What is left comes out in order. */
  last = 0;
  while (!srd_pq_empty(&pq)) {
    uint32_t t = pop(&pq);
    assert_true(t > last || last == 0);
    last = t;
  }
  srd_pq_fini(&pq);

  init(&pq, 7);
  /* keys: root 0; left 100 (children 101, 102); right 1 (children 2, 3).
     Removing 101 moves 3 into its place, below 100: it must go up. */
  {
    static const uint64_t k[] = {0, 100, 1, 101, 102, 2, 3};
    for (i = 0; i < 7; ++i) {
      srd_pq_entry_init(&it[i].pe, (uint32_t)i);
      it[i].tag = (uint32_t)k[i];
      srd_pq_push(&pq, &it[i].pe, k[i]);
    }
    check_heap(&pq);
    assert_int_equal(it[3].pe.index, 3);
    srd_pq_remove(&pq, &it[3].pe);
    check_heap(&pq);
    assert_int_equal(pop(&pq), 0);
    assert_int_equal(pop(&pq), 1);
    assert_int_equal(pop(&pq), 2);
    assert_int_equal(pop(&pq), 3);
    assert_int_equal(pop(&pq), 100);
    assert_int_equal(pop(&pq), 102);
    assert_true(srd_pq_empty(&pq));
  }
  srd_pq_fini(&pq);
}

static uint32_t prop_runs(uint32_t dflt) {
  const char *s = getenv("SRD_PROP_RUNS");
  long v = s ? strtol(s, NULL, 0) : 0;

  return v > 0 ? (uint32_t)v : dflt;
}

#define NITEMS 64

static void test_pq_random(void **state) {
  static item it[NITEMS];
  uint64_t s = tu_seed("test_pq_random");
  uint32_t runs = prop_runs(500), r, op;
  int in[NITEMS];
  (void)state;

  for (r = 0; r < runs; ++r) {
    srd_pq pq;
    /* Narrow key ranges make many ties. */
    uint64_t keyspace = 1 + tu_rand(&s) % (tu_rand(&s) % 2 ? 8 : 1000000);
    size_t i, n = 0;

    tu_assert(srd_pq_init(&pq, NITEMS, srd_mem_default()) == 0);
    for (i = 0; i < NITEMS; ++i) {
      /* ids: a permutation of 0..NITEMS-1, not in tag order. */
      srd_pq_entry_init(&it[i].pe, (uint32_t)((i * 37) % NITEMS));
      it[i].tag = (uint32_t)i;
      in[i] = 0;
    }
    for (op = 0; op < 400; ++op) {
      uint32_t k = (uint32_t)(tu_rand(&s) % NITEMS);
      uint64_t key = tu_rand(&s) % keyspace;
      srd_pq_entry *top;
      size_t best = SIZE_MAX;
      switch (tu_rand(&s) % 4) {
      case 0:
        if (!in[k]) {
          srd_pq_push(&pq, &it[k].pe, key);
          in[k] = 1;
          ++n;
        }
        break;
      case 1:
        srd_pq_remove(&pq, &it[k].pe);
        n -= (size_t)in[k];
        in[k] = 0;
        break;
      case 2:
        srd_pq_update(&pq, &it[k].pe, key);
        n += (size_t)!in[k];
        in[k] = 1;
        break;
      default:
        top = srd_pq_top(&pq);
        if (top != NULL) {
          srd_pq_remove(&pq, top);
          in[ITEM(top)->tag] = 0;
          --n;
        }
        break;
      }
      /* The model: the smallest (key, id) among the entries in. */
      tu_assert(pq.len == n);
      for (i = 0; i < NITEMS; ++i) {
        tu_assert((it[i].pe.index != SRD_PQ_BAD_INDEX) == in[i]);
        if (in[i]) {
          tu_assert(it[i].pe.index < pq.len &&
                    pq.q[it[i].pe.index] == &it[i].pe);
          if (best == SIZE_MAX || it[i].pe.key < it[best].pe.key ||
              (it[i].pe.key == it[best].pe.key &&
               it[i].pe.id < it[best].pe.id)) {
            best = i;
          }
        }
      }
      top = srd_pq_top(&pq);
      if (best == SIZE_MAX) {
        tu_assert(top == NULL);
      } else {
        tu_assert(top == &it[best].pe);
      }
    }
    srd_pq_fini(&pq);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pq_order),  cmocka_unit_test(test_pq_ties_by_id),
      cmocka_unit_test(test_pq_update), cmocka_unit_test(test_pq_remove),
      cmocka_unit_test(test_pq_random),
  };

  return cmocka_run_group_tests_name("pq", tests, NULL, NULL);
}
