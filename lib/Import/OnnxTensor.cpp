//===- OnnxTensor.cpp - ONNX tensors into MLIR attributes -----------------===//
//
// Element types, inline and external tensor data. External data may only
// come from files inside the model's folder (ONNX CVE-2022-25882).
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"
#include "oflow_rt/ConfinedFile.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fstream>

using namespace mlir;

namespace oflow::import {

Type convertElementType(MLIRContext *ctx, int32_t t) {
  using TP = onnx::TensorProto;
  switch (t) {
  case TP::FLOAT: return Float32Type::get(ctx);
  case TP::DOUBLE: return Float64Type::get(ctx);
  case TP::FLOAT16: return Float16Type::get(ctx);
  case TP::BFLOAT16: return BFloat16Type::get(ctx);
  case TP::INT8: return IntegerType::get(ctx, 8);
  case TP::INT16: return IntegerType::get(ctx, 16);
  case TP::INT32: return IntegerType::get(ctx, 32);
  case TP::INT64: return IntegerType::get(ctx, 64);
  case TP::UINT8: return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case TP::UINT16: return IntegerType::get(ctx, 16, IntegerType::Unsigned);
  case TP::UINT32: return IntegerType::get(ctx, 32, IntegerType::Unsigned);
  case TP::UINT64: return IntegerType::get(ctx, 64, IntegerType::Unsigned);
  case TP::BOOL: return IntegerType::get(ctx, 1);
  default: return {};
  }
}

std::string onnxTypeName(int32_t t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(t));
  return "type " + std::to_string(t);
}

/// Bytes per element as stored in raw_data (bool: one byte).
static size_t storageBytes(Type t) {
  return std::max<size_t>(1, t.getIntOrFloatBitWidth() / 8);
}

template <typename T, typename Field>
static void appendAs(std::vector<char> &out, const Field &field, size_t bytes) {
  for (auto v : field) {
    T x = static_cast<T>(v);
    const char *p = reinterpret_cast<const char *>(&x);
    out.insert(out.end(), p, p + bytes);
  }
}

std::string checkExternalLocation(StringRef location) {
  return oflow_rt::checkConfinedLocation(location.str());
}

/// External data through the one confinement rule the runtime uses too
/// (oflow_rt/ConfinedFile.h): openat2(RESOLVE_BENEATH) from the model's
/// folder, so no link can lead out of it.
static bool readExternal(const onnx::TensorProto &tensor,
                         const std::string &modelDir, size_t expectedBytes,
                         std::vector<char> &out, std::string &error) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto &kv : tensor.external_data()) {
    uint64_t v = 0;
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      if (!llvm::to_integer(kv.value(), v, 10)) {
        error = "initializer '" + tensor.name() + "': external data " +
                kv.key() + " '" + kv.value() + "' is not a number";
        return false;
      }
      (kv.key() == "offset" ? offset : length.emplace()) = v;
    }
  }
  uint64_t want = length.value_or(expectedBytes);
  if (want != expectedBytes) {
    error = "initializer '" + tensor.name() + "': external data length " +
            std::to_string(want) + " does not match its shape and type (" +
            std::to_string(expectedBytes) + " bytes)";
    return false;
  }
  std::string bytes, why;
  if (!oflow_rt::readConfinedRange(modelDir, location, offset, want, bytes, why)) {
    error = "initializer '" + tensor.name() + "': external data location '" +
            location + "' " + why;
    return false;
  }
  out.assign(bytes.begin(), bytes.end());
  return true;
}

ElementsAttr readTensor(MLIRContext *ctx, const onnx::TensorProto &tensor,
                        const std::string &modelDir, bool asResource,
                        StringRef blobName, std::string &error) {
  using TP = onnx::TensorProto;
  Type elementType = convertElementType(ctx, tensor.data_type());
  if (!elementType) {
    error = "tensor '" + tensor.name() + "' has unsupported element type " +
            onnxTypeName(tensor.data_type());
    return {};
  }
  SmallVector<int64_t> shape;
  uint64_t numElements = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0) {
      error = "tensor '" + tensor.name() + "' has a negative dimension";
      return {};
    }
    shape.push_back(d);
    numElements *= static_cast<uint64_t>(d);
  }
  size_t elementBytes = storageBytes(elementType);
  size_t expectedBytes = numElements * elementBytes;

  std::vector<char> bytes;
  if (tensor.data_location() == TP::EXTERNAL) {
    if (!readExternal(tensor, modelDir, expectedBytes, bytes, error))
      return {};
  } else if (!tensor.raw_data().empty()) {
    bytes.assign(tensor.raw_data().begin(), tensor.raw_data().end());
  } else {
    switch (tensor.data_type()) {
    case TP::FLOAT: appendAs<float>(bytes, tensor.float_data(), 4); break;
    case TP::DOUBLE: appendAs<double>(bytes, tensor.double_data(), 8); break;
    case TP::INT64: appendAs<int64_t>(bytes, tensor.int64_data(), 8); break;
    case TP::UINT64: appendAs<uint64_t>(bytes, tensor.uint64_data(), 8); break;
    case TP::UINT32: appendAs<uint32_t>(bytes, tensor.uint64_data(), 4); break;
    case TP::INT32: appendAs<int32_t>(bytes, tensor.int32_data(), 4); break;
    case TP::INT16:
    case TP::UINT16:
    case TP::FLOAT16:
    case TP::BFLOAT16: appendAs<uint16_t>(bytes, tensor.int32_data(), 2); break;
    case TP::INT8:
    case TP::UINT8:
    case TP::BOOL: appendAs<uint8_t>(bytes, tensor.int32_data(), 1); break;
    default: break;
    }
  }
  if (bytes.size() != expectedBytes) {
    error = "tensor '" + tensor.name() + "' holds " +
            std::to_string(bytes.size()) + " bytes of data, but its shape " +
            "and type need " + std::to_string(expectedBytes);
    return {};
  }

  auto type = RankedTensorType::get(shape, elementType);
  if (elementType.isInteger(1)) {
    SmallVector<bool> bits(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i)
      bits[i] = bytes[i] != 0;
    return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  if (asResource)
    return DenseResourceElementsAttr::get(
        type, blobName,
        HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(uint64_t),
                                                      /*dataIsMutable=*/false));
  if (numElements == 0)
    return DenseElementsAttr::get(type, ArrayRef<Attribute>());
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

} // namespace oflow::import
