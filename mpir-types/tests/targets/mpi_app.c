/* The MPI program of the Open MPI proofs (mpir-types/tests/os_openmpi.rs).
 *
 * Usage: mpi_app [SLEEP_SECONDS [RANK0_EXIT_CODE]]
 *
 * After MPI_Init each rank prints its own view of what the MPIR process table must say:
 *   rank R pid P host H exe E
 * (H from MPI_Get_processor_name, E the canonical path of /proc/self/exe), sleeps, meets the
 * others in a barrier, finalizes and exits 0 (rank 0 with RANK0_EXIT_CODE if given). */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, len;
    char host[MPI_MAX_PROCESSOR_NAME];
    char exe[PATH_MAX];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Get_processor_name(host, &len);
    if (!realpath("/proc/self/exe", exe)) exe[0] = '\0';
    printf("rank %d pid %d host %s exe %s\n", rank, (int)getpid(), host, exe);
    fflush(stdout);
    sleep(argc > 1 ? (unsigned)atoi(argv[1]) : 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return rank == 0 && argc > 2 ? atoi(argv[2]) : 0;
}
