/*
 * srd_crc32c.h: CRC32C (Castagnoli), the integrity check of the wire
 * format (docs/protocol.md, "Integrity"): the polynomial of iSCSI, ext4,
 * SCTP and RoCE's ICRC, reflected 0x82F63B78, initial value and final xor
 * 0xFFFFFFFF.  "123456789" gives 0xE3069283.
 *
 * On x86-64 with SSE4.2 the CRC32 instruction runs three interleaved
 * streams (its latency is three cycles, its throughput one per cycle)
 * combined with shift tables; with AVX-512 and VPCLMULQDQ as well, long
 * buffers are folded with carry-less multiplies; elsewhere slicing-by-8.
 * The choice is made once per call from a cached CPU check (probed on
 * first use, a benign race between threads); every path gives the same
 * result (test/srd/test_crc32c.c holds them to a bitwise reference).
 *
 * The functions are defined in srd_crc32c.c, from tables generated into
 * srd_crc32c_tab.h.  They allocate nothing and cannot fail; a |buf| of
 * |len| 0 is never read.
 */
#ifndef SRD_CRC32C_H
#define SRD_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#include <srd/srd.h> /* srd_crc32c(), srd_crc32c_impl() */

/* srd_crc32c_copy is memcpy(dst, src, len) that also returns
   srd_crc32c(crc, src, len): one pass over the bytes (for long buffers
   on the folding path, the copy and then a pass over the copy, which is
   in cache).  |dst| and |src| must not overlap. */
uint32_t srd_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len);

/* srd_crc32c_skip4 returns the CRC32C of the |len| bytes at |buf| but
   the four at offset |skip| (skip + 4 <= len): a header's, its own CRC
   field left out, in one call. */
uint32_t srd_crc32c_skip4(const void *buf, size_t len, size_t skip);

/* srd_crc32c_sw is the portable path alone (for tests and benchmarks):
   srd_crc32c's result, by slicing-by-8 on any CPU. */
uint32_t srd_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* srd_crc32c_hw_available returns nonzero if the CPU's CRC32 instruction
   (SSE4.2) is used, 0 on other CPUs and other architectures. */
int srd_crc32c_hw_available(void);

#endif /* SRD_CRC32C_H */
