//===- CollectivesMpi.cpp - abi.h's collectives over MPI (CPU target) -----===//
//
// liboflow_runtime.a only: host pointers, one MPI communicator per mesh
// axis (Distributed.cpp). The CUDA archive has cuda/CudaCollectives.cpp instead.
//
//===----------------------------------------------------------------------===//
#include "CommLayout.h"
#include "MpiWorld.h"
#include "oflow_rt/abi.h"

#include <cstring>
#include <vector>

//===----------------------------------------------------------------------===//
// Without MPI (or on an axis of size 1) each is a copy.
//===----------------------------------------------------------------------===//
using namespace oflow_rt;
using namespace oflow_rt::detail;

extern "C" void oflow_rt_all_reduce(int64_t dtype, int64_t op, const void *in,
                                    void *out, int64_t count,
                                    int64_t mesh_axis) {
  int64_t elem = 0;
  MPI_Datatype t = mpiType(dtype, &elem);
  MPI_Op o = mpiOp(op);
  if (!useMpi(mesh_axis, "all_reduce")) {
    if (in != out)
      std::memmove(out, in, count * elem);
    return;
  }
  WatchedCollective watched("all_reduce", mesh_axis);
  check(MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, countOf(count, "all_reduce"),
                      t, o, axisComm(mesh_axis)),
        "MPI_Allreduce");
}

extern "C" void oflow_rt_all_gather(int64_t dtype, const void *in, void *out,
                                    int64_t outer, int64_t chunk,
                                    int64_t mesh_axis) {
  int64_t elem = 0;
  MPI_Datatype t = mpiType(dtype, &elem);
  if (!useMpi(mesh_axis, "all_gather")) {
    std::memmove(out, in, outer * chunk * elem);
    return;
  }
  WatchedCollective watched("all_gather", mesh_axis);
  int64_t n = meshShape()[mesh_axis];
  int count = countOf(outer * chunk, "all_gather");
  if (outer == 1) { // [n][chunk] is already out's layout
    check(MPI_Allgather(in, count, t, out, count, t, axisComm(mesh_axis)),
          "MPI_Allgather");
    return;
  }
  // MPI gives [member][outer][chunk]; out wants [outer][member][chunk].
  std::vector<uint8_t> all(n * outer * chunk * elem);
  check(MPI_Allgather(in, count, t, all.data(), count, t, axisComm(mesh_axis)),
        "MPI_Allgather");
  applyCopies(allGatherUnpack(n, outer, chunk * elem), all.data(),
              static_cast<uint8_t *>(out));
}

extern "C" void oflow_rt_reduce_scatter(int64_t dtype, int64_t op,
                                        const void *in, void *out,
                                        int64_t outer, int64_t chunk,
                                        int64_t mesh_axis) {
  int64_t elem = 0;
  MPI_Datatype t = mpiType(dtype, &elem);
  MPI_Op o = mpiOp(op);
  if (!useMpi(mesh_axis, "reduce_scatter")) {
    std::memmove(out, in, outer * chunk * elem);
    return;
  }
  int64_t n = meshShape()[mesh_axis];
  int count = countOf(outer * chunk, "reduce_scatter");
  const void *send = in;
  std::vector<uint8_t> packed;
  if (outer != 1) {
    // MPI scatters [member][outer][chunk]; in is [outer][member][chunk].
    packed.resize(n * outer * chunk * elem);
    applyCopies(reduceScatterPack(n, outer, chunk * elem),
                static_cast<const uint8_t *>(in), packed.data());
    send = packed.data();
  }
  WatchedCollective watched("reduce_scatter", mesh_axis);
  check(MPI_Reduce_scatter_block(send, out, count, t, o, axisComm(mesh_axis)),
        "MPI_Reduce_scatter_block");
}

extern "C" void oflow_rt_all_to_all(int64_t dtype, const void *in, void *out,
                                    int64_t d0, int64_t d1, int64_t d2,
                                    int64_t d3, int64_t d4,
                                    int64_t scatter_dim, int64_t mesh_axis) {
  int64_t elem = 0;
  MPI_Datatype t = mpiType(dtype, &elem);
  if (scatter_dim != 1 && scatter_dim != 3)
    fatal("all_to_all with scatter dim " + std::to_string(scatter_dim) +
          " (want 1 or 3)");
  int64_t total = d0 * d1 * d2 * d3 * d4;
  if (total == 0)
    return;
  if (!useMpi(mesh_axis, "all_to_all")) {
    std::memmove(out, in, total * elem);
    return;
  }
  int64_t n = meshShape()[mesh_axis];
  int64_t d[5] = {d0, d1, d2, d3, d4};
  int s = static_cast<int>(scatter_dim);
  if (d[s] % n != 0)
    fatal("all_to_all: dim " + std::to_string(s) + " (" + std::to_string(d[s]) +
          ") does not divide over " + std::to_string(n) + " ranks");
  // MPI exchanges [member][chunk] blocks; abi.h's layouts differ (CommLayout).
  std::vector<uint8_t> send(total * elem), recv(total * elem);
  applyCopies(allToAllPack(d, s, n, elem), static_cast<const uint8_t *>(in),
              send.data());
  int count = countOf(total / n, "all_to_all");
  WatchedCollective watched("all_to_all", mesh_axis);
  check(MPI_Alltoall(send.data(), count, t, recv.data(), count, t,
                     axisComm(mesh_axis)),
        "MPI_Alltoall");
  applyCopies(allToAllUnpack(d, s, n, elem), recv.data(),
              static_cast<uint8_t *>(out));
}
