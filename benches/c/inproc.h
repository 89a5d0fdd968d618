/* The timed loops and block lengths of the in-process modes of the overhead bench's C programs
 * (pingpong.c's `paired`, floor_trio.c). */
#ifndef INPROC_H
#define INPROC_H
#include <mpi.h>

/* `n` round trips of `size` bytes between ranks 0 and 1 after a warm-up of n / 20 + 1, each
 * call made through a pointer: PMPI_ (the direct path), MPI_ (through a preloaded tool) or a
 * function of the program's own (floor_trio's floor); the barrier and the clock are PMPI_'s
 * either way. Rank 0's time in seconds. Every block of a pair or triple runs this very code at
 * one address, only the calls' targets differ, so that where a loop's code sits cannot favour
 * one side: two copies of the loop (as a macro used to make) sit at different addresses, and
 * with no tool preloaded the MPI_ copy ran 1-7 ns a 1 KiB round trip slower than the PMPI_ copy
 * on mpich-ev, a bias charged to every tool. Not inlined and not cloned: the compiler must not
 * make a copy per target. */
typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
#if defined(__GNUC__) && !defined(__clang__)
#define ONE_COPY __attribute__((noinline, noclone))
#else
#define ONE_COPY __attribute__((noinline))
#endif
ONE_COPY static double path_loop(send_fn send, recv_fn recv, char *buf, int size, long n,
                                 int rank) {
  long i;
  double t0 = 0.0;
  PMPI_Barrier(MPI_COMM_WORLD);
  for (i = -(n / 20 + 1); i < n; i++) {
    if (i == 0) t0 = PMPI_Wtime();
    if (rank == 0) {
      send(buf, size, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
      recv(buf, size, MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      recv(buf, size, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      send(buf, size, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
    }
  }
  return PMPI_Wtime() - t0;
}

/* The direct path: what the program calls without a tool (MPI_Send is PMPI_Send's alias). */
static double loop_pmpi(char *buf, int size, long n, int rank) {
  return path_loop(PMPI_Send, PMPI_Recv, buf, size, n, rank);
}

/* Through whatever tool is preloaded (with none, the same functions as loop_pmpi). */
static double loop_mpi(char *buf, int size, long n, int rank) {
  return path_loop(MPI_Send, MPI_Recv, buf, size, n, rank);
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
