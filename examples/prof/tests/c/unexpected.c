/* Unexpected messages on 2 ranks: rank 1 sends K (the first argument, default 5) messages of
 * 64 bytes with tags 0..K-1 before rank 0 posts a receive (a barrier between), so each
 * arrives unexpected at rank 0 (MPICH's RECVQ events, MPI-4.1 §16.3.8). Prints one line per
 * rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, k = argc > 1 ? atoi(argv[1]) : 5;
  char buf[64] = {0};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1)
    for (int i = 0; i < k; i++) MPI_Send(buf, 64, MPI_BYTE, 0, i, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    for (int i = 0; i < k; i++)
      MPI_Recv(buf, 64, MPI_BYTE, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d: %d messages\n", rank, k);
  MPI_Finalize();
  return 0;
}
