/* Four barriers 100 ms apart: each rank prints the MPI_Wtime seconds between each barrier's
 * return and the next one's call (three intervals), which the trace's clock must give back. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define INTERVALS 3

int main(int argc, char **argv) {
  int rank;
  double slept[INTERVALS];
  struct timespec pause = {0, 100000000};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < INTERVALS; i++) {
    double t0 = PMPI_Wtime();
    nanosleep(&pause, NULL);
    double t1 = PMPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    slept[i] = t1 - t0;
  }
  /* One write per rank, so that the two ranks' lines do not interleave. */
  printf("rank %d: %.9f %.9f %.9f\n", rank, slept[0], slept[1], slept[2]);
  MPI_Finalize();
  return 0;
}
