//===- CudaDevice.cpp - the CUDA target's Device (liboflow_runtime_cuda.a) ===//
//
// Start-up: pick the GPU of this rank's local rank and check what can be
// checked (a driver, enough GPUs on the node), one cudaMalloc each for
// state, io and arena, the compute stream, cuBLASLt, one NCCL communicator
// per mesh axis (the ncclUniqueId broadcast over that axis's MPI group).
// A call: state host -> device when the host changed it, the io inputs and
// scalars host -> device, the entry (which enqueues its kernels, GEMMs and
// collectives on the compute stream), the io outputs, grads and scalars
// device -> host, one stream synchronize. The state comes back only when the
// host reads it (checkpoint, export).
//
//===----------------------------------------------------------------------===//
#include "../GraphReplay.h"
#include "../MpiWorld.h"
#include "CudaContext.h"
#include "NcclWatch.h"
#include "Profile.h"
#include "oflow_rt/Device.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/Program.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>

namespace oflow_rt {
namespace cuda {

namespace {
Context *gContext = nullptr;
} // namespace

Context *contextIfStarted() { return gContext; }
void setContext(Context *c) { gContext = c; }

Context &context(const char *caller) {
  if (!gContext)
    fatal(std::string(caller) +
          " was called while the CUDA runtime is not running (outside an "
          "entry point of the program)");
  return *gContext;
}

std::string versionText(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string Context::gpuText() const {
  return "GPU " + std::to_string(device) + " (" + props.name + ", sm_" +
         std::to_string(props.major) + std::to_string(props.minor) + ")";
}

void fatal(const std::string &message) {
  std::fflush(stdout);
  std::string rank = isDistributed() && !isRoot()
                         ? "rank " + std::to_string(worldRank()) + ": "
                         : "";
  std::fprintf(stderr, "%s: error: %s%s\n", program_invocation_short_name,
               rank.c_str(), message.c_str());
  std::fflush(stderr);
  abortDistributed(1);
  std::exit(1);
}

std::string errorText(cudaError_t e, const char *call) {
  return std::string(call) + " failed: " + cudaGetErrorName(e) + ": " +
         cudaGetErrorString(e);
}

void check(cudaError_t e, const char *call) {
  if (e != cudaSuccess)
    fatal(errorText(e, call));
}

void check(cublasStatus_t s, const char *call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fatal(std::string(call) + " failed: " + cublasLtGetStatusName(s) + ": " +
          cublasLtGetStatusString(s));
}

void check(ncclResult_t r, const char *call) {
  if (r != ncclSuccess)
    fatal(std::string(call) + " failed: " + ncclGetErrorString(r) +
          (r == ncclSystemError || r == ncclInternalError ||
                   r == ncclRemoteError
               ? std::string(" (") + ncclGetLastError(nullptr) + ")"
               : std::string()));
}

void require(cudaError_t e, const char *call) {
  if (e != cudaSuccess)
    throw Error(errorText(e, call));
}

void *allocate(size_t bytes, const char *what) {
  // Never zero bytes: generated code may take the address of an empty buffer.
  size_t rounded = (bytes + 255) / 256 * 256;
  if (rounded == 0)
    rounded = 256;
  void *p = nullptr;
  cudaError_t e = cudaMalloc(&p, rounded);
  if (e != cudaSuccess) {
    cudaGetLastError();
    Context *c = gContext;
    throw Error("out of GPU memory allocating " + std::string(what) + " (" +
                std::to_string(bytes) + " bytes" +
                (c ? " on " + c->gpuText() + ", " +
                         std::to_string(c->liveBytes) + " bytes already held"
                   : std::string()) +
                "): " + cudaGetErrorString(e));
  }
  if (Context *c = gContext) {
    c->liveBytes += static_cast<int64_t>(rounded);
    c->peakBytes = std::max(c->peakBytes, c->liveBytes);
  }
  return p;
}

void release(void *p, size_t bytes) {
  if (!p)
    return;
  cudaFree(p);
  if (Context *c = gContext) {
    size_t rounded = (bytes + 255) / 256 * 256;
    c->liveBytes -= static_cast<int64_t>(rounded ? rounded : 256);
  }
}

void *Context::scratchOf(size_t bytes) {
  if (bytes <= scratchBytes)
    return scratch;
  // The old scratch may still be in use by work on the stream.
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  release(scratch, scratchBytes);
  scratch = nullptr;
  scratchBytes = 0;
  try {
    scratch = allocate(bytes, "collective scratch");
  } catch (const Error &e) {
    fatal(e.what());
  }
  scratchBytes = bytes;
  return scratch;
}

} // namespace cuda

namespace {
using namespace cuda;

const char *kTargetHint = "; this executable was built with --target cuda "
                          "(build with --target cpu to run on the CPU)";

class CudaDevice final : public Device {
public:
  ~CudaDevice() override;
  const char *kind() const override { return "cuda"; }
  void start(const Manifest &m, AlignedBuffer &s, AlignedBuffer &i) override;
  void setOptions(const DeviceOptions &o) override {
    ctx.allowTf32 = o.allowTf32;
    useGraphs = o.cudaGraphs;
  }
  void hostStateChanged() override { hostStateNewer = true; }
  void syncStateToHost() override;
  void call(EntryFn fn, const std::string &entry) override;
  void poisonArena() override;
  std::string jsonFields() override;

private:
  void selectGpu();
  void startNccl(const Manifest &m);
  void copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
            const char *what);

  Context ctx;
  // --collective-timeout's view of the NCCL collectives (NcclWatch.h).
  std::unique_ptr<NcclMarks> ncclMarks;
  std::unique_ptr<detail::StreamCollectives> ncclCollectives;
  const Manifest *manifest = nullptr;
  AlignedBuffer *hostState = nullptr, *hostIo = nullptr;
  oflow_buffer state{}, io{}, arena{};
  bool hostStateNewer = true, deviceStateNewer = false;
  bool pinnedState = false, pinnedIo = false;
  std::map<std::string, IoTransfers> transfers;
  bool useGraphs = true;
  struct Graph {
    std::unique_ptr<EntryGraph> calls;
    bool noted = false; // the note saying why it stays eager was printed
  };
  std::map<std::string, Graph> graphs;
};

void CudaDevice::selectGpu() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    int driver = 0;
    if (e == cudaErrorInsufficientDriver &&
        cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
      throw Error("the NVIDIA driver supports CUDA " + versionText(driver) +
                  ", but this executable needs CUDA " +
                  versionText(CUDART_VERSION) +
                  " or newer (it was built with CUDA " +
                  versionText(CUDART_VERSION) + "): update the NVIDIA driver");
    throw Error(std::string("no CUDA device: ") + cudaGetErrorString(e) +
                kTargetHint);
  }
  if (count == 0)
    throw Error(std::string("no CUDA device: none is visible") +
                (std::getenv("CUDA_VISIBLE_DEVICES")
                     ? std::string(" (CUDA_VISIBLE_DEVICES=") +
                           std::getenv("CUDA_VISIBLE_DEVICES") + ")"
                     : std::string()) +
                kTargetHint);
  detail::LocalRank local = detail::localRank();
  if (local.size > count)
    throw Error("this node runs " + std::to_string(local.size) +
                " ranks but has " + std::to_string(count) + " CUDA device" +
                (count == 1 ? "" : "s") +
                " (each rank uses the GPU of its local rank, one GPU per "
                "rank): start at most " + std::to_string(count) +
                " ranks per node");
  ctx.device = static_cast<int>(local.rank);
  require(cudaSetDevice(ctx.device), "cudaSetDevice");
  require(cudaGetDeviceProperties(&ctx.props, ctx.device),
          "cudaGetDeviceProperties");
  require(cudaDriverGetVersion(&ctx.driverVersion), "cudaDriverGetVersion");
  // Creates the context now, so that its failures are reported here.
  require(cudaFree(nullptr), "cudaFree (context creation)");
  if (isRoot()) {
    char mem[32];
    std::snprintf(mem, sizeof mem, "%.1f GiB",
                  static_cast<double>(ctx.props.totalGlobalMem) / (1ull << 30));
    std::fprintf(stderr, "using %s, %s, %d SMs; driver CUDA %s, runtime CUDA %s%s\n",
                 ctx.gpuText().c_str(), mem, ctx.props.multiProcessorCount,
                 versionText(ctx.driverVersion).c_str(),
                 versionText(CUDART_VERSION).c_str(),
                 isDistributed() ? "; every rank uses the GPU of its local rank"
                                 : "");
  }
}

void CudaDevice::startNccl(const Manifest &m) {
  ctx.axisComms.assign(m.mesh.size(), nullptr);
  if (!isDistributed())
    return;
  for (size_t a = 0; a < m.mesh.size(); ++a) {
    if (m.mesh[a] <= 1)
      continue;
    int coord = static_cast<int>(meshCoords()[a]);
    ncclUniqueId id{};
    if (coord == 0) {
      ncclResult_t r = ncclGetUniqueId(&id);
      if (r != ncclSuccess)
        throw Error(std::string("ncclGetUniqueId failed: ") + ncclGetErrorString(r));
    }
    // Rank 0 of the axis's MPI group is its member with coordinate 0.
    detail::check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, detail::axisComm(a)),
                  "MPI_Bcast (ncclUniqueId)");
    ncclResult_t r = ncclCommInitRank(&ctx.axisComms[a], static_cast<int>(m.mesh[a]),
                                      id, coord);
    if (r != ncclSuccess)
      throw Error("ncclCommInitRank (mesh axis " + std::to_string(a) +
                  ") failed: " + ncclGetErrorString(r) + " (" +
                  ncclGetLastError(nullptr) + ")");
  }
  ncclMarks = std::make_unique<NcclMarks>(ctx.stream, ctx.axisComms);
  ncclCollectives = std::make_unique<detail::StreamCollectives>(*ncclMarks);
  ctx.collectives = ncclCollectives.get();
  detail::watchStream(ctx.collectives);
}

void CudaDevice::start(const Manifest &m, AlignedBuffer &s, AlignedBuffer &i) {
  manifest = &m;
  hostState = &s;
  hostIo = &i;
  selectGpu();
  setContext(&ctx);
  require(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
  auto buffer = [&](int64_t bytes, const char *what) {
    uint8_t *p = static_cast<uint8_t *>(allocate(bytes, what));
    require(cudaMemsetAsync(p, 0, bytes > 0 ? bytes : 1, ctx.stream),
            "cudaMemsetAsync");
    return oflow_buffer{p, p, 0, bytes, 1};
  };
  state = buffer(m.stateBytes, "the state buffer");
  io = buffer(m.ioBytes, "the io buffer");
  arena = buffer(m.arenaBytes, "the arena");
  cublasStatus_t st = cublasLtCreate(&ctx.lt);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cublasLtCreate failed: ") +
                cublasLtGetStatusString(st));
  ctx.workspaceBytes = 32u << 20;
  ctx.workspace = allocate(ctx.workspaceBytes, "the cuBLASLt workspace");
  // Pinned host mirrors make the per-call copies asynchronous and fast;
  // pageable memory works too (when the pinning fails).
  pinnedState = cudaHostRegister(s.data(), s.size() > 0 ? s.size() : 1,
                                 cudaHostRegisterDefault) == cudaSuccess;
  pinnedIo = cudaHostRegister(i.data(), i.size() > 0 ? i.size() : 1,
                              cudaHostRegisterDefault) == cudaSuccess;
  cudaGetLastError();
  startNccl(m);
  require(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
}

CudaDevice::~CudaDevice() {
  if (contextIfStarted() != &ctx)
    return; // never started (--help) or failed before the context existed
  if (ctx.collectives) { // the watchdog lets go before the events and comms go
    detail::watchStream(nullptr);
    ctx.collectives = nullptr;
    ncclCollectives.reset();
    ncclMarks.reset();
  }
  if (std::uncaught_exceptions() > 0) {
    // An error is on its way to main(): no waiting on peers or the GPU.
    for (ncclComm_t c : ctx.axisComms)
      if (c)
        ncclCommAbort(c);
    graphs.clear();
    setContext(nullptr);
    return;
  }
  cudaStreamSynchronize(ctx.stream);
  graphs.clear(); // before the stream and buffers they launch on go
  for (ncclComm_t c : ctx.axisComms)
    if (c)
      ncclCommDestroy(c);
  if (ctx.lt)
    cublasLtDestroy(ctx.lt);
  release(ctx.workspace, ctx.workspaceBytes);
  release(ctx.scratch, ctx.scratchBytes);
  release(ctx.gemmScratch, ctx.gemmScratchBytes);
  release(ctx.convColumns, ctx.convColumnsBytes);
  for (auto [p, bytes] : ctx.retiredGemmScratch)
    release(p, bytes);
  release(state.allocated, state.size);
  release(io.allocated, io.size);
  release(arena.allocated, arena.size);
  if (pinnedState)
    cudaHostUnregister(hostState->data());
  if (pinnedIo)
    cudaHostUnregister(hostIo->data());
  cudaStreamDestroy(ctx.stream);
  setContext(nullptr);
}

void CudaDevice::copy(void *dst, const void *src, size_t bytes,
                      cudaMemcpyKind kind, const char *what) {
  if (bytes == 0)
    return;
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, ctx.stream);
  if (e != cudaSuccess)
    throw Error(errorText(e, "cudaMemcpyAsync") + " (" + what + ")");
}

void CudaDevice::syncStateToHost() {
  if (!deviceStateNewer)
    return;
  copy(hostState->data(), state.aligned, state.size, cudaMemcpyDeviceToHost,
       "state to the host");
  require(cudaStreamSynchronize(ctx.stream),
          "cudaStreamSynchronize (state to the host)");
  deviceStateNewer = false;
}

void CudaDevice::call(EntryFn fn, const std::string &entry) {
  if (hostStateNewer) {
    copy(state.aligned, hostState->data(), state.size, cudaMemcpyHostToDevice,
         "state to the GPU");
    hostStateNewer = false;
  }
  auto it = transfers.find(entry);
  if (it == transfers.end())
    it = transfers.emplace(entry, ioTransfers(*manifest, entry)).first;
  for (const auto &[off, bytes] : it->second.toDevice)
    copy(io.aligned + off, hostIo->data() + off, bytes, cudaMemcpyHostToDevice,
         "io inputs to the GPU");
  Graph &g = graphs[entry];
  if (!g.calls) {
    const char *off = !useGraphs  ? "--no-cuda-graph"
                      : profiling() ? "OFLOW_CUDA_PROFILE times each launch"
                                    : nullptr;
    g.calls = std::make_unique<EntryGraph>(cudaGraphs(ctx.stream), !off, off ? off : "");
    g.noted = off != nullptr; // the user's choice needs no note
  }
  g.calls->call([&] {
    oflow_buffer s = state, i = io, a = arena; // the callee may not change ours
    fn(&s, &i, &a);
  });
  if (!g.noted && !g.calls->eagerReason().empty()) {
    g.noted = true;
    if (isRoot())
      std::fprintf(stderr, "note: the %s entry launches its kernels one by one, not from a "
                           "CUDA graph: %s\n",
                   entry.c_str(), g.calls->eagerReason().c_str());
  }
  for (const auto &[off, bytes] : it->second.toHost)
    copy(hostIo->data() + off, io.aligned + off, bytes, cudaMemcpyDeviceToHost,
         "io outputs to the host");
  cudaError_t e = cudaStreamSynchronize(ctx.stream);
  if (e != cudaSuccess)
    throw Error("the " + entry + " entry point failed on " + ctx.gpuText() +
                ": " + errorText(e, "cudaStreamSynchronize"));
  // Conservative: any entry may have written the state.
  deviceStateNewer = true;
}

void CudaDevice::poisonArena() {
  require(cudaMemsetAsync(arena.aligned, 0xFF, arena.size, ctx.stream),
          "cudaMemsetAsync (--check-memory)");
}

std::string CudaDevice::jsonFields() {
  std::string r = ", \"device_bytes\": " + std::to_string(ctx.peakBytes);
  int64_t replays = 0;
  for (const auto &[entry, g] : graphs)
    replays += g.calls ? g.calls->replays() : 0;
  r += ", \"cuda_graph_replays\": " + std::to_string(replays);
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess)
    r += ", \"device_used_bytes\": " + std::to_string(totalBytes - freeBytes);
  else
    cudaGetLastError();
  return r;
}
} // namespace

std::unique_ptr<Device> createDevice() { return std::make_unique<CudaDevice>(); }

} // namespace oflow_rt
