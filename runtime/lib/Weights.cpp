//===- Weights.cpp - initial values from an ONNX model ---------------------===//
#include "oflow_rt/Weights.h"
#include "oflow_rt/Distributed.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/FileUtil.h"
#include "oflow_rt/TensorPb.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <map>

namespace oflow_rt {

int loadWeights(const std::string &modelPath, const Manifest &m,
                uint8_t *state, bool onlyUninitialized) {
  std::string bytes = readFile(modelPath);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    throw Error(modelPath + ": not a valid ONNX model");
  size_t slash = modelPath.rfind('/');
  std::string dir = slash == std::string::npos ? "." : modelPath.substr(0, slash);
  if (dir.empty())
    dir = "/";

  std::map<std::string, const onnx::TensorProto *> inits;
  for (const onnx::TensorProto &t : model.graph().initializer())
    inits[t.name()] = &t;
  int filled = 0;
  for (const VarRecord &v : m.vars) {
    if (v.kind == VarKind::Optimizer || (onlyUninitialized && v.initOffset >= 0))
      continue;
    auto it = inits.find(v.name);
    if (it == inits.end())
      throw Error(modelPath + ": no initializer '" + v.name +
                  "' (a variable of this program)");
    std::string what = modelPath + ": initializer '" + v.name + "'";
    HostTensor t = decodeTensorProto(*it->second, what, dir);
    if (t.dtype != v.dtype || t.dims != v.shape())
      throw Error(what + " is " + dtypeName(t.dtype) + shapeText(t.dims) +
                  ", the program's variable is " + dtypeName(v.dtype) +
                  shapeText(v.shape()));
    if (!t.data.empty()) { // the file holds the global value: take our piece
      t.data.resize(v.bytes(), 0); // a flat store's padding: zeros
      copyMyPiece(v, t.data.data(), state + v.offset);
    }
    ++filled;
  }
  return filled;
}

} // namespace oflow_rt
