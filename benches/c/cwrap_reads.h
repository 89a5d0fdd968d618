/* The pvar reads of the C floor of mpit-prof's call mode (benches/benches/prof.rs), shared by
 * the preloaded wrapper (prof_cwrap.c) and the in-program floor of floor_trio.c. `setup` (after
 * MPI_Init) opens one pvar session, allocates a handle for every pvar with no binding and, for
 * every pvar bound to a communicator, one on MPI_COMM_WORLD and one on MPI_COMM_SELF (the
 * predefined communicators mpit-prof binds at MPI_Init), starts the non-continuous ones
 * (dropping those MPI refuses to start); `read_all` reads all of them. Holes (indices whose
 * get_info fails) and refused allocations are skipped, and so are the pvars mpit-safe refuses
 * to allocate (Open MPI 4.1's mtl_psm2_*). With PROF_CWRAP_VERBOSE set, rank 0 says on stderr
 * what it holds: "cwrap: pvars P handles H (unbound U, comm C) started S". */
#ifndef CWRAP_READS_H
#define CWRAP_READS_H
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static MPI_T_pvar_session session;
static MPI_T_pvar_handle *handles;
static void **bufs;
static int nhandles;
static int active;

static void read_all(void) {
  int i;
  for (i = 0; i < nhandles; i++) MPI_T_pvar_read(session, handles[i], bufs[i]);
}

static void setup(void) {
  int provided, n, i, unbound = 0, comm = 0, started = 0, rank;
  MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return;
  if (MPI_T_pvar_get_num(&n) != MPI_SUCCESS) return;
  if (MPI_T_pvar_session_create(&session) != MPI_SUCCESS) return;
  handles = calloc(2 * n + 1, sizeof *handles);
  bufs = calloc(2 * n + 1, sizeof *bufs);
  for (i = 0; i < n; i++) {
    char name[256], desc[1024];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity, klass, bind, readonly,
        continuous, atomic, count = 0, size = 0;
    MPI_Datatype datatype;
    MPI_T_enum enumtype;
    MPI_T_pvar_handle h;
    int c, ncomms;
    if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &klass, &datatype, &enumtype, desc,
                            &desc_len, &bind, &readonly, &continuous, &atomic) != MPI_SUCCESS)
      continue;
    /* What mpit-safe refuses too (quirk open-mpi-psm2-pvar-handle-alloc): Open MPI 4.1
     * segfaults allocating a handle for the PSM2 MTL's pvars when that MTL is not in use. */
    if (strncmp(name, "mtl_psm2_", 9) == 0) continue;
    if (bind == MPI_T_BIND_NO_OBJECT) ncomms = 1;
    else if (bind == MPI_T_BIND_MPI_COMM) ncomms = 2;
    else continue;
    for (c = 0; c < ncomms; c++) {
      void *obj = bind == MPI_T_BIND_NO_OBJECT ? NULL : &comms[c];
      if (MPI_T_pvar_handle_alloc(session, i, obj, &h, &count) != MPI_SUCCESS) continue;
      if (!continuous && MPI_T_pvar_start(session, h) != MPI_SUCCESS) {
        MPI_T_pvar_handle_free(session, &h);
        continue;
      }
      if (!continuous) started++;
      if (obj) comm++; else unbound++;
      PMPI_Type_size(datatype, &size);
      handles[nhandles] = h;
      bufs[nhandles] = calloc(count > 0 ? count : 1, size > 8 ? size : 8);
      nhandles++;
    }
  }
  active = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && getenv("PROF_CWRAP_VERBOSE"))
    fprintf(stderr, "cwrap: pvars %d handles %d (unbound %d, comm %d) started %d\n", n,
            nhandles, unbound, comm, started);
}

/* MPI_Send and MPI_Recv with every read before and after: the preloaded wrapper's bodies and
 * the in-program floor's calls. */
static int send_read(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm) {
  int rc;
  read_all();
  rc = PMPI_Send(buf, count, datatype, dest, tag, comm);
  read_all();
  return rc;
}

static int recv_read(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Status *status) {
  int rc;
  read_all();
  rc = PMPI_Recv(buf, count, datatype, source, tag, comm, status);
  read_all();
  return rc;
}

#endif
