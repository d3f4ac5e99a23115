/*
 * boot_mpi.c: the MPI bootstrap (mpirun -np N srd-coll --mpi ...).  MPI
 * starts the ranks and carries the addresses and the results, nothing
 * else: MPI_Init, the rank and size, one MPI_Allgather of the xport
 * addresses, one MPI_Gather of the results, MPI_Finalize.  The data goes
 * over the transport.  Without MPI in the build (tools/configure.sh's
 * probe of ompi-c), the functions say so.
 */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "config.h"

#ifdef SRD_HAVE_MPI
#  include <mpi.h>

int boot_mpi_available(void) {
  return 1;
}

void boot_mpi_init(coll_boot *b, int *argc, char ***argv) {
  int rank, size;

  memset(b, 0, sizeof(*b));
  if (MPI_Init(argc, argv) != MPI_SUCCESS) {
    tool_die("MPI_Init failed");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2 || size > COLL_MAX_RANKS) {
    tool_die("%d MPI ranks: srd-coll runs 2..%d", size, COLL_MAX_RANKS);
  }
  b->mpi = 1;
  b->rank = (uint32_t)rank;
  b->n = (uint32_t)size;
}

int boot_mpi_exchange(coll_boot *b, const char *mine, coll_rank_addr *all) {
  coll_rank_addr me;

  (void)b;
  memset(&me, 0, sizeof(me));
  snprintf(me.addr, sizeof(me.addr), "%s", mine);
  return MPI_Allgather(&me, sizeof(me), MPI_BYTE, all, sizeof(me), MPI_BYTE,
                       MPI_COMM_WORLD) == MPI_SUCCESS
             ? 0
             : -1;
}

int boot_mpi_gather(coll_boot *b, const coll_result *res, const tool_hist *lat,
                    coll_result *all, tool_hist *hists) {
  size_t nb = lat->n_buckets, one = sizeof(coll_result) + nb * 8;
  uint8_t *sbuf = xmalloc(one), *rbuf = NULL;
  uint32_t r;
  int rv;

  memcpy(sbuf, res, sizeof(*res));
  memcpy(sbuf + sizeof(*res), lat->counts, nb * 8);
  if (b->rank == 0) {
    rbuf = xmalloc(one * b->n);
  }
  rv = MPI_Gather(sbuf, (int)one, MPI_BYTE, rbuf, (int)one, MPI_BYTE, 0,
                  MPI_COMM_WORLD);
  if (rv == MPI_SUCCESS && b->rank == 0) {
    for (r = 0; r < b->n; ++r) {
      memcpy(&all[r], rbuf + r * one, sizeof(coll_result));
      hist_unpack(&hists[r], &all[r],
                  (const uint64_t *)(rbuf + r * one + sizeof(coll_result)));
    }
  }
  free(sbuf);
  free(rbuf);
  return rv == MPI_SUCCESS ? 0 : -1;
}

void boot_mpi_fini(coll_boot *b, int failed) {
  /* A rank that failed still reached the gather; its exit status says
     so after MPI_Finalize (mpirun ends the job of a rank that died). */
  (void)b;
  (void)failed;
  MPI_Finalize();
}

#else

int boot_mpi_available(void) {
  return 0;
}

void boot_mpi_init(coll_boot *b, int *argc, char ***argv) {
  (void)b;
  (void)argc;
  (void)argv;
  tool_die("--mpi: this build has no MPI (tools/install-deps.sh installs "
           "libopenmpi-dev; then make again); use --hosts");
}

int boot_mpi_exchange(coll_boot *b, const char *mine, coll_rank_addr *all) {
  (void)b;
  (void)mine;
  (void)all;
  return -1;
}

int boot_mpi_gather(coll_boot *b, const coll_result *res, const tool_hist *lat,
                    coll_result *all, tool_hist *hists) {
  (void)b;
  (void)res;
  (void)lat;
  (void)all;
  (void)hists;
  return -1;
}

void boot_mpi_fini(coll_boot *b, int failed) {
  (void)b;
  (void)failed;
}

#endif
