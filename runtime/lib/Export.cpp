//===- Export.cpp - trained weights back into the ONNX model --------------===//
#include "oflow_rt/Export.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/FileUtil.h"

#include <onnx/onnx_pb.h>

#include <map>

namespace oflow_rt {

bool isExported(const VarRecord &v) {
  return v.kind == VarKind::Param || v.kind == VarKind::Buffer;
}

void exportOnnx(const std::string &path, const uint8_t *model,
                uint64_t modelSize, const Manifest &m, const uint8_t *state) {
  exportOnnx(path, model, modelSize, m,
             [&](const VarRecord &v) { return state + v.offset; });
}

void exportOnnx(const std::string &path, const uint8_t *model,
                uint64_t modelSize, const Manifest &m, const VarBytes &valueOf) {
  if (!model || modelSize == 0)
    throw Error("--export: this program embeds no ONNX model (it was not "
                "compiled from one), so there is nothing to export into");
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(model, static_cast<int>(modelSize)))
    throw Error("--export: the embedded ONNX model does not parse");

  std::map<std::string, const VarRecord *> wanted;
  for (const VarRecord &v : m.vars)
    if (isExported(v))
      wanted[v.name] = &v;
  for (onnx::TensorProto &init : *proto.mutable_graph()->mutable_initializer()) {
    auto it = wanted.find(init.name());
    if (it == wanted.end())
      continue;
    const VarRecord &v = *it->second;
    std::vector<int64_t> dims(init.dims().begin(), init.dims().end());
    if (dims != v.shape())
      throw Error("--export: initializer '" + v.name + "' has shape " +
                  shapeText(dims) + " in the model, " + shapeText(v.shape()) +
                  " in the program");
    // Typed fields and external-data references would shadow raw_data.
    init.clear_float_data();
    init.clear_double_data();
    init.clear_int32_data();
    init.clear_int64_data();
    init.clear_uint64_data();
    init.clear_external_data();
    init.clear_data_location();
    init.set_raw_data(valueOf(v), v.shapeBytes());
    wanted.erase(it);
  }
  if (!wanted.empty())
    throw Error("--export: variable '" + wanted.begin()->first +
                "' is not an initializer of the embedded model");
  std::string bytes;
  if (!proto.SerializeToString(&bytes))
    throw Error("--export: cannot serialize the model (over 2 GiB?)");
  writeFileAtomic(path, bytes.data(), bytes.size());
}

} // namespace oflow_rt
