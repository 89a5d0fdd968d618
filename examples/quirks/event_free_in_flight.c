/* Shows, without Rust, the behaviour behind mpit-safe's quirk guard
 * `mpich-event-registration-race` (mpit_safe::quirks::MPICH_EVENT_REGISTRATION_RACE).
 *
 * MPI-4.1 §16.3.8.4: MPI calls a registration's free callback once no callback of it can be
 * invoked any more. MPICH 4.0.2 built with --enable-mpit-events (src/mpi_t/events_impl.c)
 * unlinks the registration, calls the free callback and frees the registration inside
 * MPI_T_event_handle_free, while MPIR_T_event_instance on another thread may be running one of
 * its callbacks (it walks the list without a lock and reads the registration again after the
 * callback returns).
 *
 * Two ranks at MPI_THREAD_MULTIPLE. Rank 0 registers a callback on `unexp_message_enqueued`;
 * its second thread receives tag 0 and then tag 1 from rank 1, which sends tag 1 first, so the
 * tag 1 message waits in the unexpected queue and MPICH raises the event on that thread. The
 * callback then waits (at most 5 s) until the main thread's MPI_T_event_handle_free has
 * returned. The free callback records whether the callback was running when it was called.
 * Rank 0 prints
 *   rank 0: free callback during an invocation: yes|no
 * (yes: the standard's promise is broken; the callback's user_data is gone under it), or
 *   rank 0: no unexp_message_enqueued event type
 * on an MPI without the event.
 *
 * Build and run (scripts/with-mpi mpich-ev sets MPICC and MPIEXEC):
 *   $MPICC -O1 -g -pthread -o event_free_in_flight examples/quirks/event_free_in_flight.c
 *   $MPIEXEC -n 2 ./event_free_in_flight
 */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static atomic_int in_callback;      /* the first invocation has started */
static atomic_int callback_done;    /* ... and returned */
static atomic_int free_returned;    /* MPI_T_event_handle_free has returned */
static atomic_int free_cb_during = -1;
static atomic_int invocations;

static void pause_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void callback(MPI_T_event_instance ev, MPI_T_event_registration reg,
                     MPI_T_cb_safety safety, void *user_data) {
  (void)ev; (void)reg; (void)safety; (void)user_data;
  atomic_fetch_add(&invocations, 1);
  int expected = 0;
  if (!atomic_compare_exchange_strong(&in_callback, &expected, 1)) return;
  for (int i = 0; i < 5000 && !atomic_load(&free_returned); i++) pause_ms(1);
  atomic_store(&callback_done, 1);
}

static void free_callback(MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user_data) {
  (void)reg; (void)safety; (void)user_data;
  atomic_store(&free_cb_during, atomic_load(&in_callback) && !atomic_load(&callback_done));
}

static void *receiver(void *arg) {
  (void)arg;
  int v;
  MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}

int main(int argc, char **argv) {
  int provided, rank, tprovided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_T_init_thread(MPI_THREAD_MULTIPLE, &tprovided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided != MPI_THREAD_MULTIPLE) {
    if (rank == 0) printf("rank 0: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Finalize();
    return 1;
  }
  int index;
  int found = MPI_T_event_get_index("unexp_message_enqueued", &index) == MPI_SUCCESS;
  if (!found) {
    if (rank == 0) printf("rank 0: no unexp_message_enqueued event type\n");
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    int v = 1;
    pause_ms(200); /* rank 0's receive of tag 0 is posted */
    MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else {
    MPI_T_event_registration reg;
    MPI_T_event_handle_alloc(index, NULL, MPI_INFO_NULL, &reg);
    MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, MPI_INFO_NULL, NULL,
                                  callback);
    pthread_t t;
    pthread_create(&t, NULL, receiver, NULL);
    for (int i = 0; i < 10000 && !atomic_load(&in_callback); i++) pause_ms(1);
    if (!atomic_load(&in_callback)) {
      printf("rank 0: no event within 10 s\n");
      fflush(stdout);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_T_event_handle_free(reg, NULL, free_callback);
    int during = atomic_load(&free_cb_during);
    printf("rank 0: free callback during an invocation: %s\n",
           during < 0 ? "not called" : during ? "yes" : "no");
    fflush(stdout);
    atomic_store(&free_returned, 1);
    pthread_join(t, NULL);
    printf("rank 0: %d invocations; the job went on\n", atomic_load(&invocations));
  }
  MPI_T_finalize();
  MPI_Finalize();
  return 0;
}
