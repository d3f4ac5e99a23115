/*
 * xport_stage.h: CUDA device memory over any backend, staged through
 * pinned host buffers (xport_config.mem = XPORT_MEM_CUDA).
 *
 * The staging layer is an xport in front of another: the backend opens
 * with host memory and never sees a device pointer.  A send from device
 * memory is copied into a pinned host buffer on the layer's device-to-
 * host stream (cudaMemcpyAsync) and handed to the backend when the copy's
 * event says it is done; a receive into device memory is posted to the
 * backend with a pinned host buffer, whose bytes are copied to the device
 * on the host-to-device stream when it completes, and the receive
 * completes when that copy has.  Copies of many messages are in flight at
 * once, and each stream overlaps the other and the network, the way
 * ucx_perftest -m cuda stages over TCP: the cost of staging is in the
 * measurement, as it would be in an application.
 *
 * Buffers outside every registered device region are host memory and go
 * straight to the backend, but in posting order with the staged ones
 * (tcp's per-peer order holds for a mix).  Every posted operation still
 * ends in exactly one completion: a failed copy completes it with -EIO
 * and detail XPORT_DETAIL_CUDA - the CUDA error; a send whose peer was
 * removed before its copy was done, with -ECANCELED.
 *
 * Pinned buffers are allocated on demand in power-of-two sizes (4 KiB
 * up) and kept for reuse, up to cfg.stage_bytes per direction; one
 * message always fits, however large.
 */
#ifndef XPORT_STAGE_H
#define XPORT_STAGE_H

#include "xport.h"

/* xport_stage_open opens backend |inner| with |cfg| (its mem as host)
   behind the staging layer, on CUDA device cfg->cuda_device, and stores
   the xport in *px.  Returns 0, or a negative errno: what xcuda_open
   returned (-ENOTSUP, -ENOENT, -ENODEV, -EINVAL: cfg->log says why), what
   |inner|'s open returned, -EIO (a stream or event could not be made) or
   -ENOMEM.  Nothing is left open on an error. */
int xport_stage_open(xport **px, const xport_ops *inner,
                     const xport_config *cfg);

#endif /* XPORT_STAGE_H */
