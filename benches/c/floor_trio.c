/* The call-mode floor in one process, for the overhead bench (benches/benches/prof.rs, part
 * `trio`): 2 ranks, per size (0 B, 1 KiB), BLOCKS triples of blocks of ~SECONDS each, the order
 * rotating: round trips through PMPI_Send/PMPI_Recv directly; the same with the C wrapper's very
 * reads (cwrap_reads.h) written here around each PMPI_ call (the floor, no preload needed); and
 * through MPI_Send/MPI_Recv, i.e. whatever tool is preloaded (mpit-prof in call mode, or the
 * preloaded C wrapper prof_cwrap.c). The barrier, the clock and the calibration go through PMPI_.
 * Then the same three without messages ("size" -1): each rank alone, pairs of MPI_Comm_rank
 * calls, the cost of a tool's call on this machine without a round trip's noise around it.
 *
 *   mpiexec -n 2 [TOOL] floor_trio SECONDS BLOCKS
 *       prints "trio SIZE N DIRECT_S FLOOR_S TOOL_S" per triple (rank 0, stdout; SIZE -1:
 *       N pairs of MPI_Comm_rank calls)
 *
 * Why: separate processes differ here by where their ranks land, so a tool's and the preloaded
 * wrapper's costs measured in different processes carry that difference; a tool against the
 * same reads in its own process does not. Under the preloaded wrapper, TOOL - FLOOR is what
 * the place of the same C code costs.
 */
#include "inproc.h"
#include "cwrap_reads.h"

static const int sizes[3] = {0, 1024, -1};

/* The floor: the C wrapper's calls (cwrap_reads.h), in the program. */
static double loop_floor(char *buf, int size, long n, int rank) {
  return path_loop(send_read, recv_read, buf, size, n, rank);
}

/* `n` pairs of CALL(MPI_COMM_WORLD, &r) between PRE and POST, no message: rank 0's time. */
#define LOCAL_LOOP(NAME, PRE, CALL, POST)                                                  \
  static double NAME(char *buf, int size, long n, int rank) {                           \
    long i;                                                                             \
    int r;                                                                              \
    double t0 = 0.0;                                                                    \
    (void)buf, (void)size, (void)rank;                                                  \
    PMPI_Barrier(MPI_COMM_WORLD);                                                       \
    for (i = -(n / 20 + 1); i < n; i++) {                                               \
      if (i == 0) t0 = PMPI_Wtime();                                                    \
      PRE;                                                                              \
      CALL(MPI_COMM_WORLD, &r);                                                         \
      POST;                                                                             \
      PRE;                                                                              \
      CALL(MPI_COMM_WORLD, &r);                                                         \
      POST;                                                                             \
    }                                                                                   \
    return PMPI_Wtime() - t0;                                                           \
  }

LOCAL_LOOP(local_direct, (void)0, PMPI_Comm_rank, (void)0)
LOCAL_LOOP(local_floor, read_all(), PMPI_Comm_rank, read_all())
LOCAL_LOOP(local_tool, (void)0, MPI_Comm_rank, (void)0)

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
  for (k = 0; k < 3; k++) {
    int local = sizes[k] < 0;
    double (*loops[3])(char *, int, long, int) = {
        local ? local_direct : loop_pmpi,
        local ? local_floor : loop_floor,
        local ? local_tool : loop_mpi,
    };
    /* Without messages the direct calls take next to nothing: blocks sized by the floor. */
    long n = calibrate(loops[local], buf, sizes[k], seconds, rank);
    for (b = 0; b < blocks; b++) {
      double t[3];
      int j;
      for (j = 0; j < 3; j++) {
        int w = (int)((j + b) % 3);
        t[w] = loops[w](buf, sizes[k], n, rank);
      }
      if (rank == 0) printf("trio %d %ld %.9f %.9f %.9f\n", sizes[k], n, t[0], t[1], t[2]);
    }
  }
  MPI_Finalize();
  return 0;
}
