//===- oflow_rt/Program.h - the generated program and its buffers -*- C++ -*-===//
//
// Wraps what oflow-compile emitted (abi.h): the manifest, the initial state,
// the embedded model and the entry points, all declared weak so that a
// missing one is an error message instead of a link failure.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_PROGRAM_H
#define OFLOW_RT_PROGRAM_H

#include "oflow_rt/Device.h"
#include "oflow_rt/Manifest.h"
#include "oflow_rt/abi.h"

#include <cstdint>
#include <memory>
#include <string>

namespace oflow_rt {

/// A zero-filled, 64-byte aligned byte buffer and its memref descriptor.
class AlignedBuffer {
public:
  explicit AlignedBuffer(int64_t size);
  uint8_t *data() { return desc.aligned; }
  const uint8_t *data() const { return desc.aligned; }
  int64_t size() const { return desc.size; }
  oflow_buffer *descriptor() { return &desc; }

private:
  /// free() for small buffers; munmap() for large ones, which are mapped
  /// anonymous memory: zero pages the kernel supplies when first touched, so
  /// a 17 GB arena costs nothing until the program uses it.
  struct Release {
    size_t mappedBytes;
    void operator()(uint8_t *p) const;
  };
  std::unique_ptr<uint8_t, Release> storage;
  oflow_buffer desc;
};

class Program {
public:
  /// Parses the embedded manifest, starts the mesh's ranks (Distributed.h;
  /// `exe` is argv[0], `noMpi` for --help) and the device (Device.h; not for
  /// --help either), and allocates the buffers at this rank's local sizes;
  /// the state gets this rank's piece of oflow_state_init's global values.
  explicit Program(const std::string &exe = "", bool noMpi = false);
  ~Program();

  /// Reads initial values from an ONNX model: `override` (--weights) fills
  /// every param/buffer/constant var; without it the manifest's `weights`
  /// model fills those the program does not embed.
  void loadWeightsFile(const std::string &override);

  /// Throws unless the object has the entry point and the manifest lists it.
  void requireEntry(const std::string &entry, const std::string &why) const;
  /// Runs one entry point on the three buffers (and waits for it).
  void call(const std::string &entry);
  /// --check-memory: fills the whole arena with 0xFF before the next call.
  void poisonArena();
  /// What oflow_rt_check_memory() answers from now on (--check-memory).
  static void setCheckMemory(bool on);
  /// Device options (--allow-tf32); before the first call.
  void setDeviceOptions(const DeviceOptions &o);
  /// Extra --log-json fields of the device (empty on the CPU).
  std::string deviceJsonFields();

  /// The embedded ONNX model (nullptr, 0 when absent).
  const uint8_t *modelBytes() const;
  uint64_t modelSize() const;

  /// Writes a scalar of any manifest dtype; reads one back as a double.
  void writeScalar(const ScalarRecord &s, double v);
  double readValue(DType t, int64_t offset) const;

  /// The host mirror of the state, current (copied back from the device
  /// if a call changed it). Read through this, never keep the pointer
  /// across a call.
  const uint8_t *stateForRead();
  /// The same, for changing it: the device copy is refreshed before the
  /// next call.
  uint8_t *stateForWrite();

  Manifest manifest;
  /// The host mirror of io, always the truth between calls: the runtime
  /// writes inputs and scalars here and reads outputs from here.
  AlignedBuffer io;

private:
  void initState();

  AlignedBuffer state;
  std::unique_ptr<Device> device;
  bool started = false;
};

} // namespace oflow_rt

#endif
