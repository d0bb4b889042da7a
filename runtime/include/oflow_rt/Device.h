//===- oflow_rt/Device.h - where the program's buffers live -----*- C++ -*-===//
//
// The one part of the runtime that differs between targets. The common code
// (manifest, data, checkpoints, export, logging, the training loop) works on
// HOST mirrors of the state and io buffers, which stay the truth; a Device
// decides where the generated code sees them and how a call runs:
//
//   liboflow_runtime.a       CpuDevice: the host buffers themselves, a host
//                            arena; a call is a plain function call.
//   liboflow_runtime_cuda.a  CudaDevice: one cudaMalloc each for state, io
//                            and arena; before a call the io inputs and
//                            scalars (and the state, when the host changed
//                            it) go host -> device, after it the io outputs,
//                            grads and scalars come back; the state comes
//                            back lazily, when the host reads it.
//
// Which one a program gets depends only on the archive it is linked with:
// each archive defines createDevice().
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_DEVICE_H
#define OFLOW_RT_DEVICE_H

#include "oflow_rt/Manifest.h"
#include "oflow_rt/abi.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace oflow_rt {

class AlignedBuffer;
using EntryFn = void (*)(oflow_buffer *, oflow_buffer *, oflow_buffer *);

/// Byte ranges [offset, offset + bytes) of the io buffer.
using ByteRanges = std::vector<std::pair<int64_t, int64_t>>;

/// What a call of `entry` reads from io (inputs, scalars: host -> device)
/// and may write (outputs, scalars, and the grads for the grads entry:
/// device -> host), as sorted ranges of this rank's local pieces, merged
/// where they touch or lie closer than `mergeGap` bytes.
struct IoTransfers {
  ByteRanges toDevice, toHost;
};
IoTransfers ioTransfers(const Manifest &m, const std::string &entry,
                        int64_t mergeGap = 4096);
/// Sorts and merges ranges (helper of ioTransfers; empty ranges dropped).
ByteRanges mergeRanges(ByteRanges r, int64_t mergeGap);

/// Device-specific run-time options (command line / environment).
struct DeviceOptions {
  bool allowTf32 = false; // --allow-tf32 or OFLOW_ALLOW_TF32=1 (CUDA only)
  /// Replay each entry's launches from a CUDA graph once two calls have
  /// enqueued the same work (runtime/lib/GraphReplay.h); off with
  /// --no-cuda-graph or OFLOW_CUDA_GRAPH=0 (CUDA only).
  bool cudaGraphs = true;
};
/// The options from the command line's flags and the environment.
DeviceOptions deviceOptions(bool allowTf32Flag, bool noCudaGraphFlag = false);

class Device {
public:
  virtual ~Device() = default;
  /// "cpu" or "cuda".
  virtual const char *kind() const = 0;
  /// Selects and checks the device (after startDistributed), allocates its
  /// copies of the buffers. `state` and `io` are the host mirrors, which
  /// live as long as the device.
  virtual void start(const Manifest &m, AlignedBuffer &state,
                     AlignedBuffer &io) = 0;
  virtual void setOptions(const DeviceOptions &) {}
  /// The host state changed (initial values, --weights, --resume): the
  /// device copy is refreshed before the next call.
  virtual void hostStateChanged() = 0;
  /// Makes the host state current (copies it back if a call changed it).
  virtual void syncStateToHost() = 0;
  /// Runs one entry point on the buffers and waits for it; afterwards the
  /// io outputs/grads/scalars in the host mirror are current.
  virtual void call(EntryFn fn, const std::string &entry) = 0;
  /// --check-memory: fills the arena with 0xFF bytes (before a call).
  virtual void poisonArena() = 0;
  /// Appended to every --log-json record (`, "key": value` ...); empty for
  /// the CPU, whose records stay as they were.
  virtual std::string jsonFields() { return ""; }
};

/// The archive's device: CpuDevice in liboflow_runtime.a, CudaDevice in
/// liboflow_runtime_cuda.a.
std::unique_ptr<Device> createDevice();

} // namespace oflow_rt

#endif
