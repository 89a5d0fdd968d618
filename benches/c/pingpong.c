/* The 2-rank ping-pong of the mpit-prof overhead bench (benches/benches/prof.rs): MPI_Send /
 * MPI_Recv round trips at 0 B, 1 KiB and 1 MiB. It times its own loops with MPI_Wtime, so the
 * launch, MPI_Init and whatever a profiler does at MPI_Init and MPI_Finalize do not count.
 *
 *   pingpong calibrate SECONDS   prints "iters SIZE N" per size: round trips for ~SECONDS
 *   pingpong N0 N1K N1M          prints "time SIZE N SECONDS" per size (rank 0, stdout)
 *   pingpong paired SECONDS BLOCKS
 *       per size, BLOCKS pairs of blocks of ~SECONDS each: one block calls PMPI_Send/PMPI_Recv
 *       (the program without any PMPI tool: MPI_Send is PMPI_Send's alias in the library),
 *       the other MPI_Send/MPI_Recv (through whatever tool is preloaded), the order alternating;
 *       prints "paired SIZE N BLOCKS" then "pair SIZE N PMPI_SECONDS MPI_SECONDS" per pair.
 *       Both sides run in one process, seconds apart: a tool's cost without the differences
 *       between processes (where the ranks landed), which make separate runs differ up to
 *       twofold here.
 *       Everything outside the timed loops goes through PMPI_, so that no tool sees it.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inproc.h"

static const int sizes[3] = {0, 1024, 1 << 20};

/* n round trips of `size` bytes between ranks 0 and 1; rank 0's time in seconds. The program
 * as any would be written (direct MPI_ calls, the barrier and clock too, seen by a tool): the
 * separate processes' mode; the paired mode's loop (inproc.h) calls through pointers. */
static double loop(char *buf, int size, long n, int rank) {
  long warmup = n / 10 + 1, i;
  double t0 = 0.0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (i = -warmup; i < n; i++) {
    if (i == 0) t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buf, size, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
      MPI_Recv(buf, size, MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, size, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, size, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
    }
  }
  return MPI_Wtime() - t0;
}

/* The paired mode (see the top): calibrated on the direct path, rank 0's counts broadcast. */
static void paired(char *buf, double seconds, long blocks, int rank) {
  int k;
  long b;
  for (k = 0; k < 3; k++) {
    long n = calibrate(loop_pmpi, buf, sizes[k], seconds, rank);
    if (rank == 0) printf("paired %d %ld %ld\n", sizes[k], n, blocks);
    for (b = 0; b < blocks; b++) {
      double direct, tool;
      if (b % 2 == 0) {
        direct = loop_pmpi(buf, sizes[k], n, rank);
        tool = loop_mpi(buf, sizes[k], n, rank);
      } else {
        tool = loop_mpi(buf, sizes[k], n, rank);
        direct = loop_pmpi(buf, sizes[k], n, rank);
      }
      if (rank == 0) printf("pair %d %ld %.9f %.9f\n", sizes[k], n, direct, tool);
    }
  }
}

int main(int argc, char **argv) {
  int rank, nranks, k;
  char *buf;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (nranks != 2 || argc < 3 || (strcmp(argv[1], "calibrate") != 0 && argc != 4)) {
    if (rank == 0)
      fprintf(stderr,
              "usage: mpiexec -n 2 %s calibrate SECONDS | N0 N1K N1M | paired SECONDS BLOCKS\n",
              argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  buf = malloc(sizes[2]);
  memset(buf, 1, sizes[2]);
  if (strcmp(argv[1], "paired") == 0) {
    paired(buf, atof(argv[2]), atol(argv[3]), rank);
  } else if (strcmp(argv[1], "calibrate") == 0) {
    double target = atof(argv[2]);
    for (k = 0; k < 3; k++) {
      long n = 8;
      for (;;) {
        double t = loop(buf, sizes[k], n, rank);
        /* Both ranks take rank 0's measurement, so they agree on the next count. */
        MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (t >= target / 4) {
          n = (long)(n * target / t) + 1;
          break;
        }
        n *= 4;
      }
      if (rank == 0) printf("iters %d %ld\n", sizes[k], n);
    }
  } else {
    for (k = 0; k < 3; k++) {
      long n = atol(argv[1 + k]);
      double t = loop(buf, sizes[k], n, rank);
      if (rank == 0) printf("time %d %ld %.9f\n", sizes[k], n, t);
    }
  }
  fflush(stdout);
  free(buf);
  MPI_Finalize();
  return 0;
}
