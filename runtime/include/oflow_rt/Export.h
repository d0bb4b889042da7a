//===- oflow_rt/Export.h - trained weights back into the ONNX model -*- C++ -*-===//
#ifndef OFLOW_RT_EXPORT_H
#define OFLOW_RT_EXPORT_H

#include "oflow_rt/Manifest.h"

#include <cstdint>
#include <string>

namespace oflow_rt {

/// Parses the embedded ModelProto, sets every param/buffer initializer to its
/// value in `state` (raw_data), and writes `path` atomically.
void exportOnnx(const std::string &path, const uint8_t *model,
                uint64_t modelSize, const Manifest &m, const uint8_t *state);

} // namespace oflow_rt

#endif
