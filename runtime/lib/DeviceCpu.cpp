//===- DeviceCpu.cpp - the CPU target's Device (liboflow_runtime.a) -------===//
//
// The generated code reads and writes the host buffers directly; the arena
// is one more host buffer. Nothing to copy, nothing to wait for.
//
//===----------------------------------------------------------------------===//
#include "oflow_rt/Device.h"
#include "oflow_rt/Program.h"

#include <cstring>
#include <string>

namespace oflow_rt {

namespace {
class CpuDevice final : public Device {
public:
  const char *kind() const override { return "cpu"; }
  void start(const Manifest &m, AlignedBuffer &s, AlignedBuffer &i) override {
    state = &s;
    io = &i;
    arena = std::make_unique<AlignedBuffer>(m.arenaBytes);
  }
  void hostStateChanged() override {}
  void syncStateToHost() override {}
  void call(EntryFn fn, const std::string &) override {
    fn(state->descriptor(), io->descriptor(), arena->descriptor());
  }
  void poisonArena() override {
    std::memset(arena->data(), 0xFF, arena->size());
  }
  /// What this rank allocated for the program (--log-json), as the CUDA
  /// device reports its own: what --memory-limit is checked against.
  std::string jsonFields() override {
    return ", \"device_bytes\": " +
           std::to_string(state->size() + io->size() + arena->size());
  }

private:
  AlignedBuffer *state = nullptr, *io = nullptr;
  std::unique_ptr<AlignedBuffer> arena;
};
} // namespace

std::unique_ptr<Device> createDevice() { return std::make_unique<CpuDevice>(); }

} // namespace oflow_rt
