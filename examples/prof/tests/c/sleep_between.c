/* Four barriers 100 ms apart: each rank prints the CLOCK_MONOTONIC seconds between each
 * barrier's return and the next one's call (three intervals), which the trace's clock must give
 * back. Not MPI_Wtime: MPICH's is CLOCK_REALTIME, which time synchronisation steps. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define INTERVALS 3

int main(int argc, char **argv) {
  int rank;
  double slept[INTERVALS];
  struct timespec pause = {0, 100000000}, t0, t1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < INTERVALS; i++) {
    clock_gettime(CLOCK_MONOTONIC, &t0);
    nanosleep(&pause, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    MPI_Barrier(MPI_COMM_WORLD);
    slept[i] = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  }
  /* One write per rank, so that the two ranks' lines do not interleave. */
  printf("rank %d: %.9f %.9f %.9f\n", rank, slept[0], slept[1], slept[2]);
  MPI_Finalize();
  return 0;
}
