/*
 * srd-bench: the engine alone, no I/O.  A sender and a receiver endpoint
 * in one process; datagrams are passed by pointer (srd_ep_write_pktv on
 * one side, srd_ep_read_pktv on the other), so each payload byte is copied
 * exactly once, into the posted receive buffer, as a real receive would.
 *
 *   (a) 64-byte messages: messages per second, and nanoseconds of protocol
 *       work per data packet (the packet, its share of ACKs, completions);
 *   (b) 1 MiB messages in 8 KiB packets: payload GB/s next to a plain
 *       memcpy of the same bytes into the same buffers, in the same run:
 *       engine and memcpy alternate in slices, so that both see the same
 *       (possibly shared) machine, and the ratio is the median of the
 *       slices' ratios.
 *
 * Wall-clock timing lives here (a benchmark), never in tests.  Each figure
 * is the median of --reps runs (the nearest-rank p50 of tool_hist.h: with
 * an even count, the lower of the middle two).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <srd/srd.h>

#include "tool_clock.h"
#include "tool_hist.h"
#include "tool_opt.h"

typedef struct held {
  uint8_t hdr[SRD_PKT_MAX_HDR];
  size_t hdrlen;
  srd_iovec payload;
  srd_path path;
} held;

typedef struct bench {
  srd_ep *a, *b;
  srd_peer_id pa, pb; /* a's id for b, b's id for a */
  held *pkts;
  size_t cap;
  uint8_t *ackbuf;
  size_t ackcap;
  srd_tstamp now;
  uint8_t *sendbuf;
  uint8_t *recvbufs;
  size_t size;
  uint32_t n_recv;
  uint64_t data_pkts;
} bench;

static void help(FILE *f) {
  fputs(
      "Usage: srd-bench [OPTION]...\n"
      "Benchmark the libsrd engine alone, without I/O, on one core: (a) 64 B\n"
      "messages per second and nanoseconds per data packet, (b) 1 MiB\n"
      "messages in GB/s next to memcpy of the same bytes.  Each figure is the\n"
      "median of --reps runs; both are measured with the payload CRC on and\n"
      "off.\n"
      "\n"
      "Options:\n"
      "  --reps N             runs per figure, 1..15 [3]\n"
      "  --quick              a tenth of the messages\n"
      "  --only a|b           only benchmark (a) or (b)\n" TOOL_OPT_HELP_TEXT
      "\n"
      "Exit status: 0, 1 if the engine failed, 2 for bad usage.\n",
      f);
}

static const tool_info info = {"srd-bench", help, NULL};

static void die(const char *what, int rv) {
  tool_die("%s: %s", what, srd_strerror(rv));
}

static void setup(bench *bn, size_t size, uint32_t inflight, uint32_t n_recv,
                  int payload_crc) {
  srd_settings s;
  srd_peer_settings ps;
  uint32_t i;
  int rv;

  memset(bn, 0, sizeof(*bn));
  srd_settings_default(&s);
  s.max_sends = inflight;
  s.max_recvs = n_recv;
  s.msg_window = 4096;
  s.pkt_window = 4096;
  s.max_msg_size = size > (1u << 20) ? (uint32_t)size : (1u << 20);
  s.payload_crc = payload_crc;
  srd_peer_settings_default(&ps);
  s.seed = 1;
  if ((rv = srd_ep_new(&bn->a, &s, srd_mem_default())) != 0) {
    die("srd_ep_new", rv);
  }
  s.seed = 2;
  if ((rv = srd_ep_new(&bn->b, &s, srd_mem_default())) != 0) {
    die("srd_ep_new", rv);
  }
  if ((rv = srd_ep_add_peer(bn->a, &ps, &bn->pa)) != 0 ||
      (rv = srd_ep_add_peer(bn->b, &ps, &bn->pb)) != 0) {
    die("srd_ep_add_peer", rv);
  }
  bn->cap = 8192;
  bn->pkts = malloc(bn->cap * sizeof(held));
  bn->ackcap = srd_ep_max_pkt_size(bn->b);
  bn->ackbuf = malloc(bn->ackcap);
  bn->size = size;
  bn->n_recv = n_recv;
  /* Page-aligned, as registered memory is: with malloc's alignment the
     relative offset of source and destination changes from run to run
     (mmap the first time, the heap after a free), and glibc's copy loop
     with it, which would measure the allocator rather than the engine. */
  if (posix_memalign((void **)&bn->sendbuf, 4096, size ? size : 1) != 0 ||
      posix_memalign((void **)&bn->recvbufs, 4096,
                     (size ? size : 1) * n_recv) != 0) {
    die("posix_memalign", SRD_ERR_NOMEM);
  }
  if (!bn->pkts || !bn->ackbuf) {
    die("malloc", SRD_ERR_NOMEM);
  }
  for (i = 0; i < size; ++i) {
    bn->sendbuf[i] = (uint8_t)(i * 7 + 1);
  }
  memset(bn->recvbufs, 0, size * n_recv);
  for (i = 0; i < n_recv; ++i) {
    rv = srd_ep_post_recv(bn->b, bn->recvbufs + (size_t)i * size, size,
                          (void *)(uintptr_t)i, 0);
    if (rv != 0) {
      die("srd_ep_post_recv", rv);
    }
  }
}

static void teardown(bench *bn) {
  srd_ep_del(bn->a);
  srd_ep_del(bn->b);
  free(bn->pkts);
  free(bn->ackbuf);
  free(bn->sendbuf);
  free(bn->recvbufs);
}

/* exchange moves every due packet: A's data to B, B's ACKs to A. */
static void exchange(bench *bn) {
  size_t n = 0, i;
  srd_ssize len;

  for (;;) {
    held *h = &bn->pkts[n];
    len = srd_ep_write_pktv(bn->a, &h->path, h->hdr, sizeof(h->hdr),
                            &h->payload, bn->now);
    if (len <= 0) {
      break;
    }
    h->hdrlen = (size_t)len;
    if (++n == bn->cap) {
      break;
    }
  }
  if (len < 0) {
    die("srd_ep_write_pktv", (int)len);
  }
  bn->now += 200; /* virtual time: one-way delay of the in-process wire */
  for (i = 0; i < n; ++i) {
    srd_path p = {bn->pb, bn->pkts[i].path.path};
    srd_ep_read_pktv(bn->b, &p, bn->pkts[i].hdr, bn->pkts[i].hdrlen,
                     bn->pkts[i].payload.base, bn->pkts[i].payload.len,
                     bn->now);
  }
  bn->data_pkts += n;
  for (;;) {
    srd_path path;
    len = srd_ep_write_pkt(bn->b, &path, bn->ackbuf, bn->ackcap, bn->now);
    if (len <= 0) {
      break;
    }
    path.peer = bn->pa;
    srd_ep_read_pkt(bn->a, &path, bn->ackbuf, (size_t)len, bn->now);
  }
  bn->now += 200;
  if (srd_ep_get_expiry(bn->b) <= bn->now) {
    srd_ep_handle_expiry(bn->b, bn->now);
  }
  if (srd_ep_get_expiry(bn->a) <= bn->now) {
    srd_ep_handle_expiry(bn->a, bn->now);
  }
}

/* run sends |count| messages with |inflight| outstanding; returns seconds. */
static double run(bench *bn, uint64_t count, uint32_t inflight) {
  uint64_t posted = 0, done = 0, errors = 0;
  srd_cqe cq[256];
  double t0;
  size_t n, i;

  t0 = tool_now_s();
  while (done < count) {
    while (posted < count && posted - done < inflight) {
      int rv =
          srd_ep_post_send(bn->a, bn->pa, bn->sendbuf, bn->size, NULL, bn->now);
      if (rv != 0) {
        die("srd_ep_post_send", rv);
      }
      ++posted;
    }
    exchange(bn);
    while ((n = srd_ep_poll_cq(bn->a, cq, 256)) > 0) {
      for (i = 0; i < n; ++i) {
        errors += cq[i].status != 0;
      }
      done += n;
    }
    while ((n = srd_ep_poll_cq(bn->b, cq, 256)) > 0) {
      for (i = 0; i < n; ++i) {
        srd_ep_post_recv(bn->b, cq[i].buf, bn->size, cq[i].user_ctx, bn->now);
      }
    }
  }
  if (errors) {
    tool_die("%" PRIu64 " sends failed", errors);
  }
  return tool_now_s() - t0;
}

static double median(double *v, int n) {
  tool_sort_double(v, (size_t)n);
  return tool_pct_double(v, (size_t)n, 0.5);
}

int main(int argc, char **argv) {
  int reps = 3, r, c, do_a = 1, do_b = 1, crc;
  uint64_t small_count = 2000000, big_count = 2000;
  double rate[16], nspp[16], gbps[16], mcpy[16], ratio[16];
  static const struct option opts[] = {{"reps", required_argument, 0, 'r'},
                                       {"quick", no_argument, 0, 'q'},
                                       {"only", required_argument, 0, 'o'},
                                       TOOL_OPT_STD,
                                       {0, 0, 0, 0}};

  tool_init(&info);
  while ((c = tool_getopt(argc, argv, "", opts)) != -1) {
    switch (c) {
    case 'r':
      reps = (int)tool_arg_u64("--reps", optarg, 1, 15);
      break;
    case 'q':
      small_count = 200000;
      big_count = 200;
      break;
    case 'o':
      do_a = strcmp(optarg, "a") == 0;
      do_b = strcmp(optarg, "b") == 0;
      if (!do_a && !do_b) {
        tool_usage_error("bad value for --only: '%s' (expected a or b)",
                         optarg);
      }
      break;
    }
  }
  if (optind < argc) {
    tool_usage_error("unexpected argument '%s'", argv[optind]);
  }

  printf("srd-bench: the engine alone, one core, median of %d runs; every "
         "header carries a CRC32C (%s)\n",
         reps, srd_crc32c_impl());
  for (crc = 1; crc >= 0; --crc) {
    const char *what = crc ? "payload CRC on " : "payload CRC off";
    for (r = 0; r < reps && do_a; ++r) {
      bench bn;
      double t;
      setup(&bn, 64, 512, 1024, crc);
      run(&bn, small_count / 10, 512); /* warm-up */
      bn.data_pkts = 0;
      t = run(&bn, small_count, 512);
      rate[r] = (double)small_count / t;
      nspp[r] = t * 1e9 / (double)bn.data_pkts;
      teardown(&bn);
    }
    for (r = 0; r < reps && do_b; ++r) {
      /* Engine and memcpy in alternating slices of the same bytes, so that
         both see the same machine (it may be shared); the ratio of each
         pair, then the median. */
      enum { SLICES = 8 };
      double ratios[SLICES], eng = 0, cpy = 0;
      uint64_t per = big_count / SLICES, i;
      bench bn;
      int k;
      setup(&bn, 1u << 20, 16, 16, crc);
      run(&bn, big_count / 10, 16);
      for (k = 0; k < SLICES; ++k) {
        double t = run(&bn, per, 16), t0, tc;
        t0 = tool_now_s();
        for (i = 0; i < per; ++i) {
          memcpy(bn.recvbufs + (i % bn.n_recv) * bn.size, bn.sendbuf, bn.size);
          __asm__ __volatile__("" ::"r"(bn.recvbufs) : "memory");
        }
        tc = tool_now_s() - t0;
        ratios[k] = tc / t;
        eng += t;
        cpy += tc;
      }
      gbps[r] = (double)(per * SLICES) * (double)(1u << 20) / eng / 1e9;
      mcpy[r] = (double)(per * SLICES) * (double)(1u << 20) / cpy / 1e9;
      ratio[r] = median(ratios, SLICES);
      teardown(&bn);
    }
    if (do_a) {
      double mr = median(rate, reps), mn = median(nspp, reps);
      printf("(a) 64 B messages,  %s: %.2f M msg/s, %.1f ns per data packet "
             "(with its ACK share)   goal >= 10 M msg/s: %s\n",
             what, mr / 1e6, mn, mr >= 10e6 ? "met" : "NOT met");
    }
    if (do_b) {
      double mg = median(gbps, reps), mm = median(mcpy, reps);
      double mr = median(ratio, reps);
      printf("(b) 1 MiB messages, %s: %.2f GB/s payload vs memcpy %.2f GB/s "
             "= %.2f of memcpy (median of paired slices)   goal >= 0.8: %s\n",
             what, mg, mm, mr, mr >= 0.8 ? "met" : "NOT met");
    }
  }
  return 0;
}
