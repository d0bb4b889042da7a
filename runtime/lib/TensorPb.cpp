//===- TensorPb.cpp - ONNX TensorProto (.pb) files ------------------------===//
#include "oflow_rt/TensorPb.h"
#include "oflow_rt/ConfinedFile.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/FileUtil.h"

#include <onnx/onnx_pb.h>

#include <cstring>

namespace oflow_rt {

namespace {
using onnx::TensorProto;

std::optional<DType> fromOnnx(int t) {
  switch (t) {
  case TensorProto::FLOAT: return DType::F32;
  case TensorProto::DOUBLE: return DType::F64;
  case TensorProto::FLOAT16: return DType::F16;
  case TensorProto::BFLOAT16: return DType::BF16;
  case TensorProto::INT64: return DType::I64;
  case TensorProto::INT32: return DType::I32;
  case TensorProto::INT16: return DType::I16;
  case TensorProto::INT8: return DType::I8;
  case TensorProto::UINT8: return DType::U8;
  case TensorProto::BOOL: return DType::Bool;
  default: return std::nullopt;
  }
}

int toOnnx(DType t) {
  switch (t) {
  case DType::F32: return TensorProto::FLOAT;
  case DType::F64: return TensorProto::DOUBLE;
  case DType::F16: return TensorProto::FLOAT16;
  case DType::BF16: return TensorProto::BFLOAT16;
  case DType::I64: return TensorProto::INT64;
  case DType::I32: return TensorProto::INT32;
  case DType::I16: return TensorProto::INT16;
  case DType::I8: return TensorProto::INT8;
  case DType::U8: return TensorProto::UINT8;
  case DType::Bool: return TensorProto::BOOL;
  }
  return TensorProto::UNDEFINED;
}

// Narrows each int32_data entry to the element's width (the field stores
// int8/int16/uint8/bool/float16/bfloat16 values one per int32).
template <typename Elem>
void packInt32(const TensorProto &p, std::vector<uint8_t> &out) {
  for (int32_t v : p.int32_data()) {
    Elem e = static_cast<Elem>(v);
    const uint8_t *b = reinterpret_cast<const uint8_t *>(&e);
    out.insert(out.end(), b, b + sizeof(Elem));
  }
}

template <typename Field>
void packField(const Field &f, std::vector<uint8_t> &out) {
  const uint8_t *b = reinterpret_cast<const uint8_t *>(f.data());
  out.assign(b, b + f.size() * sizeof(*f.data()));
}
} // namespace

namespace {
// The bytes an external-data reference names, confined to `dir` (the
// model's folder), as the importer confines them.
std::string readExternal(const TensorProto &p, const std::string &path,
                         const std::string &dir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &kv : p.external_data()) {
    try {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = std::stoll(kv.value());
      else if (kv.key() == "length")
        length = std::stoll(kv.value());
    } catch (const std::exception &) {
      throw Error(path + ": bad external-data " + kv.key() + " '" +
                  kv.value() + "'");
    }
  }
  // The importer's rule (oflow_rt/ConfinedFile.h): inside the model's
  // folder, no link out of it. Only the tensor's range: a model's
  // initializers share one data file, and reading it whole for each of them
  // made GPT-2 small (208 tensors, 510 MB) start in minutes.
  if (offset < 0 || length < -1)
    throw Error(path + ": external data offset " + std::to_string(offset) +
                " or length " + std::to_string(length) + " is negative");
  std::string bytes, why;
  if (!readConfinedRange(dir, location, static_cast<uint64_t>(offset),
                         length >= 0 ? std::optional<uint64_t>(length) : std::nullopt,
                         bytes, why))
    throw Error(path + ": external data location '" + location + "' " + why);
  return bytes;
}
} // namespace

HostTensor readTensorPb(const std::string &path) {
  std::string bytes = readFile(path);
  TensorProto p;
  if (!p.ParseFromString(bytes))
    throw Error(path + ": not a valid ONNX TensorProto");
  return decodeTensorProto(p, path);
}

HostTensor decodeTensorProto(const TensorProto &p, const std::string &path,
                             const std::string &externalDir) {
  if (p.data_location() == TensorProto::EXTERNAL && externalDir.empty())
    throw Error(path + ": tensor data in an external file is not supported");
  auto type = fromOnnx(p.data_type());
  if (!type)
    throw Error(path + ": unsupported tensor element type " +
                TensorProto::DataType_Name(
                    static_cast<TensorProto::DataType>(p.data_type())));
  HostTensor t;
  t.dtype = *type;
  for (int64_t d : p.dims()) {
    if (d < 0)
      throw Error(path + ": negative dimension");
    t.dims.push_back(d);
  }
  if (p.data_location() == TensorProto::EXTERNAL) {
    std::string bytes = readExternal(p, path, externalDir);
    t.data.assign(bytes.begin(), bytes.end());
  } else if (p.has_raw_data()) {
    t.data.assign(p.raw_data().begin(), p.raw_data().end());
  } else {
    switch (t.dtype) {
    case DType::F32: packField(p.float_data(), t.data); break;
    case DType::F64: packField(p.double_data(), t.data); break;
    case DType::I64: packField(p.int64_data(), t.data); break;
    case DType::I32: packField(p.int32_data(), t.data); break;
    case DType::I16: packInt32<int16_t>(p, t.data); break;
    case DType::I8: packInt32<int8_t>(p, t.data); break;
    case DType::U8: case DType::Bool: packInt32<uint8_t>(p, t.data); break;
    case DType::F16: case DType::BF16: packInt32<uint16_t>(p, t.data); break;
    }
  }
  // In long double: dims from a corrupt file may overflow any integer.
  long double want = dtypeSize(t.dtype);
  for (int64_t d : t.dims)
    want *= static_cast<long double>(d);
  if (want > 1e18L || static_cast<long double>(t.data.size()) != want)
    throw Error(path + ": shape " + shapeText(t.dims) + " of " +
                dtypeName(t.dtype) + " needs " +
                (want > 1e18L ? std::string("over 10^18")
                              : std::to_string(static_cast<uint64_t>(want))) +
                " bytes of data, the file has " +
                std::to_string(t.data.size()));
  return t;
}

void writeTensorPb(const std::string &path, const std::string &name,
                   const HostTensor &t) {
  TensorProto p;
  p.set_name(name);
  p.set_data_type(toOnnx(t.dtype));
  for (int64_t d : t.dims)
    p.add_dims(d);
  p.set_raw_data(t.data.data(), t.data.size());
  std::string bytes;
  if (!p.SerializeToString(&bytes))
    throw Error(path + ": cannot serialize tensor " + name);
  writeFileAtomic(path, bytes.data(), bytes.size());
}

} // namespace oflow_rt
