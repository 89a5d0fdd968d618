/*
 * The 2-rank target of examples/tests/mqd_dump.rs. Usage: mqd_target DIR
 *
 * Both ranks communicate on a duplicate of MPI_COMM_WORLD named "mqd-test-comm":
 * - rank 0 posts MPI_Irecv(10 ints, from 1, tag 42);
 * - rank 1 sends three eager messages with tag 7 (1, 2 and 3 ints) that rank 0 has not posted,
 *   then MPI_Issend(5 ints, to 0, tag 99): a synchronous send rank 0 does not match yet;
 * - rank 0 probes until the tag-99 envelope has arrived, so both queues are in place;
 * - each rank writes DIR/ready.RANK ("pid rank") and waits for DIR/release;
 * - then rank 0 receives everything, rank 1 completes the Issend and sends the tag-42 message,
 *   both check the data and finalize. Exit 0 only if every check held.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void wait_for(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    for (int i = 0; i < 120000 && access(path, F_OK) != 0; i++) {
        usleep(1000);
    }
}

static void ready(const char *dir, int rank)
{
    char path[4096], tmp[4096];
    snprintf(path, sizeof path, "%s/ready.%d", dir, rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        perror(tmp);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    fprintf(f, "%ld %d\n", (long)getpid(), rank);
    fclose(f);
    rename(tmp, path);
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    MPI_Comm comm;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size != 2) {
        if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 %s DIR\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_name(comm, "mqd-test-comm");

    int big[10], small[3][3], sync[5];
    MPI_Request req;
    if (rank == 0) {
        MPI_Status st;
        MPI_Irecv(big, 10, MPI_INT, 1, 42, comm, &req);
        MPI_Barrier(comm);
        MPI_Probe(1, 99, comm, &st);
        ready(argv[1], rank);
        wait_for(argv[1], "release");
        for (int i = 0; i < 3; i++) {
            int count;
            MPI_Recv(small[i], 3, MPI_INT, 1, 7, comm, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            errors += count != i + 1 || small[i][0] != 700 + i;
        }
        MPI_Recv(sync, 5, MPI_INT, 1, 99, comm, MPI_STATUS_IGNORE);
        errors += sync[4] != 994;
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        errors += big[9] != 429;
    } else {
        for (int i = 0; i < 3; i++) {
            small[i][0] = 700 + i;
            small[i][1] = small[i][2] = 0;
            MPI_Send(small[i], i + 1, MPI_INT, 0, 7, comm);
        }
        for (int i = 0; i < 5; i++) sync[i] = 990 + i;
        MPI_Issend(sync, 5, MPI_INT, 0, 99, comm, &req);
        MPI_Barrier(comm);
        ready(argv[1], rank);
        wait_for(argv[1], "release");
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < 10; i++) big[i] = 420 + i;
        MPI_Send(big, 10, MPI_INT, 0, 42, comm);
    }
    MPI_Comm_free(&comm);
    if (errors) fprintf(stderr, "rank %d: %d data errors\n", rank, errors);
    MPI_Finalize();
    return errors ? 1 : 0;
}
