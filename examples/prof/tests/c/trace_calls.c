/* The calls a trace records with their arguments, on 4 ranks: non-blocking messages
 * completed by MPI_Waitall (statuses ignored), MPI_Waitany, MPI_Test and MPI_Wait, a
 * MPI_Sendrecv, a send to MPI_PROC_NULL (no message), a message on a communicator split by
 * parity, and the collectives MPI_Bcast (root 1), MPI_Reduce (root 2), MPI_Allreduce and
 * MPI_Barrier, those of two datatypes (MPI_Gather, _Scatter, _Allgather, _Alltoall and their
 * -v forms, some sides MPI_IN_PLACE), and matched probes: MPI_Mprobe + MPI_Mrecv (tag 16, 60 bytes) and
 * MPI_Improbe + MPI_Imrecv + MPI_Wait (tag 17, 70 bytes) around the ring. Rank r's messages to
 * its successor carry tag 10 + k and 100 * (r + 1) * (k + 1) bytes in round k. Prints one line
 * per rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int to = (rank + 1) % size, from = (rank + size - 1) % size;
  char *out = calloc(4096, 1), *in = calloc(4096, 1);
  MPI_Request r[2];
  /* Round 0: Waitall, statuses ignored. */
  MPI_Irecv(in, 4096, MPI_BYTE, from, 10, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(out, 100 * (rank + 1), MPI_BYTE, to, 10, MPI_COMM_WORLD, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  /* Round 1: Waitany twice, any source. */
  MPI_Irecv(in, 4096, MPI_BYTE, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(out, 200 * (rank + 1), MPI_BYTE, to, 11, MPI_COMM_WORLD, &r[1]);
  for (int k = 0; k < 2; k++) {
    int i;
    MPI_Waitany(2, r, &i, MPI_STATUS_IGNORE);
  }
  /* Round 2: MPI_Test until done, then MPI_Wait. */
  MPI_Irecv(in, 4096, MPI_BYTE, from, 12, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(out, 300 * (rank + 1), MPI_BYTE, to, 12, MPI_COMM_WORLD, &r[1]);
  for (int flag = 0; !flag;) MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
  MPI_Status st;
  MPI_Wait(&r[1], &st);
  /* A send-receive around the ring, tag 13, 400 * (rank + 1) bytes. */
  MPI_Sendrecv(out, 400 * (rank + 1), MPI_BYTE, to, 13, in, 4096, MPI_BYTE, from, 13,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  /* Nothing to record. */
  MPI_Send(out, 10, MPI_BYTE, MPI_PROC_NULL, 14, MPI_COMM_WORLD);
  /* Even ranks and odd ranks: rank 0 of each half sends 50 bytes to its rank 1, tag 15. */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  int hr;
  MPI_Comm_rank(half, &hr);
  if (hr == 0) MPI_Send(out, 50, MPI_BYTE, 1, 15, half);
  if (hr == 1) MPI_Recv(in, 4096, MPI_BYTE, 0, 15, half, MPI_STATUS_IGNORE);
  MPI_Comm_free(&half);
  /* Matched probes: the receive has no tag or source of its own, only the message. */
  MPI_Message m;
  MPI_Send(out, 60, MPI_BYTE, to, 16, MPI_COMM_WORLD);
  MPI_Mprobe(from, 16, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
  MPI_Mrecv(in, 4096, MPI_BYTE, &m, MPI_STATUS_IGNORE);
  MPI_Send(out, 70, MPI_BYTE, to, 17, MPI_COMM_WORLD);
  for (int flag = 0; !flag;) MPI_Improbe(from, 17, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE);
  MPI_Imrecv(in, 4096, MPI_BYTE, &m, &r[0]);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  int ints[8] = {0};
  double d[4] = {1, 2, 3, 4}, sum[4];
  MPI_Bcast(ints, 8, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Reduce(d, sum, 4, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD);
  MPI_Allreduce(d, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  /* Collectives of two datatypes, blocks of 2 ints (8 bytes), some sides in place. */
  int blk[2] = {rank, rank}, *all = calloc(2 * (size_t) size, sizeof(int));
  int *all2 = calloc(2 * (size_t) size, sizeof(int));
  int *counts = calloc((size_t) size, sizeof(int)), *displs = calloc((size_t) size, sizeof(int));
  int *v = calloc((size_t) size * (size_t) size, sizeof(int));
  for (int i = 0, at = 0; i < size; at += i + 1, i++) counts[i] = i + 1, displs[i] = at;
  MPI_Gather(blk, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Scatter(all, 2, MPI_INT, rank == 3 ? MPI_IN_PLACE : (void *) blk, 2, MPI_INT, 3,
              MPI_COMM_WORLD);
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 2, MPI_INT, MPI_COMM_WORLD);
  MPI_Alltoall(all, 2, MPI_INT, all2, 2, MPI_INT, MPI_COMM_WORLD);
  /* Rank r's block r + 1 ints; rank 1 the root, its block in place. */
  MPI_Gatherv(rank == 1 ? MPI_IN_PLACE : (void *) v, rank + 1, MPI_INT, v, counts, displs,
              MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Scatterv(v, counts, displs, MPI_INT, all2, rank + 1, MPI_INT, 2, MPI_COMM_WORLD);
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, counts, displs, MPI_INT,
                 MPI_COMM_WORLD);
  /* One int to and from every rank. */
  int *ones = calloc((size_t) size, sizeof(int));
  for (int i = 0; i < size; i++) ones[i] = 1, displs[i] = i;
  MPI_Alltoallv(all, ones, displs, MPI_INT, all2, ones, displs, MPI_INT, MPI_COMM_WORLD);
  free(all), free(all2), free(counts), free(displs), free(v), free(ones);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d of %d: done (sum %g)\n", rank, size, sum[0]);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
