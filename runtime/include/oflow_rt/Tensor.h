//===- oflow_rt/Tensor.h - a dense host tensor read from a file -*- C++ -*-===//
#ifndef OFLOW_RT_TENSOR_H
#define OFLOW_RT_TENSOR_H

#include "oflow_rt/DType.h"

#include <cstdint>
#include <vector>

namespace oflow_rt {

/// Row-major (C order), little-endian, densely packed elements.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;

  int64_t rows() const { return dims.empty() ? 1 : dims[0]; }
  /// Bytes of one row (everything after dims[0]).
  int64_t rowBytes() const;
};

} // namespace oflow_rt

#endif
