/*
 * xcuda.c: the CUDA runtime, loaded at run time (xcuda.h).
 */
#define _GNU_SOURCE
#include "xcuda.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#ifdef SRD_HAVE_CUDA
#  include <cuda_runtime_api.h>
#  include <dlfcn.h>
#  include <pthread.h>
#endif

#ifndef SRD_HAVE_CUDA

int xcuda_open(int device, const xcuda_api **papi, xcuda_info *info, char *err,
               size_t errlen) {
  (void)device;
  (void)papi;
  (void)info;
  snprintf(err, errlen,
           "this build has no CUDA support (the CUDA runtime's headers were "
           "not found when it was built: tools/install-deps.sh --cuda "
           "installs them; make then rebuilds)");
  return -ENOTSUP;
}

const char *xcuda_strerror(int e) {
  static __thread char b[64];

  snprintf(b, sizeof(b), "CUDA error %d", e);
  return b;
}

#else /* SRD_HAVE_CUDA */

/* The runtime's calls, typed by its own header (a prototype that changes
   breaks the build, not the run). */
static struct {
  __typeof__(cudaGetDeviceCount) *get_device_count;
  __typeof__(cudaSetDevice) *set_device;
  __typeof__(cudaRuntimeGetVersion) *runtime_version;
  __typeof__(cudaDriverGetVersion) *driver_version;
  __typeof__(cudaMalloc) *malloc_;
  __typeof__(cudaFree) *free_;
  __typeof__(cudaHostAlloc) *host_alloc;
  __typeof__(cudaFreeHost) *free_host;
  __typeof__(cudaMemcpy) *memcpy_;
  __typeof__(cudaMemcpyAsync) *memcpy_async;
  __typeof__(cudaStreamCreateWithFlags) *stream_create;
  __typeof__(cudaStreamDestroy) *stream_destroy;
  __typeof__(cudaStreamSynchronize) *stream_sync;
  __typeof__(cudaEventCreateWithFlags) *event_create;
  __typeof__(cudaEventDestroy) *event_destroy;
  __typeof__(cudaEventRecord) *event_record;
  __typeof__(cudaEventQuery) *event_query;
  __typeof__(cudaGetErrorName) *error_name;
  __typeof__(cudaGetErrorString) *error_string;
  /* cudaGetDeviceProperties changed its struct in CUDA 12 (_v2); only
     the name, its first member in every version, is read. */
  int (*get_props)(void *prop, int device);
} rt;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static void *lib;
static char lib_name[128];
static char load_err[256];

static void load(void) {
  static const char *const names[] = {
      "libcudart.so",
      "libcudart.so.13",
      "libcudart.so.12",
      "libcudart.so.11.0",
      "/usr/local/cuda/lib64/libcudart.so",
      NULL,
  };
  const char *env = getenv("SRD_CUDART");
  const char *missing = NULL;
  int i;

  if (env && env[0]) {
    lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    snprintf(lib_name, sizeof(lib_name), "%s", env);
    if (lib == NULL) {
      snprintf(load_err, sizeof(load_err), "SRD_CUDART=%s: %s", env, dlerror());
      return;
    }
  }
  for (i = 0; lib == NULL && names[i]; ++i) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    snprintf(lib_name, sizeof(lib_name), "%s", names[i]);
  }
  if (lib == NULL) {
    snprintf(load_err, sizeof(load_err),
             "no CUDA runtime library (libcudart.so) found: install the "
             "CUDA runtime, or name it with SRD_CUDART");
    return;
  }
#  define SYM(field, sym)                                                      \
    do {                                                                       \
      *(void **)&rt.field = dlsym(lib, sym);                                   \
      if (rt.field == NULL && missing == NULL) {                               \
        missing = sym;                                                         \
      }                                                                        \
    } while (0)
  SYM(get_device_count, "cudaGetDeviceCount");
  SYM(set_device, "cudaSetDevice");
  SYM(runtime_version, "cudaRuntimeGetVersion");
  SYM(driver_version, "cudaDriverGetVersion");
  SYM(malloc_, "cudaMalloc");
  SYM(free_, "cudaFree");
  SYM(host_alloc, "cudaHostAlloc");
  SYM(free_host, "cudaFreeHost");
  SYM(memcpy_, "cudaMemcpy");
  SYM(memcpy_async, "cudaMemcpyAsync");
  SYM(stream_create, "cudaStreamCreateWithFlags");
  SYM(stream_destroy, "cudaStreamDestroy");
  SYM(stream_sync, "cudaStreamSynchronize");
  SYM(event_create, "cudaEventCreateWithFlags");
  SYM(event_destroy, "cudaEventDestroy");
  SYM(event_record, "cudaEventRecord");
  SYM(event_query, "cudaEventQuery");
  SYM(error_name, "cudaGetErrorName");
  SYM(error_string, "cudaGetErrorString");
#  undef SYM
  *(void **)&rt.get_props = dlsym(lib, "cudaGetDeviceProperties_v2");
  if (rt.get_props == NULL) {
    *(void **)&rt.get_props = dlsym(lib, "cudaGetDeviceProperties");
  }
  if (missing) {
    snprintf(load_err, sizeof(load_err), "%s has no %s", lib_name, missing);
    dlclose(lib);
    lib = NULL;
  }
}

const char *xcuda_strerror(int e) {
  static __thread char b[192];

  if (lib == NULL) {
    snprintf(b, sizeof(b), "CUDA error %d", e);
  } else {
    snprintf(b, sizeof(b), "%s: %s", rt.error_name((cudaError_t)e),
             rt.error_string((cudaError_t)e));
  }
  return b;
}

static int r_dev_alloc(void **p, size_t n) {
  return (int)rt.malloc_(p, n);
}
static int r_dev_free(void *p) {
  return (int)rt.free_(p);
}
static int r_host_alloc(void **p, size_t n) {
  /* Portable: usable from every context, as the staging buffers of one
     xport may be used by a thread other than the one that made them. */
  return (int)rt.host_alloc(p, n, cudaHostAllocPortable);
}
static int r_host_free(void *p) {
  return (int)rt.free_host(p);
}
static int r_memcpy_sync(void *d, const void *s, size_t n) {
  return (int)rt.memcpy_(d, s, n, cudaMemcpyDefault);
}
static int r_memcpy_async(void *d, const void *s, size_t n, void *st) {
  return (int)rt.memcpy_async(d, s, n, cudaMemcpyDefault, (cudaStream_t)st);
}
static int r_stream_create(void **st) {
  return (int)rt.stream_create((cudaStream_t *)st, cudaStreamNonBlocking);
}
static int r_stream_destroy(void *st) {
  return (int)rt.stream_destroy((cudaStream_t)st);
}
static int r_stream_sync(void *st) {
  return (int)rt.stream_sync((cudaStream_t)st);
}
static int r_event_create(void **ev) {
  return (int)rt.event_create((cudaEvent_t *)ev, cudaEventDisableTiming);
}
static int r_event_destroy(void *ev) {
  return (int)rt.event_destroy((cudaEvent_t)ev);
}
static int r_event_record(void *ev, void *st) {
  return (int)rt.event_record((cudaEvent_t)ev, (cudaStream_t)st);
}
static int r_event_query(void *ev) {
  cudaError_t e = rt.event_query((cudaEvent_t)ev);
  return e == cudaErrorNotReady ? XCUDA_PENDING : (int)e;
}
static const char *r_error_string(int e) {
  return xcuda_strerror(e);
}

static xcuda_api real = {
    lib_name,         r_dev_alloc,   r_dev_free,     r_host_alloc,
    r_host_free,      r_memcpy_sync, r_memcpy_async, r_stream_create,
    r_stream_destroy, r_stream_sync, r_event_create, r_event_destroy,
    r_event_record,   r_event_query, r_error_string,
};

int xcuda_open(int device, const xcuda_api **papi, xcuda_info *info, char *err,
               size_t errlen) {
  int n = 0, v;
  cudaError_t e;
  char props[8192]; /* larger than any version's cudaDeviceProp */

  pthread_once(&load_once, load);
  if (lib == NULL) {
    snprintf(err, errlen, "%s", load_err);
    return -ENOENT;
  }
  e = rt.get_device_count(&n);
  if (e != cudaSuccess || n == 0) {
    snprintf(err, errlen, "no CUDA device (%s: %s)", lib_name,
             e != cudaSuccess ? xcuda_strerror((int)e) : "it sees none");
    return -ENODEV;
  }
  if (device < 0 || device >= n) {
    snprintf(err, errlen, "no CUDA device %d (there are %d)", device, n);
    return -EINVAL;
  }
  e = rt.set_device(device);
  if (e != cudaSuccess) {
    snprintf(err, errlen, "CUDA device %d: %s", device, xcuda_strerror((int)e));
    return -ENODEV;
  }
  if (papi) {
    *papi = &real;
  }
  if (info) {
    memset(info, 0, sizeof(*info));
    info->device = device;
    info->n_devices = n;
    if (rt.runtime_version(&v) == cudaSuccess) {
      info->runtime = v;
    }
    if (rt.driver_version(&v) == cudaSuccess) {
      info->driver = v;
    }
    memset(props, 0, sizeof(props));
    if (rt.get_props && rt.get_props(props, device) == 0) {
      snprintf(info->name, sizeof(info->name), "%.127s", props);
    } else {
      snprintf(info->name, sizeof(info->name), "CUDA device %d", device);
    }
    snprintf(info->library, sizeof(info->library), "%s", lib_name);
  }
  return 0;
}

#endif /* SRD_HAVE_CUDA */
