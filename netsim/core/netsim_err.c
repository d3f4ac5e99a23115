/*
 * netsim_err.c: error strings and the default allocator.
 */
#include <netsim/netsim.h>

#include <stdlib.h>

const char *netsim_strerror(int err) {
  switch (err) {
  case 0:
    return "success";
  case NETSIM_ERR_INVAL:
    return "invalid argument";
  case NETSIM_ERR_NOENT:
    return "no such object";
  case NETSIM_ERR_POOL:
    return "pool exhausted";
  case NETSIM_ERR_DROPPED:
    return "packet dropped";
  case NETSIM_ERR_STATE:
    return "not allowed in this state";
  case NETSIM_ERR_NOMEM:
    return "out of memory";
  default:
    return "unknown error";
  }
}

static void *def_malloc(size_t size, void *user_data) {
  (void)user_data;
  return malloc(size);
}

static void def_free(void *ptr, void *user_data) {
  (void)user_data;
  free(ptr);
}

static void *def_calloc(size_t nmemb, size_t size, void *user_data) {
  (void)user_data;
  return calloc(nmemb, size);
}

const netsim_mem *netsim_mem_default(void) {
  static const netsim_mem mem = {NULL, def_malloc, def_free, def_calloc};
  return &mem;
}
