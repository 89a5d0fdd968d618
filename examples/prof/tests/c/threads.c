/* Two threads making MPI calls (mpit-prof's test of the owner thread): a second thread calls
 * MPI_Comm_rank 1000 times while the main thread waits for it (serialized: valid from
 * MPI_THREAD_SERIALIZED up); then the main thread, which called MPI_Init_thread, calls
 * MPI_Comm_size 7 times. Prints the thread level provided. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

static void *worker(void *arg) {
  int r;
  (void)arg;
  for (int i = 0; i < 1000; i++) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return NULL;
}

int main(int argc, char **argv) {
  int provided, size;
  pthread_t t;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    fprintf(stderr, "thread level %d < MPI_THREAD_SERIALIZED\n", provided);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  for (int i = 0; i < 7; i++) MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Finalize();
  return 0;
}
