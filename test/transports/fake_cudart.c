/*
 * fake_cudart.c: a stand-in for libcudart with the CUDA runtime's ABI, so
 * that the whole -m cuda path (xcuda's dlopen and dlsym, the staging
 * layer, srd-perf's device buffers) runs where there is no GPU.  Loaded
 * with SRD_CUDART=$OUT/test/libfakecudart.so; tools/gpu-check.sh runs the
 * real runtime on a GPU.
 *
 * It is hostile where a real device would be unforgiving: its "device
 * memory" is mapped PROT_NONE, so that any host access that is not one
 * of its copies faults (a device pointer handed to a socket fails with
 * EFAULT); its asynchronous copies run late, a seeded random few at a
 * time when an event is queried or a stream synchronised, so that a send
 * completed before its copy, or a receive before its copy to the
 * device, shows as wrong bytes; and it can fail copies or hold them all
 * (fake_cuda_control, or FAKE_CUDA_FAIL=P in the environment).
 *
 * One lock around everything: srd-perf --loopback calls it from two
 * threads.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The runtime's calls (cuda_runtime_api.h), with its ABI: cudaError_t is
   an int-sized enum, streams and events are pointers. */
int fake_cuda_control(int hold_copies, double fail, uint64_t seed);
void fake_cuda_counts(uint64_t *copies, uint64_t *failed, int *streams,
                      int *events);
int cudaGetDeviceCount(int *n);
int cudaSetDevice(int d);
int cudaRuntimeGetVersion(int *v);
int cudaDriverGetVersion(int *v);
int cudaGetDeviceProperties(void *prop, int d);
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaHostAlloc(void **p, size_t n, unsigned flags);
int cudaFreeHost(void *p);
int cudaMemcpy(void *d, const void *s, size_t n, int kind);
int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *st);
int cudaStreamCreateWithFlags(void **st, unsigned flags);
int cudaStreamDestroy(void *st);
int cudaStreamSynchronize(void *s);
int cudaEventCreateWithFlags(void **e, unsigned flags);
int cudaEventDestroy(void *e);
int cudaEventRecord(void *e, void *s);
int cudaEventQuery(void *e);
const char *cudaGetErrorName(int e);
const char *cudaGetErrorString(int e);

/* The runtime's values this fake uses (driver_types.h). */
enum {
  E_OK = 0,
  E_INVALID_VALUE = 1,
  E_ALLOC = 2,
  E_NOT_READY = 600,
  E_ILLEGAL_ADDRESS = 700,
};

#define MAX_REGIONS 4096
#define MAX_COPIES 65536
#define SEQS 65536

typedef struct region {
  uint8_t *p;
  size_t len, maplen;
} region;

typedef struct stream {
  uint64_t queued, done, last_mark;
  uint8_t failed[SEQS]; /* copy seq % SEQS failed */
} stream;

typedef struct event {
  stream *st;
  uint64_t from, mark; /* the stream's copies (from, mark] */
} event;

typedef struct copy {
  void *dst;
  const void *src;
  size_t n;
  stream *st;
  uint64_t seq;
  int fail;
} copy;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static region reg[MAX_REGIONS];
static int nreg;
static copy q[MAX_COPIES];
static size_t qh, qn;
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double fail_p = -1; /* -1: not read from the environment yet */
static int hold;
static uint64_t n_copies, n_failed;
static int n_streams, n_events;

static uint64_t rnd(void) {
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void init_env(void) {
  if (fail_p < 0) {
    const char *f = getenv("FAKE_CUDA_FAIL"), *s = getenv("FAKE_CUDA_SEED");
    fail_p = f ? atof(f) : 0;
    if (s) {
      rng = strtoull(s, NULL, 0);
    }
  }
}

static region *find(const void *p, size_t n) {
  const uint8_t *a = p;
  int i;
  for (i = 0; i < nreg; ++i) {
    if (a >= reg[i].p && a + n <= reg[i].p + reg[i].len) {
      return &reg[i];
    }
  }
  return NULL;
}

/* do_copy copies with the device regions opened for just that. */
static void do_copy(void *dst, const void *src, size_t n) {
  region *a = find(dst, n), *b = find(src, n);
  if (a) {
    mprotect(a->p, a->maplen, PROT_READ | PROT_WRITE);
  }
  if (b && b != a) {
    mprotect(b->p, b->maplen, PROT_READ | PROT_WRITE);
  }
  memmove(dst, src, n);
  if (a) {
    mprotect(a->p, a->maplen, PROT_NONE);
  }
  if (b && b != a) {
    mprotect(b->p, b->maplen, PROT_NONE);
  }
  ++n_copies;
}

static void run_one(void) {
  copy *c = &q[qh];
  if (c->fail) {
    c->st->failed[c->seq % SEQS] = 1;
    ++n_failed;
  } else {
    do_copy(c->dst, c->src, c->n);
  }
  ++c->st->done;
  qh = (qh + 1) % MAX_COPIES;
  --qn;
}

/* fake_cuda_control: |hold_copies| 1 runs no copy until 0 again; a
   |fail| probability >= 0 replaces FAKE_CUDA_FAIL; |seed| != 0 reseeds.
   Returns the live device regions (0 when all were freed). */
int fake_cuda_control(int hold_copies, double fail, uint64_t seed) {
  int n;
  pthread_mutex_lock(&mu);
  init_env();
  hold = hold_copies;
  if (fail >= 0) {
    fail_p = fail;
  }
  if (seed) {
    rng = seed;
  }
  n = nreg;
  pthread_mutex_unlock(&mu);
  return n;
}

/* fake_cuda_counts reports copies run and failed, and the streams and
   events not destroyed. */
void fake_cuda_counts(uint64_t *copies, uint64_t *failed, int *streams,
                      int *events) {
  pthread_mutex_lock(&mu);
  *copies = n_copies;
  *failed = n_failed;
  *streams = n_streams;
  *events = n_events;
  pthread_mutex_unlock(&mu);
}

/* ------------------------------------------------------------------ */
/* the runtime's calls                                                  */

int cudaGetDeviceCount(int *n) {
  *n = 1;
  return E_OK;
}

int cudaSetDevice(int d) {
  return d == 0 ? E_OK : E_INVALID_VALUE;
}

int cudaRuntimeGetVersion(int *v) {
  *v = 11080;
  return E_OK;
}

int cudaDriverGetVersion(int *v) {
  *v = 0;
  return E_OK;
}

int cudaGetDeviceProperties(void *prop, int d) {
  if (d != 0) {
    return E_INVALID_VALUE;
  }
  strcpy(prop, "fake CUDA device (test/transports/fake_cudart.c)");
  return E_OK;
}

int cudaMalloc(void **p, size_t n) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE), ml = (n + pg - 1) / pg * pg;
  void *m;
  int rv = E_ALLOC;

  pthread_mutex_lock(&mu);
  if (nreg < MAX_REGIONS) {
    m = mmap(NULL, ml ? ml : pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
      reg[nreg].p = m;
      reg[nreg].len = n;
      reg[nreg].maplen = ml ? ml : pg;
      ++nreg;
      *p = m;
      rv = E_OK;
    }
  }
  pthread_mutex_unlock(&mu);
  return rv;
}

int cudaFree(void *p) {
  int i, rv = E_INVALID_VALUE;
  pthread_mutex_lock(&mu);
  for (i = 0; i < nreg; ++i) {
    if (reg[i].p == p) {
      munmap(p, reg[i].maplen);
      reg[i] = reg[--nreg];
      rv = E_OK;
      break;
    }
  }
  pthread_mutex_unlock(&mu);
  return p == NULL ? E_OK : rv;
}

int cudaHostAlloc(void **p, size_t n, unsigned flags) {
  (void)flags;
  *p = malloc(n ? n : 1);
  return *p ? E_OK : E_ALLOC;
}

int cudaFreeHost(void *p) {
  free(p);
  return E_OK;
}

int cudaMemcpy(void *d, const void *s, size_t n, int kind) {
  (void)kind;
  pthread_mutex_lock(&mu);
  do_copy(d, s, n);
  pthread_mutex_unlock(&mu);
  return E_OK;
}

int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *st) {
  copy *c;
  int rv = E_ALLOC;
  (void)kind;
  pthread_mutex_lock(&mu);
  init_env();
  if (qn < MAX_COPIES) {
    c = &q[(qh + qn) % MAX_COPIES];
    c->dst = d;
    c->src = s;
    c->n = n;
    c->st = st;
    c->fail = fail_p > 0 && (double)(rnd() >> 11) / 9007199254740992.0 < fail_p;
    c->seq = ++c->st->queued;
    c->st->failed[c->seq % SEQS] = 0;
    ++qn;
    rv = E_OK;
  }
  pthread_mutex_unlock(&mu);
  return rv;
}

int cudaStreamCreateWithFlags(void **st, unsigned flags) {
  (void)flags;
  *st = calloc(1, sizeof(stream));
  pthread_mutex_lock(&mu);
  ++n_streams;
  pthread_mutex_unlock(&mu);
  return *st ? E_OK : E_ALLOC;
}

int cudaStreamDestroy(void *st) {
  pthread_mutex_lock(&mu);
  free(st);
  --n_streams;
  pthread_mutex_unlock(&mu);
  return E_OK;
}

int cudaStreamSynchronize(void *s) {
  stream *st = s;
  pthread_mutex_lock(&mu);
  while (st->done < st->queued) {
    run_one(); /* one FIFO for every stream: run up to this one's */
  }
  pthread_mutex_unlock(&mu);
  return E_OK;
}

int cudaEventCreateWithFlags(void **e, unsigned flags) {
  (void)flags;
  *e = calloc(1, sizeof(event));
  pthread_mutex_lock(&mu);
  ++n_events;
  pthread_mutex_unlock(&mu);
  return *e ? E_OK : E_ALLOC;
}

int cudaEventDestroy(void *e) {
  pthread_mutex_lock(&mu);
  free(e);
  --n_events;
  pthread_mutex_unlock(&mu);
  return E_OK;
}

int cudaEventRecord(void *e, void *s) {
  event *ev = e;
  stream *st = s;
  pthread_mutex_lock(&mu);
  ev->st = st;
  ev->from = st->last_mark;
  ev->mark = st->last_mark = st->queued;
  pthread_mutex_unlock(&mu);
  return E_OK;
}

int cudaEventQuery(void *e) {
  event *ev = e;
  uint64_t k;
  int rv = E_OK;

  pthread_mutex_lock(&mu);
  if (!hold) {
    /* The device gets on with a few copies, whichever streams. */
    for (k = rnd() % 4; k > 0 && qn > 0; --k) {
      run_one();
    }
  }
  if (ev->st->done < ev->mark) {
    rv = E_NOT_READY;
  } else {
    for (k = ev->from + 1; k <= ev->mark; ++k) {
      if (ev->st->failed[k % SEQS]) {
        rv = E_ILLEGAL_ADDRESS;
        break;
      }
    }
  }
  pthread_mutex_unlock(&mu);
  return rv;
}

const char *cudaGetErrorName(int e) {
  switch (e) {
  case E_OK:
    return "cudaSuccess";
  case E_INVALID_VALUE:
    return "cudaErrorInvalidValue";
  case E_ALLOC:
    return "cudaErrorMemoryAllocation";
  case E_NOT_READY:
    return "cudaErrorNotReady";
  case E_ILLEGAL_ADDRESS:
    return "cudaErrorIllegalAddress";
  default:
    return "cudaErrorUnknown";
  }
}

const char *cudaGetErrorString(int e) {
  return e == E_ILLEGAL_ADDRESS ? "a copy the fake device failed on purpose"
                                : "fake device error";
}
