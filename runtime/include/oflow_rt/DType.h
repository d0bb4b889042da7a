//===- oflow_rt/DType.h - element types of the manifest ---------*- C++ -*-===//
#ifndef OFLOW_RT_DTYPE_H
#define OFLOW_RT_DTYPE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oflow_rt {

/// The manifest's dtypes (abi.h). bool is one byte, 0 or 1.
enum class DType { F32, F64, F16, BF16, I64, I32, I16, I8, U8, Bool };

/// The manifest spelling ("f32", ...) and its inverse.
const char *dtypeName(DType t);
std::optional<DType> parseDType(const std::string &s);
int64_t dtypeSize(DType t);
bool isFloat(DType t);

/// Element count of a shape (1 for a scalar).
int64_t numElements(const std::vector<int64_t> &dims);
/// "[8,4]" for messages; "[]" for a scalar.
std::string shapeText(const std::vector<int64_t> &dims);

} // namespace oflow_rt

#endif
