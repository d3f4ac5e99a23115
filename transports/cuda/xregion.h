/*
 * xregion.h: a sorted table of memory regions (device memory an xport
 * was given), found by address in O(log n): which posted buffers are
 * device memory, and the handle each region carries (a libfabric memory
 * registration, for the fabric backend's FI_HMEM).
 */
#ifndef XREGION_H
#define XREGION_H

#include <stddef.h>
#include <stdint.h>

typedef struct xregion {
  uintptr_t lo, hi; /* [lo, hi) */
  int owned;        /* allocated by the xport: freed with it */
  void *handle;     /* the owner's, e.g. a struct fid_mr * */
} xregion;

typedef struct xregions {
  xregion *r; /* sorted by lo, none overlapping */
  size_t n, cap;
} xregions;

/* xregions_add adds [buf, buf + len).  Returns 0, -EINVAL (len 0),
   -EEXIST (it overlaps a region) or -ENOMEM. */
int xregions_add(xregions *rs, void *buf, size_t len, int owned, void *handle);

/* xregions_del removes the region that starts at |buf| and copies it
   into *out (unless NULL).  Returns 0 or -ENOENT. */
int xregions_del(xregions *rs, void *buf, xregion *out);

/* xregions_find returns the region that holds all of [buf, buf + len),
   or NULL. */
const xregion *xregions_find(const xregions *rs, const void *buf, size_t len);

/* xregions_free frees the table (not the regions' memory). */
void xregions_free(xregions *rs);

#endif /* XREGION_H */
