/* Keeps the runtime's bookkeeping out of OpenMPI's collective byte counts,
 * for the e2e traffic test (distributed.py --group traffic).
 *
 * OpenMPI's monitoring PML (--mca pml_monitoring_enable 2) reports at
 * MPI_Finalize, per pair of ranks, the bytes sent inside collectives with
 * the algorithm OpenMPI ran ("I" lines) apart from point-to-point messages
 * ("E" lines), but over all communicators together. The program's
 * collectives run on the mesh axes' communicators; the runtime also runs
 * small collectives on MPI_COMM_WORLD (start-up checks, the per-step
 * signal check, gathers for logs and checkpoints). LD_PRELOADed into the
 * executable, this library turns those into point-to-point messages
 * through the PMPI profiling interface (the same results: gather to rank
 * 0, MPI_Reduce_local there, send back), so the "I" lines hold exactly the
 * mesh axes' traffic. (OpenMPI 4.1 registers no MPI_T variable for the
 * PML's counters, and its coll monitoring counts the nominal buffer times
 * the peers, not what the algorithm sends.)
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

enum { kTag = 28534 };

static int isWorld(MPI_Comm comm) {
  int result;
  PMPI_Comm_compare(comm, MPI_COMM_WORLD, &result);
  return result == MPI_IDENT;
}

static void layout(int *rank, int *size) {
  PMPI_Comm_rank(MPI_COMM_WORLD, rank);
  PMPI_Comm_size(MPI_COMM_WORLD, size);
}

static MPI_Aint extentOf(MPI_Datatype t) {
  MPI_Aint lb, extent;
  PMPI_Type_get_extent(t, &lb, &extent);
  return extent;
}

static int sendToAll(void *buf, int count, MPI_Datatype t, int root) {
  int rank, size;
  layout(&rank, &size);
  if (rank != root)
    return PMPI_Recv(buf, count, t, root, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int r = 0; r < size; ++r)
    if (r != root)
      PMPI_Send(buf, count, t, r, kTag, MPI_COMM_WORLD);
  return MPI_SUCCESS;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
  if (!isWorld(comm))
    return PMPI_Bcast(buf, count, t, root, comm);
  return sendToAll(buf, count, t, root);
}

int MPI_Allreduce(const void *in, void *out, int count, MPI_Datatype t, MPI_Op op,
                  MPI_Comm comm) {
  if (!isWorld(comm))
    return PMPI_Allreduce(in, out, count, t, op, comm);
  int rank, size;
  layout(&rank, &size);
  size_t bytes = (size_t)count * (size_t)extentOf(t);
  if (in != MPI_IN_PLACE)
    memcpy(out, in, bytes);
  if (rank != 0) {
    PMPI_Send(out, count, t, 0, kTag, MPI_COMM_WORLD);
  } else {
    void *piece = malloc(bytes ? bytes : 1);
    // Ranks in order, as a linear reduction would (the ops used are exact).
    for (int r = 1; r < size; ++r) {
      PMPI_Recv(piece, count, t, r, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      PMPI_Reduce_local(piece, out, count, t, op);
    }
    free(piece);
  }
  return sendToAll(out, count, t, 0);
}

int MPI_Gather(const void *in, int n, MPI_Datatype t, void *out, int m, MPI_Datatype u,
               int root, MPI_Comm comm) {
  if (!isWorld(comm))
    return PMPI_Gather(in, n, t, out, m, u, root, comm);
  int rank, size;
  layout(&rank, &size);
  if (rank != root)
    return PMPI_Send(in, n, t, root, kTag, MPI_COMM_WORLD);
  char *base = out;
  MPI_Aint stride = (MPI_Aint)m * extentOf(u);
  for (int r = 0; r < size; ++r) {
    if (r == root)
      PMPI_Sendrecv(in, n, t, root, kTag, base + r * stride, m, u, root, kTag,
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
      PMPI_Recv(base + r * stride, m, u, r, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return MPI_SUCCESS;
}

int MPI_Barrier(MPI_Comm comm) {
  if (!isWorld(comm))
    return PMPI_Barrier(comm);
  int token = 0;
  return MPI_Allreduce(MPI_IN_PLACE, &token, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
}
