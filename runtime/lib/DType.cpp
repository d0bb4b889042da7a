//===- DType.cpp - element types of the manifest --------------------------===//
#include "oflow_rt/DType.h"
#include "oflow_rt/Error.h"

#include <cerrno>
#include <cstring>

namespace oflow_rt {

namespace {
struct DTypeInfo {
  DType type;
  const char *name;
  int64_t size;
};
const DTypeInfo kDTypes[] = {
    {DType::F32, "f32", 4}, {DType::F64, "f64", 8},  {DType::F16, "f16", 2},
    {DType::BF16, "bf16", 2}, {DType::I64, "i64", 8}, {DType::I32, "i32", 4},
    {DType::I16, "i16", 2}, {DType::I8, "i8", 1},     {DType::U8, "u8", 1},
    {DType::Bool, "bool", 1},
};
} // namespace

const char *dtypeName(DType t) { return kDTypes[static_cast<int>(t)].name; }
int64_t dtypeSize(DType t) { return kDTypes[static_cast<int>(t)].size; }

std::optional<DType> parseDType(const std::string &s) {
  for (const DTypeInfo &d : kDTypes)
    if (s == d.name)
      return d.type;
  return std::nullopt;
}

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 ||
         t == DType::BF16;
}

int64_t numElements(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::string shapeText(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string errnoText() { return std::strerror(errno); }

} // namespace oflow_rt
