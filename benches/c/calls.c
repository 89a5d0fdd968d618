/* One rank's cost of single calls under a preloaded tool (benches/benches/prof.rs, trace part):
 * MPI_Comm_rank, and MPI_Sendrecv of 0 bytes to itself (a message each way, with its status),
 * each in blocks of N calls made through a pointer to the PMPI_ function (the direct path) or
 * to the MPI_ one (through the tool), the blocks alternating, BLOCKS of each. Without a round
 * trip to wait on, a tool's work per call is all the program sees.
 *
 *   calls N BLOCKS   prints "calls RANK_DIRECT RANK_TOOL SENDRECV_DIRECT SENDRECV_TOOL",
 *                    the fastest block of each in ns a call
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*rank_fn)(MPI_Comm, int *);
typedef int (*sendrecv_fn)(const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype,
                           int, int, MPI_Comm, MPI_Status *);

/* Not inlined: both targets run the same loop at one address. */
__attribute__((noinline)) static double ranks(rank_fn f, long n) {
  int r;
  long i;
  double t0 = PMPI_Wtime();
  for (i = 0; i < n; i++) f(MPI_COMM_WORLD, &r);
  return (PMPI_Wtime() - t0) / n * 1e9;
}

__attribute__((noinline)) static double sendrecvs(sendrecv_fn f, long n) {
  char out[8] = {0}, in[8];
  long i;
  double t0 = PMPI_Wtime();
  for (i = 0; i < n; i++)
    f(out, 0, MPI_CHAR, 0, 5, in, 8, MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return (PMPI_Wtime() - t0) / n * 1e9;
}

static void least(double *m, double t) {
  if (t < *m) *m = t;
}

int main(int argc, char **argv) {
  long n;
  int blocks, b;
  double m[4] = {1e30, 1e30, 1e30, 1e30};
  MPI_Init(&argc, &argv); /* the tool starts here, and ends at MPI_Finalize */
  if (argc != 3) {
    fprintf(stderr, "usage: mpiexec -n 1 %s N BLOCKS\n", argv[0]);
    PMPI_Abort(MPI_COMM_WORLD, 2);
  }
  n = atol(argv[1]);
  blocks = atoi(argv[2]);
  for (b = 0; b < blocks; b++) {
    /* The order flipped every block: neither side always runs first. */
    if (b % 2 == 0) {
      least(&m[0], ranks(PMPI_Comm_rank, n));
      least(&m[1], ranks(MPI_Comm_rank, n));
      least(&m[2], sendrecvs(PMPI_Sendrecv, n));
      least(&m[3], sendrecvs(MPI_Sendrecv, n));
    } else {
      least(&m[1], ranks(MPI_Comm_rank, n));
      least(&m[0], ranks(PMPI_Comm_rank, n));
      least(&m[3], sendrecvs(MPI_Sendrecv, n));
      least(&m[2], sendrecvs(PMPI_Sendrecv, n));
    }
  }
  printf("calls %.2f %.2f %.2f %.2f\n", m[0], m[1], m[2], m[3]);
  MPI_Finalize();
  return 0;
}
