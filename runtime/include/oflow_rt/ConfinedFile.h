//===- oflow_rt/ConfinedFile.h - files confined to a folder -----*- C++ -*-===//
//
// The one rule for ONNX external data, shared by the importer and the
// runtime: a location is a relative path inside the model's folder; no
// absolute path, no "..", no link that leaves the folder. The file is opened
// with openat2(RESOLVE_BENEATH) from the folder's descriptor (where the
// kernel lacks it, by an O_NOFOLLOW walk that refuses every link), so the
// check and the open are one step: nothing can swap a link in between.
// No MLIR, no exceptions: errors come back as text for the caller to wrap.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_CONFINEDFILE_H
#define OFLOW_RT_CONFINEDFILE_H

#include <cstdint>
#include <optional>
#include <string>

namespace oflow_rt {

/// Why `location` is not a relative path inside a folder ("" when it is).
std::string checkConfinedLocation(const std::string &location);

/// Bytes [offset, offset + length) of the regular file `location` beneath
/// `dir` (no length: to the end). On failure returns false and sets `error`
/// to a phrase that completes "external data location 'L' ..." (e.g.
/// "resolves outside the model's folder (through a link); refused",
/// "is not a regular file", "is too short: ...").
bool readConfinedRange(const std::string &dir, const std::string &location,
                       uint64_t offset, std::optional<uint64_t> length,
                       std::string &out, std::string &error);

} // namespace oflow_rt

#endif
