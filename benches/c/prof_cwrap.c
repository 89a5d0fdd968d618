/* The floor of mpit-prof's call mode, for the overhead bench (benches/benches/prof.rs): a PMPI
 * wrapper library, LD_PRELOADed, that makes the same pvar reads as call mode and nothing else.
 * At MPI_Init it opens one pvar session, allocates a handle for every pvar with no binding and,
 * for every pvar bound to a communicator, one on MPI_COMM_WORLD and one on MPI_COMM_SELF (the
 * predefined communicators mpit-prof binds at MPI_Init), starts the non-continuous ones
 * (dropping those MPI refuses to start), and reads all of them at the entry and the exit of
 * every MPI_Send and MPI_Recv (and MPI_Comm_rank: floor_trio's calls without messages). Holes
 * (indices whose get_info fails) and refused allocations are skipped, and so are the pvars
 * mpit-safe refuses to allocate (Open MPI 4.1's mtl_psm2_*).
 * With PROF_CWRAP_VERBOSE set, rank 0 says on stderr what it holds:
 *   "cwrap: pvars P handles H (unbound U, comm C) started S"   (C: on both communicators)
 */
#include "cwrap_reads.h"

int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) setup();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) setup();
  return rc;
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm) {
  return send_read(buf, count, datatype, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
  return recv_read(buf, count, datatype, source, tag, comm, status);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank) {
  int rc;
  read_all();
  rc = PMPI_Comm_rank(comm, rank);
  read_all();
  return rc;
}

/* Handles and session go before PMPI_Finalize; MPI_T_finalize is left out (Open MPI 4.1 crashes
 * in it after MPI_Finalize, some MPICH releases between MPI_Init and MPI_Finalize). */
int MPI_Finalize(void) {
  int i;
  if (active) {
    for (i = 0; i < nhandles; i++) MPI_T_pvar_handle_free(session, &handles[i]);
    MPI_T_pvar_session_free(&session);
    active = 0;
    nhandles = 0;
  }
  return PMPI_Finalize();
}
