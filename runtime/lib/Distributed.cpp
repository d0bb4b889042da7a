//===- Distributed.cpp - the ranks of a mesh program and abi.h's collectives ===//
#include "oflow_rt/Distributed.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/abi.h"

#define OMPI_SKIP_MPICXX 1 // the C API only: no libmpi_cxx
#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace oflow_rt {

namespace {
struct World {
  bool mpi = false;
  int64_t rank = 0, size = 1;
  std::vector<int64_t> mesh, coords;
  std::vector<MPI_Comm> axisComms; // one per mesh axis
};
World gWorld;

// Errors inside a collective come from generated code (C frames, no
// exceptions through them): print and end every rank.
[[noreturn]] void fatal(const std::string &why) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: rank %lld: %s\n", static_cast<long long>(gWorld.rank),
               why.c_str());
  if (gWorld.mpi)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS)
    fatal(std::string(what) + " failed (MPI error " + std::to_string(rc) + ")");
}

const char *envOf(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

MPI_Datatype mpiType(int64_t dtype, int64_t *elemSize) {
  switch (dtype) {
  case OFLOW_DT_F32: *elemSize = 4; return MPI_FLOAT;
  case OFLOW_DT_F64: *elemSize = 8; return MPI_DOUBLE;
  case OFLOW_DT_I32: *elemSize = 4; return MPI_INT32_T;
  case OFLOW_DT_I64: *elemSize = 8; return MPI_INT64_T;
  case OFLOW_DT_I8: *elemSize = 1; return MPI_INT8_T;
  }
  fatal("collective with unknown dtype " + std::to_string(dtype));
}

MPI_Op mpiOp(int64_t op) {
  if (op == OFLOW_RED_SUM)
    return MPI_SUM;
  if (op == OFLOW_RED_MAX)
    return MPI_MAX;
  fatal("collective with unknown reduction " + std::to_string(op));
}

int countOf(int64_t n, const char *what) {
  if (n < 0 || n > INT_MAX)
    fatal(std::string(what) + ": " + std::to_string(n) +
          " elements do not fit one MPI call");
  return static_cast<int>(n);
}

// The size of `axis` (1 for a program without a mesh, so collectives copy).
int64_t axisSize(int64_t axis, const char *what) {
  if (gWorld.mesh.empty())
    return 1;
  if (axis < 0 || axis >= static_cast<int64_t>(gWorld.mesh.size()))
    fatal(std::string(what) + " on mesh axis " + std::to_string(axis) +
          " of a mesh of " + std::to_string(gWorld.mesh.size()) + " axes");
  return gWorld.mesh[axis];
}

bool useMpi(int64_t axis, const char *what) {
  return axisSize(axis, what) > 1 && gWorld.mpi;
}
} // namespace

void startDistributed(const Manifest &m, const std::string &exe, bool noMpi) {
  gWorld.mesh = m.mesh;
  gWorld.coords.assign(m.mesh.size(), 0);
  if (m.meshSize() <= 1 || noMpi)
    return;
  std::string need = "this program was compiled for a mesh of " + m.meshText() +
                     " devices but ";
  std::string hint = ": run it as mpirun -np " + std::to_string(m.meshSize()) +
                     " " + exe;
  // The launcher's environment tells the world size before MPI_Init, which
  // is slow and, run without mpirun, starts a singleton that would wait.
  const char *size = envOf("OMPI_COMM_WORLD_SIZE");
  if (!size && !envOf("PMIX_RANK") && !envOf("PMI_RANK"))
    throw Error(need + "was not started by mpirun" + hint);
  if (size && std::atoll(size) != m.meshSize())
    throw Error(need + "runs on " + size + " ranks" + hint);
  check(MPI_Init(nullptr, nullptr), "MPI_Init");
  gWorld.mpi = true;
  int rank = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  gWorld.rank = rank;
  gWorld.size = n;
  if (n != m.meshSize()) // a launcher without OMPI_COMM_WORLD_SIZE
    throw Error(need + "runs on " + std::to_string(n) + " ranks" + hint);
  gWorld.coords = meshCoordsOf(rank, m.mesh);
  // Axis a's group: the ranks equal in every other coordinate (the color is
  // the rank with coordinate a zeroed); the key orders them by coordinate a.
  int64_t stride = 1;
  gWorld.axisComms.resize(m.mesh.size());
  for (size_t a = m.mesh.size(); a-- > 0;) {
    int color = static_cast<int>(rank - gWorld.coords[a] * stride);
    check(MPI_Comm_split(MPI_COMM_WORLD, color, static_cast<int>(gWorld.coords[a]),
                         &gWorld.axisComms[a]),
          "MPI_Comm_split");
    stride *= m.mesh[a];
  }
}

void finishDistributed() {
  if (!gWorld.mpi)
    return;
  for (MPI_Comm &c : gWorld.axisComms)
    MPI_Comm_free(&c);
  MPI_Finalize();
  gWorld.mpi = false;
}

void abortDistributed(int code) {
  if (gWorld.mpi)
    MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
}

bool isDistributed() { return gWorld.mpi; }
int64_t worldRank() { return gWorld.rank; }
int64_t worldSize() { return gWorld.size; }
const std::vector<int64_t> &meshCoords() { return gWorld.coords; }
const std::vector<int64_t> &meshShape() { return gWorld.mesh; }

Block myBlock(const TensorSlot &s) {
  return localBlock(s.dims, s.sbp, gWorld.mesh, gWorld.coords);
}

void copyMyPiece(const TensorSlot &s, const uint8_t *global, uint8_t *local) {
  if (!s.sharded()) {
    std::memcpy(local, global, s.bytes());
    return;
  }
  copyOverlap(dtypeSize(s.dtype), global, wholeBlock(s.dims), local, myBlock(s));
}

std::vector<uint8_t> gatherToRoot(const TensorSlot &s, const uint8_t *local) {
  int64_t piece = s.localBytes();
  if (!gWorld.mpi || !s.sharded()) // every rank holds the whole tensor
    return isRoot() ? std::vector<uint8_t>(local, local + piece)
                    : std::vector<uint8_t>();
  std::vector<uint8_t> all(isRoot() ? piece * gWorld.size : 0);
  // Every piece has the same size (dims divide evenly): a plain gather.
  check(MPI_Gather(local, countOf(piece, "gather"), MPI_BYTE, all.data(),
                   countOf(piece, "gather"), MPI_BYTE, 0, MPI_COMM_WORLD),
        "MPI_Gather");
  if (!isRoot())
    return {};
  std::vector<uint8_t> global(s.bytes());
  for (int64_t r = 0; r < gWorld.size; ++r)
    copyOverlap(dtypeSize(s.dtype), all.data() + r * piece,
                localBlock(s.dims, s.sbp, gWorld.mesh, meshCoordsOf(r, gWorld.mesh)),
                global.data(), wholeBlock(s.dims));
  return global;
}

bool allRanksOk(bool ok) {
  if (!gWorld.mpi)
    return ok;
  int mine = ok ? 1 : 0, all = 0;
  check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD),
        "MPI_Allreduce");
  return all == 1;
}

int64_t maxOverRanks(int64_t v) {
  if (!gWorld.mpi)
    return v;
  int64_t r = v;
  check(MPI_Allreduce(&v, &r, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD),
        "MPI_Allreduce");
  return r;
}

uint64_t broadcastFromRoot(uint64_t v) {
  if (gWorld.mpi)
    check(MPI_Bcast(&v, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return v;
}

void barrier() {
  if (gWorld.mpi)
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

} // namespace oflow_rt

//===----------------------------------------------------------------------===//
// abi.h's collectives. Without MPI (or on an axis of size 1) each is a copy.
//===----------------------------------------------------------------------===//
using namespace oflow_rt;

extern "C" int64_t oflow_rt_mesh_coord(int64_t mesh_axis) {
  if (gWorld.coords.empty())
    return 0;
  axisSize(mesh_axis, "oflow_rt_mesh_coord");
  return gWorld.coords[mesh_axis];
}

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
  check(MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, countOf(count, "all_reduce"),
                      t, o, gWorld.axisComms[mesh_axis]),
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
  int64_t n = gWorld.mesh[mesh_axis];
  int count = countOf(outer * chunk, "all_gather");
  if (outer == 1) { // [n][chunk] is already out's layout
    check(MPI_Allgather(in, count, t, out, count, t, gWorld.axisComms[mesh_axis]),
          "MPI_Allgather");
    return;
  }
  // MPI gives [member][outer][chunk]; out wants [outer][member][chunk].
  std::vector<uint8_t> all(n * outer * chunk * elem);
  check(MPI_Allgather(in, count, t, all.data(), count, t, gWorld.axisComms[mesh_axis]),
        "MPI_Allgather");
  int64_t row = chunk * elem;
  for (int64_t p = 0; p < n; ++p)
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(static_cast<uint8_t *>(out) + (o * n + p) * row,
                  all.data() + (p * outer + o) * row, row);
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
  int64_t n = gWorld.mesh[mesh_axis];
  int count = countOf(outer * chunk, "reduce_scatter");
  const void *send = in;
  std::vector<uint8_t> packed;
  if (outer != 1) {
    // MPI scatters [member][outer][chunk]; in is [outer][member][chunk].
    packed.resize(n * outer * chunk * elem);
    int64_t row = chunk * elem;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t r = 0; r < outer; ++r)
        std::memcpy(packed.data() + (p * outer + r) * row,
                    static_cast<const uint8_t *>(in) + (r * n + p) * row, row);
    send = packed.data();
  }
  check(MPI_Reduce_scatter_block(send, out, count, t, o, gWorld.axisComms[mesh_axis]),
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
  int64_t n = gWorld.mesh[mesh_axis];
  int64_t d[5] = {d0, d1, d2, d3, d4};
  int s = static_cast<int>(scatter_dim), g = 4 - s;
  if (d[s] % n != 0)
    fatal("all_to_all: dim " + std::to_string(s) + " (" + std::to_string(d[s]) +
          ") does not divide over " + std::to_string(n) + " ranks");
  // Every chunk (what one member sends another) has in's shape with d_s/n
  // at s; dim 4 is never s or g, so rows of d4 elements move whole.
  int64_t c[5] = {d0, d1, d2, d3, d4};
  c[s] /= n;
  int64_t chunkElems = total / n, row = d4 * elem;
  std::vector<uint8_t> send(total * elem), recv(total * elem);
  const uint8_t *src = static_cast<const uint8_t *>(in);
  uint8_t *dst = static_cast<uint8_t *>(out);
  // Index of a row (i0..i3) in a row-major [e0][e1][e2][e3] box.
  auto at = [](const int64_t *e, const int64_t *i) {
    return ((i[0] * e[1] + i[1]) * e[2] + i[2]) * e[3] + i[3];
  };
  auto forEachRow = [&](auto fn) {
    int64_t i[4];
    for (i[0] = 0; i[0] < c[0]; ++i[0])
      for (i[1] = 0; i[1] < c[1]; ++i[1])
        for (i[2] = 0; i[2] < c[2]; ++i[2])
          for (i[3] = 0; i[3] < c[3]; ++i[3])
            fn(i);
  };
  int64_t oShape[4] = {d0, d1, d2, d3};
  oShape[s] /= n;
  oShape[g] *= n;
  for (int64_t q = 0; q < n; ++q)
    forEachRow([&](const int64_t *i) {
      int64_t j[4] = {i[0], i[1], i[2], i[3]};
      j[s] += q * c[s];
      std::memcpy(send.data() + (q * chunkElems / d4 + at(c, i)) * row,
                  src + at(d, j) * row, row);
    });
  int count = countOf(chunkElems, "all_to_all");
  check(MPI_Alltoall(send.data(), count, t, recv.data(), count, t,
                     gWorld.axisComms[mesh_axis]),
        "MPI_Alltoall");
  for (int64_t p = 0; p < n; ++p)
    forEachRow([&](const int64_t *i) {
      int64_t j[4] = {i[0], i[1], i[2], i[3]};
      j[g] += p * d[g];
      std::memcpy(dst + at(oShape, j) * row,
                  recv.data() + (p * chunkElems / d4 + at(c, i)) * row, row);
    });
}
