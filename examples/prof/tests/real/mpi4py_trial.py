"""An mpi4py program for mpit-prof's real-program trial (2 ranks): buffer-based point-to-point,
collectives and pickled objects, K rounds each; rank 0 prints deterministic results."""
from array import array

from mpi4py import MPI

K = 40
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
peer = 1 - rank
buf = array("d", [float(rank)] * 256)
recv = array("d", [0.0] * 256)
total = array("d", [0.0])
checks = 0
for i in range(K):
    # Buffer point-to-point: one MPI_Send and one MPI_Recv per rank and round.
    if rank == 0:
        comm.Send([buf, MPI.DOUBLE], dest=peer, tag=i)
        comm.Recv([recv, MPI.DOUBLE], source=peer, tag=i)
    else:
        comm.Recv([recv, MPI.DOUBLE], source=peer, tag=i)
        comm.Send([buf, MPI.DOUBLE], dest=peer, tag=i)
    checks += int(recv[0] == peer)
    # Collectives: one MPI_Allreduce and one MPI_Bcast per rank and round.
    comm.Allreduce([array("d", [float(i + rank)]), MPI.DOUBLE], [total, MPI.DOUBLE], op=MPI.SUM)
    checks += int(total[0] == 2 * i + 1)
    word = array("i", [i * 7 if rank == 0 else -1])
    comm.Bcast([word, MPI.INT], root=0)
    checks += int(word[0] == i * 7)
    # Pickled objects.
    if rank == 0:
        comm.send({"round": i, "items": list(range(i))}, dest=peer, tag=1000 + i)
        checks += int(comm.recv(source=peer, tag=2000 + i) == i * (i - 1) // 2)
    else:
        msg = comm.recv(source=peer, tag=1000 + i)
        comm.send(sum(msg["items"]), dest=peer, tag=2000 + i)
        checks += 1
everyone = comm.gather(checks, root=0)
if rank == 0:
    print(f"ranks {size}")
    print(f"rounds {K}")
    print(f"checks per rank {everyone} of {4 * K}")
    print("ok" if everyone == [4 * K] * size else "FAILED")
