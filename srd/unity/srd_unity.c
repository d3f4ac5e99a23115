/*
 * srd_unity.c: libsrd as one translation unit.
 *
 * The library is built from this file rather than from each module, so
 * that the compiler can inline across modules on the packet path (the
 * path picker, the sent-packet ring, the codec, the ACK tracker) without
 * asking users' toolchains for link-time optimisation: srd-bench measured
 * about 12% fewer instructions per message and a third less time.  Every
 * module still compiles on its own (the fuzz targets build them so).
 */
#include "../srd_acktr.c"
#include "../srd_cc.c"
#include "../srd_crc32c.c"
#include "../srd_ep.c"
#include "../srd_err.c"
#include "../srd_hs.c"
#include "../srd_pathset.c"
#include "../srd_pcg.c"
#include "../srd_pkt.c"
#include "../srd_pq.c"
#include "../srd_rtb.c"
#include "../srd_rtt.c"
#include "../srd_rx.c"
#include "../srd_siphash.c"
#include "../srd_tx.c"
