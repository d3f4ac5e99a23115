/*
 * testutil.c: seeds and the two-endpoint harness.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t tu_current_seed;

uint64_t tu_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t tu_seed(const char *name) {
  const char *env = getenv("SRD_TEST_SEED");
  uint64_t seed;

  if (env && *env) {
    seed = strtoull(env, NULL, 0);
  } else {
    FILE *f = fopen("/dev/urandom", "rb");
    if (f == NULL || fread(&seed, sizeof(seed), 1, f) != 1) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    }
    if (f) {
      fclose(f);
    }
  }
  tu_current_seed = seed;
  printf("[ SEED     ] %s seed=0x%016" PRIx64 "\n", name, seed);
  fflush(stdout);
  return seed;
}

void tpair_init(tpair *tp, const srd_settings *sa, const srd_settings *sb,
                uint32_t n_paths, int ordered_b) {
  srd_settings s[2];
  srd_peer_settings ps;
  int i;

  memset(tp, 0, sizeof(*tp));
  tp->delay = 5 * SRD_US;
  if (sa) {
    s[0] = *sa;
  } else {
    srd_settings_default(&s[0]);
  }
  if (sb) {
    s[1] = *sb;
  } else {
    srd_settings_default(&s[1]);
  }
  s[0].seed = s[0].seed * 2 + 11;
  s[1].seed = s[1].seed * 2 + 12;
  for (i = 0; i < 2; ++i) {
    assert_int_equal(srd_ep_new(&tp->ep[i], &s[i], srd_mem_default()), 0);
    srd_peer_settings_default(&ps);
    ps.n_paths = n_paths;
    ps.ordered = i == 1 && ordered_b;
    assert_int_equal(srd_ep_add_peer(tp->ep[i], &ps, &tp->peer[i]), 0);
  }
}

void tpair_fini(tpair *tp) {
  srd_ep_del(tp->ep[0]);
  srd_ep_del(tp->ep[1]);
  free(tp->q);
  memset(tp, 0, sizeof(*tp));
}

static tpkt *push(tpair *tp) {
  if (tp->n == tp->cap) {
    size_t ncap = tp->cap ? 2 * tp->cap : 64;
    tp->q = realloc(tp->q, ncap * sizeof(tpkt));
    assert_non_null(tp->q);
    tp->cap = ncap;
  }
  return &tp->q[tp->n++];
}

size_t tpair_collect(tpair *tp) {
  size_t total = 0;
  int i;

  for (i = 0; i < 2; ++i) {
    for (;;) {
      tpkt *p = push(tp);
      srd_path path;
      srd_ssize n =
          srd_ep_write_pkt(tp->ep[i], &path, p->data, sizeof(p->data), tp->now);
      assert_true(n >= 0);
      if (n == 0) {
        --tp->n;
        break;
      }
      p->len = (size_t)n;
      p->from = i;
      p->path = path.path;
      p->type = p->data[1];
      assert_int_equal(path.peer, tp->peer[i]);
      ++total;
    }
  }
  return total;
}

static void deliver_one(tpair *tp, const tpkt *p) {
  srd_path path;
  int to = !p->from;

  path.peer = tp->peer[to];
  path.path = p->path;
  (void)srd_ep_read_pkt(tp->ep[to], &path, p->data, p->len, tp->now);
}

size_t tpair_deliver(tpair *tp) {
  size_t i, n = tp->n, delivered = 0;
  tpkt *batch;

  if (n == 0) {
    return 0;
  }
  /* Take the batch out first: reading may make more to send. */
  batch = malloc(n * sizeof(tpkt));
  assert_non_null(batch);
  memcpy(batch, tp->q, n * sizeof(tpkt));
  tp->n = 0;
  for (i = 0; i < n; ++i) {
    int fate = tp->filter ? tp->filter(tp->filter_arg, &batch[i], tp->n_seen)
                          : TP_DELIVER;
    ++tp->n_seen;
    if (fate == TP_DROP) {
      ++tp->dropped;
      continue;
    }
    deliver_one(tp, &batch[i]);
    ++delivered;
    if (fate == TP_DUP) {
      deliver_one(tp, &batch[i]);
    }
  }
  free(batch);
  return delivered;
}

size_t tpair_run(tpair *tp, srd_tstamp until) {
  size_t rounds = 0;

  while (tp->now <= until) {
    size_t c = tpair_collect(tp);
    srd_tstamp next;
    int i;

    if (c > 0) {
      tp->now += tp->delay;
      tpair_deliver(tp);
      ++rounds;
      continue;
    }
    next = srd_ep_get_expiry(tp->ep[0]);
    if (srd_ep_get_expiry(tp->ep[1]) < next) {
      next = srd_ep_get_expiry(tp->ep[1]);
    }
    if (next == SRD_TSTAMP_NONE || next > until) {
      break;
    }
    if (next > tp->now) {
      tp->now = next;
    }
    for (i = 0; i < 2; ++i) {
      if (srd_ep_get_expiry(tp->ep[i]) <= tp->now) {
        srd_ep_handle_expiry(tp->ep[i], tp->now);
      }
    }
    ++rounds;
  }
  return rounds;
}

size_t tpair_poll(tpair *tp, int i, srd_cqe *cqes, size_t n) {
  return srd_ep_poll_cq(tp->ep[i], cqes, n);
}
