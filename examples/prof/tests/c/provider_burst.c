/* A burst of MPI_T events larger than the buffer of an MPI that defers their callbacks
 * (MPI-4.1 §16.3.8.5): with the test event provider (examples/event-provider) in LD_PRELOAD,
 * N instances of provider_test (the first argument) are raised into a buffer of CAP (the
 * second), so N - CAP are dropped for each registration, then delivered in one go, then one
 * more raised at once (its delivery reports any drops not yet reported). Prints what the
 * provider counted, one line per rank. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpit_provider.h"

static void *sym(const char *name) {
  void *p = dlsym(RTLD_DEFAULT, name);
  if (p == NULL) {
    fprintf(stderr, "%s not found: is libmpit_event_provider.so in LD_PRELOAD?\n", name);
    exit(2);
  }
  return p;
}

int main(int argc, char **argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 1000, cap = argc > 2 ? atoll(argv[2]) : 100;
  int rank, provided;
  MPI_Init(&argc, &argv);
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int (*set_capacity)(long long) = (int (*)(long long)) sym("mpit_provider_set_buffer_capacity");
  int (*defer_many)(int, int, const void *, size_t, long long) =
      (int (*)(int, int, const void *, size_t, long long)) sym("mpit_provider_defer_many");
  long long (*deliver)(void) = (long long (*)(void)) sym("mpit_provider_deliver_deferred");
  int (*raise)(int, int, const void *) = (int (*)(int, int, const void *)) sym("mpit_provider_raise");
  long long (*dropped)(void) = (long long (*)(void)) sym("mpit_provider_events_dropped");
  long long (*invoked)(void) = (long long (*)(void)) sym("mpit_provider_callbacks_invoked");
  long long (*reports)(void) = (long long (*)(void)) sym("mpit_provider_dropped_reports");
  void (*reset)(void) = (void (*)(void)) sym("mpit_provider_reset_counters");

  struct mpit_provider_test *d = calloc((size_t) n + 1, sizeof *d);
  if (d == NULL || set_capacity(cap) != MPI_SUCCESS) {
    fprintf(stderr, "rank %d: no buffer of %lld\n", rank, cap);
    return 2;
  }
  for (long long i = 0; i <= n; i++) {
    d[i].seq = (uint64_t) i;
    d[i].value = 0.5 * (double) i;
    d[i].id = rank;
    d[i].flag = 1;
  }
  reset();
  int rc = defer_many(MPIT_PROVIDER_EVENT_TEST, MPIT_PROVIDER_SOURCE_MONOTONIC, d, sizeof *d, n);
  long long delivered = deliver();
  int rc2 = raise(MPIT_PROVIDER_EVENT_TEST, MPIT_PROVIDER_SOURCE_MONOTONIC, &d[n]);
  printf("rank %d: raised %lld buffer %lld delivered %lld dropped %lld invoked %lld reports %lld rc %d %d\n",
         rank, n + 1, cap, delivered, dropped(), invoked(), reports(), rc, rc2);
  set_capacity(0);
  free(d);
  MPI_T_finalize();
  MPI_Finalize();
  return 0;
}
