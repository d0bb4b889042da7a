//===- Program.cpp - the generated program and its buffers ----------------===//
#include "oflow_rt/Program.h"
#include "oflow_rt/Distributed.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/Weights.h"
#include "oflow_rt/abi.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

// The generated symbols are weak: a program object without one still links,
// and the runtime reports what is missing (an address of 0).
#pragma weak _mlir_ciface_oflow_train_step
#pragma weak _mlir_ciface_oflow_grad_step
#pragma weak _mlir_ciface_oflow_infer
#pragma weak oflow_manifest
#pragma weak oflow_state_init
#pragma weak oflow_state_init_size
#pragma weak oflow_onnx_model
#pragma weak oflow_onnx_model_size

namespace oflow_rt {

namespace {
EntryFn entrySymbol(const std::string &entry) {
  if (entry == "train")
    return &_mlir_ciface_oflow_train_step;
  if (entry == "grads")
    return &_mlir_ciface_oflow_grad_step;
  if (entry == "infer")
    return &_mlir_ciface_oflow_infer;
  return nullptr;
}

const char *entrySymbolName(const std::string &entry) {
  if (entry == "train")
    return "_mlir_ciface_oflow_train_step";
  if (entry == "grads")
    return "_mlir_ciface_oflow_grad_step";
  return "_mlir_ciface_oflow_infer";
}

Manifest loadManifest(const std::string &exe, bool noMpi) {
  if (!&oflow_manifest)
    throw Error("this executable holds no oflow program (symbol "
                "oflow_manifest is missing): link an object from oflow-compile");
  Manifest m = parseManifest(oflow_manifest);
  // Before the buffers: their content depends on this rank's coordinates.
  startDistributed(m, exe, noMpi);
  return m;
}
} // namespace

void AlignedBuffer::Release::operator()(uint8_t *p) const {
  if (mappedBytes)
    ::munmap(p, mappedBytes);
  else
    std::free(p);
}

AlignedBuffer::AlignedBuffer(int64_t size) : storage(nullptr, Release{0}) {
  // Never zero bytes: generated code may take the address of an empty buffer.
  size_t rounded = (static_cast<size_t>(size) + 63) / 64 * 64;
  if (rounded == 0)
    rounded = 64;
  constexpr size_t kMapAbove = size_t(1) << 20;
  void *p = nullptr;
  size_t mapped = 0;
  if (rounded >= kMapAbove) {
    p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw Error("out of memory allocating " + std::to_string(size) + " bytes");
    mapped = rounded; // zero-filled by the kernel, page-aligned
  } else {
    p = std::aligned_alloc(64, rounded);
    if (!p)
      throw Error("out of memory allocating " + std::to_string(size) + " bytes");
    std::memset(p, 0, rounded);
  }
  storage = std::unique_ptr<uint8_t, Release>(static_cast<uint8_t *>(p),
                                              Release{mapped});
  desc = {storage.get(), storage.get(), 0, size, 1};
}

Program::Program(const std::string &exe, bool noMpi)
    : manifest(loadManifest(exe, noMpi)), io(manifest.ioBytes),
      state(manifest.stateBytes), device(createDevice()) {
  // --help runs on machines without the device, too.
  if (!noMpi) {
    device->start(manifest, state, io);
    started = true;
  }
  initState();
}

Program::~Program() = default;

const uint8_t *Program::stateForRead() {
  device->syncStateToHost();
  return state.data();
}

uint8_t *Program::stateForWrite() {
  device->syncStateToHost();
  device->hostStateChanged();
  return state.data();
}

namespace {
std::atomic<bool> checkMemoryOn{false};
} // namespace

void Program::setCheckMemory(bool on) { checkMemoryOn = on; }

extern "C" int8_t oflow_rt_check_memory(void) { return checkMemoryOn ? 1 : 0; }

void Program::poisonArena() {
  if (started)
    device->poisonArena();
}

void Program::setDeviceOptions(const DeviceOptions &o) {
  device->setOptions(o);
}

std::string Program::deviceJsonFields() {
  return started ? device->jsonFields() : std::string();
}

void Program::initState() {
  uint64_t initSize = &oflow_state_init_size ? oflow_state_init_size : 0;
  for (const VarRecord &v : manifest.vars) {
    if (v.recipe) { // drawn here, this rank's piece only
      fillInitial(*v.recipe, v.name, v.dtype, v.dims, myBlock(v),
                  state.data() + v.offset);
      continue;
    }
    if (v.initOffset < 0)
      continue; // zeros, as allocated
    if (!&oflow_state_init ||
        static_cast<uint64_t>(v.initOffset + v.bytes()) > initSize)
      throw Error("the initial value of '" + v.name + "' (" +
                  std::to_string(v.bytes()) + " bytes at " +
                  std::to_string(v.initOffset) +
                  ") lies outside oflow_state_init (" +
                  std::to_string(initSize) + " bytes)");
    copyMyPiece(v, oflow_state_init + v.initOffset, state.data() + v.offset);
  }
  device->hostStateChanged();
}

void Program::loadWeightsFile(const std::string &override) {
  if (!override.empty())
    loadWeights(override, manifest, stateForWrite(), /*onlyUninitialized=*/false);
  else if (!manifest.weightsFile.empty())
    loadWeights(manifest.weightsFile, manifest, stateForWrite(),
                /*onlyUninitialized=*/true);
}

void Program::requireEntry(const std::string &entry,
                           const std::string &why) const {
  if (!manifest.hasEntry(entry) || !entrySymbol(entry)) {
    std::string built = manifest.mode == "infer"
                            ? "this executable was built for inference"
                            : "this executable was built without a '" +
                                  entry + "' entry point";
    throw Error(why + " needs the " + entry + " entry point, but " + built +
                (manifest.hasEntry(entry) ? std::string(" (") +
                                                entrySymbolName(entry) +
                                                " is missing)"
                                          : ""));
  }
}

void Program::call(const std::string &entry) {
  if (!started)
    throw Error("internal: " + entry + " called before the device started");
  device->call(entrySymbol(entry), entry);
}

const uint8_t *Program::modelBytes() const {
  return &oflow_onnx_model ? oflow_onnx_model : nullptr;
}

uint64_t Program::modelSize() const {
  return &oflow_onnx_model_size && &oflow_onnx_model ? oflow_onnx_model_size
                                                      : 0;
}

void Program::writeScalar(const ScalarRecord &s, double v) {
  uint8_t *p = io.data() + s.offset;
  switch (s.dtype) {
  case DType::F32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
  case DType::F64: std::memcpy(p, &v, 8); break;
  case DType::I64: { int64_t i = static_cast<int64_t>(v); std::memcpy(p, &i, 8); break; }
  case DType::I32: { int32_t i = static_cast<int32_t>(v); std::memcpy(p, &i, 4); break; }
  case DType::I16: { int16_t i = static_cast<int16_t>(v); std::memcpy(p, &i, 2); break; }
  case DType::I8: case DType::U8: case DType::Bool: *p = static_cast<uint8_t>(v); break;
  case DType::F16: case DType::BF16:
    throw Error("scalar '" + s.name + "' has an unsupported dtype " +
                dtypeName(s.dtype));
  }
}

double Program::readValue(DType t, int64_t offset) const {
  const uint8_t *p = io.data() + offset;
  switch (t) {
  case DType::F32: { float f; std::memcpy(&f, p, 4); return f; }
  case DType::F64: { double d; std::memcpy(&d, p, 8); return d; }
  case DType::I64: { int64_t i; std::memcpy(&i, p, 8); return static_cast<double>(i); }
  case DType::I32: { int32_t i; std::memcpy(&i, p, 4); return i; }
  case DType::I16: { int16_t i; std::memcpy(&i, p, 2); return i; }
  case DType::I8: return static_cast<int8_t>(*p);
  case DType::U8: case DType::Bool: return *p;
  case DType::F16: case DType::BF16: break;
  }
  throw Error(std::string("cannot read a ") + dtypeName(t) + " scalar");
}

} // namespace oflow_rt
