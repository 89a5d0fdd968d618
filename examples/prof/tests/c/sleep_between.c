/* Two barriers 200 ms apart: each rank prints the MPI_Wtime seconds between the first
 * barrier's return and the second's call, which the trace's clock must give back. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv) {
  int rank;
  struct timespec pause = {0, 200000000};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = PMPI_Wtime();
  nanosleep(&pause, NULL);
  double t1 = PMPI_Wtime();
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d: %.9f s\n", rank, t1 - t0);
  MPI_Finalize();
  return 0;
}
