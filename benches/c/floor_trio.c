/* The call-mode floor in one process, for the overhead bench (benches/benches/prof.rs, part
 * `trio`): 2 ranks, per size (0 B, 1 KiB), BLOCKS triples of blocks of ~SECONDS each, the order
 * rotating: round trips through PMPI_Send/PMPI_Recv directly; the same with the C wrapper's very
 * reads (cwrap_reads.h) written here around each PMPI_ call (the floor, no preload needed); and
 * through MPI_Send/MPI_Recv, i.e. whatever tool is preloaded (mpit-prof in call mode, or the
 * preloaded C wrapper prof_cwrap.c). The barrier, the clock and the calibration go through PMPI_.
 *
 *   mpiexec -n 2 [TOOL] floor_trio SECONDS BLOCKS
 *       prints "trio SIZE N DIRECT_S FLOOR_S TOOL_S" per triple (rank 0, stdout)
 *
 * Why: separate processes differ here by where their ranks land, so a tool's and the preloaded
 * wrapper's costs measured in different processes carry that difference; a tool against the
 * same reads in its own process does not. Under the preloaded wrapper, TOOL - FLOOR is what
 * the place of the same C code costs.
 */
#include "inproc.h"
#include "cwrap_reads.h"

static const int sizes[2] = {0, 1024};

TIMED_LOOP(loop_direct, (void)0, PMPI_Send, PMPI_Recv, (void)0)
TIMED_LOOP(loop_floor, read_all(), PMPI_Send, PMPI_Recv, read_all())
TIMED_LOOP(loop_tool, (void)0, MPI_Send, MPI_Recv, (void)0)

int main(int argc, char **argv) {
  int rank, nranks, k;
  long b, blocks;
  double seconds;
  char buf[1024];
  MPI_Init(&argc, &argv);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (nranks != 2 || argc != 3) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 %s SECONDS BLOCKS\n", argv[0]);
    PMPI_Abort(MPI_COMM_WORLD, 2);
  }
  seconds = atof(argv[1]);
  blocks = atol(argv[2]);
  setup();
  memset(buf, 1, sizeof buf);
  for (k = 0; k < 2; k++) {
    long n = calibrate(loop_direct, buf, sizes[k], seconds, rank);
    for (b = 0; b < blocks; b++) {
      double t[3];
      int j;
      for (j = 0; j < 3; j++) {
        int w = (int)((j + b) % 3);
        t[w] = w == 0   ? loop_direct(buf, sizes[k], n, rank)
               : w == 1 ? loop_floor(buf, sizes[k], n, rank)
                        : loop_tool(buf, sizes[k], n, rank);
      }
      if (rank == 0) printf("trio %d %ld %.9f %.9f %.9f\n", sizes[k], n, t[0], t[1], t[2]);
    }
  }
  MPI_Finalize();
  return 0;
}
