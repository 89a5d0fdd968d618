/* Threads that call MPI at once (MPI_THREAD_MULTIPLE), 2 ranks: on each rank two threads
 * make K (the first argument, default 50) MPI_Sendrecv exchanges with the other rank, thread
 * t with tag t and 8 * (t + 1) bytes, while the main thread, which called MPI_Init_thread,
 * makes 3 MPI_Barrier calls on a duplicate of MPI_COMM_WORLD. Where the MPI provides less
 * than MPI_THREAD_MULTIPLE the threads run one after the other. Prints one line per rank. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int k = 50, rank, peer;

static void *worker(void *arg) {
  int t = (int) (size_t) arg;
  char out[16] = {0}, in[16];
  for (int i = 0; i < k; i++)
    MPI_Sendrecv(out, 8 * (t + 1), MPI_BYTE, peer, t, in, 16, MPI_BYTE, peer, t,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}

int main(int argc, char **argv) {
  int provided;
  if (argc > 1) k = atoi(argv[1]);
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  peer = 1 - rank;
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  pthread_t th[2];
  int multiple = provided == MPI_THREAD_MULTIPLE;
  for (int t = 0; t < 2; t++) {
    pthread_create(&th[t], NULL, worker, (void *) (size_t) t);
    if (!multiple) pthread_join(th[t], NULL);
  }
  for (int i = 0; i < 3; i++) MPI_Barrier(multiple ? dup : MPI_COMM_WORLD);
  if (multiple)
    for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
  MPI_Comm_free(&dup);
  printf("rank %d: %s, %d exchanges per thread\n", rank, multiple ? "multiple" : "serialized", k);
  MPI_Finalize();
  return 0;
}
