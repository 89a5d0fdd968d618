/* The known pattern: rank i sends i+1 messages of 1000*(i+1) bytes to rank
 * (i+1) % n and receives the matching messages from rank (i-1) % n, inside region "exchange".
 * Prints one line per rank on stdout (the profiler must not change it) and exits with the
 * status given as the first argument (the profiler must pass it through). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpit_prof.h"

int main(int argc, char **argv) {
  int rank, size, status = argc > 1 ? atoi(argv[1]) : 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int to = (rank + 1) % size, from = (rank + size - 1) % size;
  int nsend = size > 1 ? rank + 1 : 0, nrecv = size > 1 ? from + 1 : 0;
  size_t ssend = 1000 * (size_t)(rank + 1), srecv = 1000 * (size_t)(from + 1);
  char *sbuf = calloc(ssend, 1), *rbuf = calloc(srecv, 1);
  memset(sbuf, rank, ssend);
  long check = 0;
  MPIT_PROF_BEGIN("exchange");
  /* Even ranks send first, odd ranks receive first: no deadlock with blocking sends. Alone,
   * a rank would send to itself (which may block): no exchange then. */
  for (int phase = 0; phase < 2 && size > 1; phase++) {
    if ((rank % 2 == 0) == (phase == 0)) {
      for (int k = 0; k < nsend; k++)
        MPI_Send(sbuf, (int)ssend, MPI_BYTE, to, 7, MPI_COMM_WORLD);
    } else {
      for (int k = 0; k < nrecv; k++) {
        MPI_Recv(rbuf, (int)srecv, MPI_BYTE, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check += rbuf[0];
      }
    }
  }
  MPIT_PROF_END("exchange");
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d of %d: sent %d x %zu B to %d, received %d x %zu B from %d (check %ld)\n",
         rank, size, nsend, ssend, to, nrecv, srecv, from, check);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return status;
}
