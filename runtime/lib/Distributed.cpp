//===- Distributed.cpp - the ranks of a mesh program and abi.h's collectives ===//
#include "CollectiveWatchdog.h"
#include "MpiWorld.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/abi.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <sched.h>
#include <cstring>

namespace oflow_rt {

namespace {
struct World {
  bool mpi = false;
  bool threads = false; // MPI_THREAD_MULTIPLE
  int64_t rank = 0, size = 1;
  std::vector<int64_t> mesh, coords;
  std::vector<MPI_Comm> axisComms; // one per mesh axis
};
World gWorld;
} // namespace

namespace {
const char *envOf(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}
} // namespace

namespace detail {
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

MPI_Comm axisComm(int64_t axis) { return gWorld.axisComms.at(axis); }

bool mpiThreadsOk() { return gWorld.mpi && gWorld.threads; }

LocalRank localRank() {
  LocalRank r;
  const char *rank = envOf("OMPI_COMM_WORLD_LOCAL_RANK");
  const char *size = envOf("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (rank && size) {
    r.rank = std::atoll(rank);
    r.size = std::atoll(size);
  } else if (gWorld.mpi) { // another launcher: ask MPI for this node's ranks
    MPI_Comm node;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED,
                              static_cast<int>(gWorld.rank), MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    int nr = 0, ns = 1;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    MPI_Comm_free(&node);
    r.rank = nr;
    r.size = ns;
  }
  return r;
}

int64_t defaultThreads() {
  if (const char *env = envOf("OMP_NUM_THREADS"); env && std::atoll(env) > 0)
    return std::atoll(env);
  cpu_set_t set;
  int64_t cores = 1;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    cores = CPU_COUNT(&set);
  return std::max<int64_t>(1, cores / std::max<int64_t>(1, localRank().size));
}
} // namespace detail

using namespace detail;

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
  // The collective watchdog's thread calls MPI (heartbeats, MPI_Abort);
  // without MPI_THREAD_MULTIPLE it still times collectives, without them.
  int provided = MPI_THREAD_SINGLE;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided),
        "MPI_Init_thread");
  gWorld.mpi = true;
  gWorld.threads = provided == MPI_THREAD_MULTIPLE;
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
  stopWatchdog();
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
  detail::WatchedCollective watched("a gather to rank 0", -1);
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
  detail::WatchedCollective watched("an agreement (all_reduce)", -1);
  check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD),
        "MPI_Allreduce");
  return all == 1;
}

int64_t maxOverRanks(int64_t v) {
  if (!gWorld.mpi)
    return v;
  int64_t r = v;
  detail::WatchedCollective watched("an agreement (all_reduce)", -1);
  check(MPI_Allreduce(&v, &r, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD),
        "MPI_Allreduce");
  return r;
}

uint64_t broadcastFromRoot(uint64_t v) {
  detail::WatchedCollective watched("a broadcast", -1);
  if (gWorld.mpi)
    check(MPI_Bcast(&v, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return v;
}

void barrier() {
  detail::WatchedCollective watched("a barrier", -1);
  if (gWorld.mpi)
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

} // namespace oflow_rt

// abi.h's mesh coordinate (both targets).
extern "C" int64_t oflow_rt_mesh_coord(int64_t mesh_axis) {
  using namespace oflow_rt;
  if (meshCoords().empty())
    return 0;
  detail::axisSize(mesh_axis, "oflow_rt_mesh_coord");
  return meshCoords()[mesh_axis];
}
