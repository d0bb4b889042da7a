//===- Mgpu.cpp - the mgpu* wrappers MLIR's gpu-to-llvm lowering calls ----===//
//
// The CUDA program's host code (MLIR `gpu-to-llvm`) launches kernels through
// these functions; Debian ships no MLIR CUDA runtime, so the runtime has its
// own (written for oflow, semantics after upstream's CudaRuntimeWrappers).
// Runtime API only (cudaLibrary*, cudaLaunchKernel; the driver's
// cuMemsetD16/D32Async through cudaGetDriverEntryPointByVersion): nothing
// here needs libcuda.so at link or load time.
//
//   mgpuModuleLoad / mgpuModuleLoadJIT  record the blob (ModuleRegistry.h);
//       they run from global constructors, before main() has picked the GPU
//   mgpuModuleGetFunction  loads the module on first use (cudaLibraryLoadData,
//       errors explained: no code for this GPU, PTX too new for the driver),
//       caches functions by (module, name)
//   mgpuModuleUnload       forgets the module (runs after main(); no CUDA call)
//   mgpuStreamCreate       returns the runtime's compute stream (creates none)
//   mgpuStreamSynchronize  no-op on the compute stream: the runtime waits once
//       at the end of each entry call
//   mgpuStreamDestroy      no-op
//   a null stream anywhere means the compute stream as well.
//
//===----------------------------------------------------------------------===//
#include "../GraphReplay.h"
#include "../ModuleRegistry.h"
#include "CudaContext.h"
#include "Profile.h"
#include "oflow_rt/abi.h" // the declarations: a signature that drifts fails to compile

#include <cuda.h> // driver types only (no libcuda link)

#include <cstring>
#include <map>
#include <mutex>
#include <vector>
#include <stdexcept>

using namespace oflow_rt;
using namespace oflow_rt::cuda;

namespace {
cudaStream_t streamOf(Context &ctx, void *stream) {
  return stream ? static_cast<cudaStream_t>(stream) : ctx.stream;
}

/// Records a launch into the trace being recorded (GraphReplay.h): the
/// kernel, its shape and every parameter's bytes (sizes from
/// cudaFuncGetParamInfo, cached per kernel).
void traceLaunch(LaunchTrace &trace, const void *fn, const intptr_t dims[6], int32_t smem,
                 void **params, size_t count) {
  static std::map<const void *, std::vector<size_t>> *sizes =
      new std::map<const void *, std::vector<size_t>>;
  auto [it, fresh] = sizes->try_emplace(fn);
  if (fresh) {
    for (size_t i = 0; i < count; ++i) {
      size_t offset = 0, size = 0;
      if (cudaFuncGetParamInfo(fn, i, &offset, &size) != cudaSuccess) {
        cudaGetLastError();
        it->second.clear();
        break;
      }
      it->second.push_back(size);
    }
  }
  if (it->second.size() != count) {
    trace.addUncapturable("the driver cannot tell the parameter sizes of kernel " +
                          std::string(kernelName(fn)) + " (cudaFuncGetParamInfo)");
    return;
  }
  std::string bytes(reinterpret_cast<const char *>(&fn), sizeof fn);
  bytes.append(reinterpret_cast<const char *>(dims), 6 * sizeof(intptr_t));
  bytes.append(reinterpret_cast<const char *>(&smem), sizeof smem);
  for (size_t i = 0; i < count; ++i)
    bytes.append(static_cast<const char *>(params[i]), it->second[i]);
  trace.add("kernel", bytes.data(), bytes.size());
}

std::string loadHint(const Context &ctx, cudaError_t e) {
  std::string built = "this executable was built with CUDA " +
                      versionText(CUDART_VERSION);
  std::string driver = "the NVIDIA driver supports CUDA " +
                       versionText(ctx.driverVersion);
  switch (e) {
  case cudaErrorNoKernelImageForDevice:
  case cudaErrorInvalidKernelImage:
    return "the program holds no GPU code this " + ctx.gpuText() +
           " can run: compile it for sm_" + std::to_string(ctx.props.major) +
           std::to_string(ctx.props.minor) + " (or embed PTX)";
  case cudaErrorUnsupportedPtxVersion:
  case cudaErrorInvalidPtx:
  case cudaErrorJitCompilerNotFound:
  case cudaErrorJitCompilationDisabled:
    return driver + ", " + built +
           ": its PTX needs a driver for CUDA " + versionText(CUDART_VERSION) +
           " or newer (update the NVIDIA driver, or embed a cubin for sm_" +
           std::to_string(ctx.props.major) + std::to_string(ctx.props.minor) + ")";
  case cudaErrorInsufficientDriver:
    return driver + ", " + built + ": update the NVIDIA driver";
  default:
    return driver + "; " + built;
  }
}

void *loadModule(const GpuModule &m) {
  Context &ctx = context("mgpuModuleGetFunction");
  cudaLibrary_t lib = nullptr;
  cudaError_t e;
  char log[4096] = {0};
  if (m.ptx) {
    cudaJitOption opts[3] = {cudaJitErrorLogBuffer, cudaJitErrorLogBufferSizeBytes,
                             cudaJitOptimizationLevel};
    void *values[3] = {log, reinterpret_cast<void *>(uintptr_t(sizeof log)),
                       reinterpret_cast<void *>(uintptr_t(
                           m.optLevel >= 0 && m.optLevel <= 4 ? m.optLevel : 4))};
    e = cudaLibraryLoadData(&lib, m.code.data(), opts, values, 3, nullptr,
                            nullptr, 0);
  } else {
    e = cudaLibraryLoadData(&lib, m.code.data(), nullptr, nullptr, 0, nullptr,
                            nullptr, 0);
  }
  if (e != cudaSuccess)
    fatal("cannot load the program's GPU code (" + std::string(m.ptx ? "PTX" : "binary") +
          ") on " + ctx.gpuText() + ": " + errorText(e, "cudaLibraryLoadData") +
          "; " + loadHint(ctx, e) + (log[0] ? std::string("; JIT log: ") + log : ""));
  return lib;
}

void *getKernel(const GpuModule &m, const char *name) {
  Context &ctx = context("mgpuModuleGetFunction");
  cudaKernel_t k = nullptr;
  cudaError_t e = cudaLibraryGetKernel(&k, static_cast<cudaLibrary_t>(m.library), name);
  if (e != cudaSuccess)
    fatal(std::string("the program's GPU code has no kernel '") + name + "': " +
          errorText(e, "cudaLibraryGetKernel"));
  // Modules load lazily (CUDA_MODULE_LOADING=LAZY): this makes the driver
  // load the kernel now, so an image this GPU cannot run fails here.
  cudaFuncAttributes attr{};
  e = cudaFuncGetAttributes(&attr, reinterpret_cast<const void *>(k));
  if (e != cudaSuccess)
    fatal(std::string("cannot load GPU kernel '") + name + "' on " +
          ctx.gpuText() + ": " + errorText(e, "cudaFuncGetAttributes") + "; " +
          loadHint(ctx, e));
  return k;
}

template <typename Fn> Fn driverEntry(const char *symbol) {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  cudaError_t e =
      cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || !fn)
    fatal(std::string("the NVIDIA driver has no ") + symbol + " (" +
          (e != cudaSuccess ? cudaGetErrorString(e) : "symbol not found") + ")");
  return reinterpret_cast<Fn>(fn);
}

// mgpuMemAlloc's blocks and their sizes (for the accounting at free).
std::mutex gAllocMutex;
std::map<void *, size_t> &allocations() {
  static auto *m = new std::map<void *, size_t>;
  return *m;
}
} // namespace

extern "C" {

void *mgpuModuleLoad(void *data, size_t size) {
  return moduleRegistry().addBinary(data, size);
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return moduleRegistry().addPtx(data, optLevel);
}

void mgpuModuleUnload(void *module) { moduleRegistry().remove(module); }

void *mgpuModuleGetFunction(void *module, const char *name) {
  static const ModuleRegistry::Loader loader{loadModule, getKernel};
  try {
    void *fn = moduleRegistry().function(module, name, loader);
    nameKernel(fn, name);
    return fn;
  } catch (const std::exception &e) {
    fatal(e.what());
  }
}

void *mgpuStreamCreate() { return context("mgpuStreamCreate").stream; }

void mgpuStreamDestroy(void *) {}

void mgpuStreamSynchronize(void *stream) {
  Context &ctx = context("mgpuStreamSynchronize");
  if (!stream || stream == ctx.stream)
    return; // the runtime synchronizes after the entry call
  noteUncapturable("mgpuStreamSynchronize of another stream");
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
        "cudaStreamSynchronize (mgpuStreamSynchronize)");
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount) {
  Context &ctx = context("mgpuLaunchKernel");
  if (extra)
    fatal("mgpuLaunchKernel: kernel parameters through `extra` are not "
          "supported (pass them as `params`)");
  for (intptr_t v : {gridX, gridY, gridZ, blockX, blockY, blockZ})
    if (v <= 0 || v > UINT32_MAX)
      fatal("mgpuLaunchKernel: bad launch dimensions grid (" +
            std::to_string(gridX) + ", " + std::to_string(gridY) + ", " +
            std::to_string(gridZ) + ") block (" + std::to_string(blockX) +
            ", " + std::to_string(blockY) + ", " + std::to_string(blockZ) + ")");
  const void *fn = function;
  if (smem > 48 * 1024) { // above the default: opt in, once per size
    static std::map<const void *, int32_t> *optedIn = new std::map<const void *, int32_t>;
    int32_t &have = (*optedIn)[fn];
    if (smem > have) {
      check(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
            "cudaFuncSetAttribute (dynamic shared memory)");
      have = smem;
    }
  }
  if (LaunchTrace *t = LaunchTrace::active()) {
    intptr_t dims[6] = {gridX, gridY, gridZ, blockX, blockY, blockZ};
    traceLaunch(*t, fn, dims, smem, params, paramsCount);
  }
  std::string label;
  if (profiling())
    label = std::string(kernelName(fn)) + " <<<" + std::to_string(gridX * gridY * gridZ) +
            ", " + std::to_string(blockX * blockY * blockZ) + ">>>";
  ProfileScope scope(streamOf(ctx, stream), label);
  check(cudaLaunchKernel(fn, dim3(gridX, gridY, gridZ), dim3(blockX, blockY, blockZ),
                         params, static_cast<size_t>(smem), streamOf(ctx, stream)),
        "cudaLaunchKernel");
}

void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/, bool isHostShared) {
  Context &ctx = context("mgpuMemAlloc");
  if (sizeBytes == 0)
    return nullptr;
  noteUncapturable("an allocation (mgpuMemAlloc)");
  void *p = nullptr;
  if (isHostShared) {
    // Managed memory is visible to the host: finish the stream's work first.
    check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize (mgpuMemAlloc)");
    check(cudaMallocManaged(&p, sizeBytes, cudaMemAttachGlobal), "cudaMallocManaged");
    std::lock_guard<std::mutex> lock(gAllocMutex);
    allocations()[p] = sizeBytes;
    ctx.liveBytes += sizeBytes;
    ctx.peakBytes = std::max(ctx.peakBytes, ctx.liveBytes);
    return p;
  }
  try {
    p = allocate(sizeBytes, "mgpuMemAlloc");
  } catch (const std::exception &e) {
    fatal(e.what());
  }
  std::lock_guard<std::mutex> lock(gAllocMutex);
  allocations()[p] = sizeBytes;
  return p;
}

void mgpuMemFree(void *ptr, void * /*stream*/) {
  if (!ptr)
    return;
  Context &ctx = context("mgpuMemFree");
  noteUncapturable("a free (mgpuMemFree), which waits for the stream");
  // cudaFree waits for the device; the memory may still be in use by work
  // already enqueued on the compute stream otherwise.
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize (mgpuMemFree)");
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(gAllocMutex);
    auto it = allocations().find(ptr);
    if (it == allocations().end())
      fatal("mgpuMemFree of a pointer mgpuMemAlloc did not return");
    bytes = it->second;
    allocations().erase(it);
  }
  release(ptr, bytes);
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream) {
  Context &ctx = context("mgpuMemcpy");
  if (LaunchTrace *t = LaunchTrace::active()) {
    const void *args[3] = {dst, src, reinterpret_cast<const void *>(sizeBytes)};
    t->add("memcpy", args, sizeof args);
    // A graph replays a copy of host memory from the bytes it had then.
    for (const void *p : {static_cast<const void *>(dst), static_cast<const void *>(src)}) {
      cudaPointerAttributes attrs{};
      if (cudaPointerGetAttributes(&attrs, p) != cudaSuccess ||
          attrs.type == cudaMemoryTypeHost || attrs.type == cudaMemoryTypeUnregistered) {
        cudaGetLastError();
        t->addUncapturable("a copy to or from host memory (mgpuMemcpy)");
      }
    }
  }
  check(cudaMemcpyAsync(dst, src, sizeBytes, cudaMemcpyDefault, streamOf(ctx, stream)),
        "cudaMemcpyAsync (mgpuMemcpy)");
}

void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream) {
  Context &ctx = context("mgpuMemset32");
  if (LaunchTrace *t = LaunchTrace::active()) {
    uint64_t args[3] = {reinterpret_cast<uint64_t>(dst), value, count};
    t->add("memset32", args, sizeof args);
  }
  using Fn = CUresult (*)(CUdeviceptr, unsigned int, size_t, CUstream);
  static Fn fn = driverEntry<Fn>("cuMemsetD32Async");
  CUresult r = fn(reinterpret_cast<CUdeviceptr>(dst), value, count,
                  static_cast<CUstream>(streamOf(ctx, stream)));
  if (r != CUDA_SUCCESS)
    fatal("cuMemsetD32Async (mgpuMemset32) failed: CUresult " + std::to_string(r));
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  Context &ctx = context("mgpuMemset16");
  if (LaunchTrace *t = LaunchTrace::active()) {
    uint64_t args[3] = {reinterpret_cast<uint64_t>(dst), value, count};
    t->add("memset16", args, sizeof args);
  }
  using Fn = CUresult (*)(CUdeviceptr, unsigned short, size_t, CUstream);
  static Fn fn = driverEntry<Fn>("cuMemsetD16Async");
  CUresult r = fn(reinterpret_cast<CUdeviceptr>(dst), value, count,
                  static_cast<CUstream>(streamOf(ctx, stream)));
  if (r != CUDA_SUCCESS)
    fatal("cuMemsetD16Async (mgpuMemset16) failed: CUresult " + std::to_string(r));
}

// Events (async token chains across streams; with one stream they are
// plain stream-ordered markers).
void *mgpuEventCreate() {
  context("mgpuEventCreate");
  noteUncapturable("an event (mgpuEventCreate)");
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  return e;
}

void mgpuEventDestroy(void *event) {
  check(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "cudaEventDestroy");
}

void mgpuEventSynchronize(void *event) {
  noteUncapturable("mgpuEventSynchronize");
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize");
}

void mgpuEventRecord(void *event, void *stream) {
  Context &ctx = context("mgpuEventRecord");
  check(cudaEventRecord(static_cast<cudaEvent_t>(event), streamOf(ctx, stream)),
        "cudaEventRecord");
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  Context &ctx = context("mgpuStreamWaitEvent");
  check(cudaStreamWaitEvent(streamOf(ctx, stream), static_cast<cudaEvent_t>(event), 0),
        "cudaStreamWaitEvent");
}

// The runtime chose the GPU (the rank's local rank); a program may not.
void mgpuSetDefaultDevice(int32_t) {}

} // extern "C"
