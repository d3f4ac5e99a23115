/*
 * boot.c: the host-list bootstrap, for users without MPI (and Slurm's
 * srun, which sets SLURM_PROCID and SLURM_NTASKS).  Rank 0 listens on TCP
 * --bootstrap-port; every other rank connects to the first host of the
 * list, says who it is and where its xport listens, and gets the table of
 * every rank's address back.  After the exchange each rank hands its
 * results to rank 0 over the same connection, and rank 0 answers with the
 * verdict.  Every wait is bounded by --time-limit.
 *
 * Frames: a 4-byte length, then the bytes (the same build on every rank:
 * the structs travel as they are).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"

typedef struct boot_hello {
  uint32_t rank, n;
  char addr[COLL_ADDR_LEN];
} boot_hello;

static void split_hosts(coll_boot *b, const char *list) {
  const char *cur = list;
  char item[256];
  int rv;
  uint32_t n = 0;

  b->hosts = xmalloc(COLL_MAX_RANKS * sizeof(char *));
  while ((rv = tool_list_next(&cur, item, sizeof(item))) == 1) {
    if (n == COLL_MAX_RANKS) {
      tool_usage_error("--hosts: more than %d ranks", COLL_MAX_RANKS);
    }
    b->hosts[n++] = strdup(item);
  }
  if (rv < 0 || n < 2) {
    tool_usage_error("--hosts: expected a comma-separated list of at least 2 "
                     "hosts, got '%s'",
                     list);
  }
  b->n = n;
}

void boot_hosts_init(coll_boot *b, const coll_opts *o) {
  const char *pid = getenv("SLURM_PROCID");
  const char *ntasks = getenv("SLURM_NTASKS");

  memset(b, 0, sizeof(*b));
  split_hosts(b, o->hosts);
  if (o->rank >= 0) {
    b->rank = (uint32_t)o->rank;
  } else if (pid != NULL) {
    b->rank =
        (uint32_t)tool_arg_u64("SLURM_PROCID", pid, 0, COLL_MAX_RANKS - 1);
    if (ntasks != NULL &&
        tool_arg_u64("SLURM_NTASKS", ntasks, 1, COLL_MAX_RANKS) != b->n) {
      tool_usage_error("SLURM_NTASKS is %s but --hosts lists %u hosts", ntasks,
                       b->n);
    }
  } else {
    tool_usage_error("--hosts needs --rank (or SLURM_PROCID under srun)");
  }
  if (b->rank >= b->n) {
    tool_usage_error("rank %u with only %u hosts", b->rank, b->n);
  }
  b->fds = xmalloc(b->n * sizeof(int));
  for (uint32_t r = 0; r < b->n; ++r) {
    b->fds[r] = -1;
  }
}

static int wait_fd(int fd, short ev, uint64_t deadline) {
  struct pollfd p = {.fd = fd, .events = ev};
  uint64_t now = xport_now();
  int rv;

  if (now >= deadline) {
    return -ETIMEDOUT;
  }
  rv = poll(&p, 1, (int)((deadline - now) / 1000000 + 1));
  if (rv < 0) {
    return errno == EINTR ? 0 : -errno;
  }
  return rv == 0 ? -ETIMEDOUT : 0;
}

static int write_all(int fd, const void *buf, size_t len, uint64_t deadline) {
  const uint8_t *p = buf;

  while (len > 0) {
    ssize_t k = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      len -= (size_t)k;
    } else if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
      int rv = wait_fd(fd, POLLOUT, deadline);
      if (rv < 0) {
        return rv;
      }
    } else {
      return k < 0 ? -errno : -EPIPE;
    }
  }
  return 0;
}

static int read_all(int fd, void *buf, size_t len, uint64_t deadline) {
  uint8_t *p = buf;

  while (len > 0) {
    ssize_t k = recv(fd, p, len, MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      len -= (size_t)k;
    } else if (k == 0) {
      return -ECONNRESET;
    } else if (errno == EAGAIN || errno == EINTR) {
      int rv = wait_fd(fd, POLLIN, deadline);
      if (rv < 0) {
        return rv;
      }
    } else {
      return -errno;
    }
  }
  return 0;
}

static int send_frame(int fd, const void *a, size_t alen, const void *b2,
                      size_t blen, uint64_t deadline) {
  uint32_t len = (uint32_t)(alen + blen);
  int rv = write_all(fd, &len, sizeof(len), deadline);

  if (rv == 0) {
    rv = write_all(fd, a, alen, deadline);
  }
  if (rv == 0 && blen) {
    rv = write_all(fd, b2, blen, deadline);
  }
  return rv;
}

/* recv_frame reads a frame of exactly |alen| + |blen| bytes. */
static int recv_frame(int fd, void *a, size_t alen, void *b2, size_t blen,
                      uint64_t deadline) {
  uint32_t len;
  int rv = read_all(fd, &len, sizeof(len), deadline);

  if (rv != 0) {
    return rv;
  }
  if (len != alen + blen) {
    return -EPROTO;
  }
  rv = read_all(fd, a, alen, deadline);
  if (rv == 0 && blen) {
    rv = read_all(fd, b2, blen, deadline);
  }
  return rv;
}

static int tcp_socket(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

  if (fd >= 0) {
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

static int exchange_root(coll_boot *b, const coll_opts *o, const char *mine,
                         coll_rank_addr *all, char *why, size_t cap,
                         uint64_t deadline) {
  struct sockaddr_storage ss;
  socklen_t len;
  uint32_t have = 1, r;
  int lfd = tcp_socket(), rv;

  snprintf(all[0].addr, sizeof(all[0].addr), "%s", mine);
  if (lfd < 0 ||
      xport_parse_addr("0.0.0.0", o->boot_port, AF_INET, &ss, &len) != 0 ||
      bind(lfd, (struct sockaddr *)&ss, len) != 0 || listen(lfd, 64) != 0) {
    snprintf(why, cap, "cannot listen on bootstrap port %u: %s", o->boot_port,
             strerror(errno));
    if (lfd >= 0) {
      close(lfd);
    }
    return -1;
  }
  while (have < b->n) {
    boot_hello h;
    int fd;
    if ((rv = wait_fd(lfd, POLLIN, deadline)) < 0) {
      size_t k = (size_t)snprintf(why, cap,
                                  "bootstrap: ranks missing after "
                                  "the time limit:");
      for (r = 1; r < b->n && k + 8 < cap; ++r) {
        if (b->fds[r] < 0) {
          k += (size_t)snprintf(why + k, cap - k, " %u (%s)", r, b->hosts[r]);
        }
      }
      close(lfd);
      return -1;
    }
    fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
      continue;
    }
    if (recv_frame(fd, &h, sizeof(h), NULL, 0, xport_now() + 5000000000ull) !=
            0 ||
        h.n != b->n || h.rank == 0 || h.rank >= b->n || b->fds[h.rank] >= 0) {
      close(fd); /* a stranger, a duplicate or a rank of another run */
      continue;
    }
    h.addr[sizeof(h.addr) - 1] = 0;
    snprintf(all[h.rank].addr, sizeof(all[0].addr), "%s", h.addr);
    b->fds[h.rank] = fd;
    ++have;
  }
  close(lfd);
  for (r = 1; r < b->n; ++r) {
    if (send_frame(b->fds[r], all, b->n * sizeof(*all), NULL, 0, deadline) !=
        0) {
      snprintf(why, cap, "bootstrap: rank %u (%s) vanished", r, b->hosts[r]);
      return -1;
    }
  }
  return 0;
}

static int exchange_leaf(coll_boot *b, const coll_opts *o, const char *mine,
                         coll_rank_addr *all, char *why, size_t cap,
                         uint64_t deadline) {
  struct sockaddr_storage ss;
  socklen_t len;
  boot_hello h;
  int fd = -1;

  if (xport_parse_addr(b->hosts[0], o->boot_port, AF_INET, &ss, &len) != 0) {
    snprintf(why, cap, "cannot resolve rank 0's host '%s'", b->hosts[0]);
    return -1;
  }
  /* Rank 0 may start later: try again until the time limit. */
  for (;;) {
    fd = tcp_socket();
    if (fd >= 0 && connect(fd, (struct sockaddr *)&ss, len) == 0) {
      break;
    }
    if (fd >= 0) {
      close(fd);
    }
    if (xport_now() >= deadline) {
      snprintf(why, cap,
               "bootstrap: rank 0 (%s:%u) never answered within the time "
               "limit",
               b->hosts[0], o->boot_port);
      return -1;
    }
    usleep(50000);
  }
  memset(&h, 0, sizeof(h));
  h.rank = b->rank;
  h.n = b->n;
  snprintf(h.addr, sizeof(h.addr), "%s", mine);
  b->fds[0] = fd;
  if (send_frame(fd, &h, sizeof(h), NULL, 0, deadline) != 0 ||
      recv_frame(fd, all, b->n * sizeof(*all), NULL, 0, deadline) != 0) {
    snprintf(why, cap, "bootstrap: rank 0 (%s:%u) vanished", b->hosts[0],
             o->boot_port);
    return -1;
  }
  return 0;
}

int boot_exchange(coll_boot *b, const coll_opts *o, const char *mine,
                  coll_rank_addr *all, char *why, size_t cap) {
  uint64_t deadline = xport_now() + o->time_limit_ns;

  if (b->mpi) {
    return boot_mpi_exchange(b, mine, all);
  }
  return b->rank == 0 ? exchange_root(b, o, mine, all, why, cap, deadline)
                      : exchange_leaf(b, o, mine, all, why, cap, deadline);
}

int boot_gather(coll_boot *b, const coll_opts *o, const coll_result *res,
                const tool_hist *lat, coll_result *all, tool_hist *hists,
                char *verdict, size_t cap) {
  size_t nb = lat->n_buckets;
  uint64_t *counts = xmalloc(nb * sizeof(uint64_t));
  /* The others finish within their own time limit, or their idle timeout
     after a failure: wait that long. */
  uint64_t deadline = xport_now() + o->time_limit_ns + o->idle_timeout_ns;
  coll_result mine = *res;
  uint32_t r;
  int rv = 0;

  hist_pack(lat, &mine, counts);
  if (b->mpi) {
    rv = boot_mpi_gather(b, &mine, lat, all, hists);
    free(counts);
    verdict[0] = 0;
    return rv;
  }
  if (b->rank != 0) {
    char v[200];
    if (send_frame(b->fds[0], &mine, sizeof(mine), counts, nb * 8, deadline) !=
            0 ||
        recv_frame(b->fds[0], v, sizeof(v), NULL, 0, deadline) != 0) {
      snprintf(verdict, cap, "rank 0 (%s) vanished before the verdict",
               b->hosts[0]);
      rv = -1;
    } else {
      v[sizeof(v) - 1] = 0;
      snprintf(verdict, cap, "%s", v);
    }
    free(counts);
    return rv;
  }
  all[0] = mine;
  hist_unpack(&hists[0], &mine, counts);
  for (r = 1; r < b->n; ++r) {
    int e = recv_frame(b->fds[r], &all[r], sizeof(all[r]), counts, nb * 8,
                       deadline);
    if (e != 0) {
      memset(&all[r], 0, sizeof(all[r]));
      all[r].rank = (int32_t)r;
      all[r].failed = 1;
      snprintf(all[r].error, sizeof(all[r].error),
               "rank %u (%s) vanished: %s before reporting its results", r,
               b->hosts[r],
               e == -ETIMEDOUT ? "the time limit ran out"
                               : "its bootstrap connection closed");
      continue;
    }
    all[r].error[sizeof(all[r].error) - 1] = 0;
    hist_unpack(&hists[r], &all[r], counts);
  }
  free(counts);
  verdict[0] = 0;
  for (r = 0; r < b->n; ++r) {
    if (all[r].failed) {
      snprintf(verdict, cap, "rank %u: %s", r, all[r].error);
      break;
    }
  }
  return 0;
}

void boot_send_verdict(coll_boot *b, const char *verdict) {
  char v[200];
  uint32_t r;

  if (b->mpi || b->rank != 0) {
    return;
  }
  memset(v, 0, sizeof(v));
  snprintf(v, sizeof(v), "%s", verdict);
  for (r = 1; r < b->n; ++r) {
    if (b->fds[r] >= 0) {
      (void)send_frame(b->fds[r], v, sizeof(v), NULL, 0,
                       xport_now() + 2000000000ull);
    }
  }
}

void boot_fini(coll_boot *b) {
  uint32_t r;

  if (b->hosts) {
    for (r = 0; r < b->n; ++r) {
      free(b->hosts[r]);
      if (b->fds[r] >= 0) {
        close(b->fds[r]);
      }
    }
  }
  free(b->hosts);
  free(b->fds);
  b->hosts = NULL;
  b->fds = NULL;
}

void hist_pack(const tool_hist *h, coll_result *r, uint64_t *counts) {
  r->lat_total = h->total;
  r->lat_min = h->min;
  r->lat_max = h->max;
  r->lat_sum = h->sum;
  memcpy(counts, h->counts, h->n_buckets * sizeof(uint64_t));
}

void hist_unpack(tool_hist *h, const coll_result *r, const uint64_t *counts) {
  memcpy(h->counts, counts, h->n_buckets * sizeof(uint64_t));
  h->total = r->lat_total;
  h->min = r->lat_min;
  h->max = r->lat_max;
  h->sum = r->lat_sum;
}
