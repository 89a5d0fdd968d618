/* The cost of interposition alone, for the overhead bench (benches/benches/prof.rs): a PMPI
 * wrapper library, LD_PRELOADed, whose MPI_Send and MPI_Recv only call their PMPI twins. What
 * any PMPI tool costs before it does anything: the floor under mpit-prof's region mode. */
#include <mpi.h>

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm) {
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
  return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}
