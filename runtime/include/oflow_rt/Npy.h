//===- oflow_rt/Npy.h - NumPy .npy files ------------------------*- C++ -*-===//
//
// Reads format versions 1-3 (little-endian, C order; every manifest dtype
// except bf16, which NumPy lacks) and writes version 1.0. Errors name the file.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_NPY_H
#define OFLOW_RT_NPY_H

#include "oflow_rt/Tensor.h"

#include <string>

namespace oflow_rt {

HostTensor readNpy(const std::string &path);
/// Parses a whole .npy image; `path` only names it in errors.
HostTensor parseNpy(const std::string &bytes, const std::string &path);
/// Writes atomically (temporary name, then rename).
void writeNpy(const std::string &path, const HostTensor &t);
std::string formatNpy(const HostTensor &t);

} // namespace oflow_rt

#endif
