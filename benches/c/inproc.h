/* The timed loops and block lengths of the in-process modes of the overhead bench's C programs
 * (pingpong.c's `paired`, floor_trio.c). */
#ifndef INPROC_H
#define INPROC_H
#include <mpi.h>

/* n round trips of `size` bytes between ranks 0 and 1 after a warm-up of n / 20 + 1, each call
 * between PRE and POST, through SEND/RECV: PMPI_ (the direct path) or MPI_ (through a preloaded
 * tool); the barrier and the clock are PMPI_'s either way. Rank 0's time in seconds. */
#define TIMED_LOOP(NAME, PRE, SEND, RECV, POST)                                         \
  static double NAME(char *buf, int size, long n, int rank) {                           \
    long i;                                                                             \
    double t0 = 0.0;                                                                    \
    PMPI_Barrier(MPI_COMM_WORLD);                                                       \
    for (i = -(n / 20 + 1); i < n; i++) {                                               \
      if (i == 0) t0 = PMPI_Wtime();                                                    \
      if (rank == 0) {                                                                  \
        PRE;                                                                            \
        SEND(buf, size, MPI_CHAR, 1, 7, MPI_COMM_WORLD);                                \
        POST;                                                                           \
        PRE;                                                                            \
        RECV(buf, size, MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);             \
        POST;                                                                           \
      } else {                                                                          \
        PRE;                                                                            \
        RECV(buf, size, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);             \
        POST;                                                                           \
        PRE;                                                                            \
        SEND(buf, size, MPI_CHAR, 0, 7, MPI_COMM_WORLD);                                \
        POST;                                                                           \
      }                                                                                 \
    }                                                                                   \
    return PMPI_Wtime() - t0;                                                           \
  }

/* Round trips of `size` bytes for about `seconds` by `loop` (rank 0's time in seconds): grown
 * fourfold from 8 until the fastest of three runs takes a quarter of it, then scaled. The
 * fastest of three: one slow moment of the host must not set the block length. Rank 0's time
 * is broadcast (through PMPI_, which no tool sees), so that both ranks agree on the count. */
static long calibrate(double (*loop)(char *, int, long, int), char *buf, int size,
                      double seconds, int rank) {
  long n = 8;
  for (;;) {
    double t = loop(buf, size, n, rank), u;
    int r;
    for (r = 0; r < 2; r++)
      if ((u = loop(buf, size, n, rank)) < t) t = u;
    PMPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (t >= seconds / 4) return (long)(n * seconds / t) + 1;
    n *= 4;
  }
}

#endif
