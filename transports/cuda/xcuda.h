/*
 * xcuda.h: the few CUDA runtime calls the transports need (device and
 * pinned host memory, asynchronous copies on streams, events), loaded at
 * run time.
 *
 * The build compiles this against the CUDA runtime's headers when it
 * finds them (tools/configure.sh: SRD_HAVE_CUDA; Debian's nvidia-cuda-dev,
 * `tools/install-deps.sh --cuda`), so that every prototype is checked
 * against the real API, and loads libcudart with dlopen(3) when a program
 * first asks for CUDA, as libfabric's hmem_cuda and NCCL do: a build with
 * CUDA still runs, host memory only, where there is no CUDA at all.
 *
 * The calls go through a table (xcuda_api) of the layer's own signatures.
 * The tests load a fake runtime with the real one's ABI
 * (test/transports/fake_cudart.c, SRD_CUDART=...) to check the staging
 * where there is no GPU; tools/gpu-check.sh runs the real one.
 *
 * Errors: the table's calls return 0 or a CUDA error code (positive, as
 * cudaError_t); xcuda_strerror names one.  One process-wide library; the
 * calls are thread-safe as the runtime's are.
 */
#ifndef XCUDA_H
#define XCUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xcuda_api is the runtime's calls the transports use.  Streams and
   events are opaque handles.  memcpy_* copy in either direction
   (cudaMemcpyDefault: unified addressing tells the runtime which). */
typedef struct xcuda_api {
  const char *name; /* the library loaded, e.g. "libcudart.so" */
  int (*dev_alloc)(void **p, size_t n);
  int (*dev_free)(void *p);
  int (*host_alloc)(void **p, size_t n); /* pinned (page-locked) */
  int (*host_free)(void *p);
  int (*memcpy_sync)(void *dst, const void *src, size_t n);
  int (*memcpy_async)(void *dst, const void *src, size_t n, void *stream);
  int (*stream_create)(void **stream); /* non-blocking */
  int (*stream_destroy)(void *stream);
  int (*stream_sync)(void *stream);
  int (*event_create)(void **ev); /* timing disabled */
  int (*event_destroy)(void *ev);
  int (*event_record)(void *ev, void *stream);
  /* event_query: 0 when the work before the event is done, XCUDA_PENDING
     while it is not, else an error. */
  int (*event_query)(void *ev);
  const char *(*error_string)(int err);
} xcuda_api;

/* XCUDA_PENDING is event_query's "not yet" (cudaErrorNotReady). */
#define XCUDA_PENDING 600

/* xcuda_info describes the device xcuda_open chose. */
typedef struct xcuda_info {
  int device;        /* its ordinal */
  int n_devices;     /* how many the runtime sees */
  int runtime;       /* cudaRuntimeGetVersion, e.g. 11080 */
  int driver;        /* cudaDriverGetVersion, e.g. 12040 (0: none) */
  char name[128];    /* e.g. "NVIDIA H200" */
  char library[128]; /* the runtime library loaded */
} xcuda_info;

/* xcuda_open loads the runtime (once per process), checks that it sees
   a device, makes |device| the calling thread's current device, and
   returns the table in *papi and a description in *info (either may be
   NULL).  The library is libcudart.so from the loader's path, else the
   soname of each CUDA version from 13 down to 11, else
   /usr/local/cuda/lib64's; SRD_CUDART names another.

   Returns 0, or a negative errno with |err| (|errlen| bytes) saying why:
   -ENOTSUP (this build has no CUDA support), -ENOENT (no runtime library
   found, or it lacks a call we use), -ENODEV (no CUDA device, or a driver
   older than the runtime), -EINVAL (no device |device|). */
int xcuda_open(int device, const xcuda_api **papi, xcuda_info *info, char *err,
               size_t errlen);

/* xcuda_strerror names CUDA error |err| with the runtime's text when it
   is loaded ("cudaErrorMemoryAllocation: out of memory"), else its
   number. */
const char *xcuda_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* XCUDA_H */
