//===- oflow_rt/Export.h - trained weights back into the ONNX model -*- C++ -*-===//
#ifndef OFLOW_RT_EXPORT_H
#define OFLOW_RT_EXPORT_H

#include "oflow_rt/Manifest.h"

#include <cstdint>
#include <functional>
#include <string>

namespace oflow_rt {

/// Parses the embedded ModelProto, sets every param/buffer initializer to its
/// value in `state` (raw_data), and writes `path` atomically.
void exportOnnx(const std::string &path, const uint8_t *model,
                uint64_t modelSize, const Manifest &m, const uint8_t *state);
/// The same, with each variable's global bytes from `valueOf` (a mesh
/// program's variables gathered to rank 0).
using VarBytes = std::function<const uint8_t *(const VarRecord &)>;
void exportOnnx(const std::string &path, const uint8_t *model,
                uint64_t modelSize, const Manifest &m, const VarBytes &valueOf);
/// Which variables an export writes (params and buffers).
bool isExported(const VarRecord &v);

} // namespace oflow_rt

#endif
