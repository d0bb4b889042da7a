//===- oflow_rt/TensorPb.h - ONNX TensorProto (.pb) files -------*- C++ -*-===//
//
// The format of ONNX's node tests (test_data_set_N/input_K.pb). Reads raw_data
// and the typed fields; writes raw_data.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_TENSORPB_H
#define OFLOW_RT_TENSORPB_H

#include "oflow_rt/Tensor.h"

#include <string>

namespace onnx {
class TensorProto;
}

namespace oflow_rt {

HostTensor readTensorPb(const std::string &path);
/// The tensor a TensorProto holds. `what` names it in errors; external data
/// is read from files inside `externalDir` (empty: external data is an
/// error), with offset and length checked against the file.
HostTensor decodeTensorProto(const onnx::TensorProto &p, const std::string &what,
                             const std::string &externalDir = "");
void writeTensorPb(const std::string &path, const std::string &name,
                   const HostTensor &t);

} // namespace oflow_rt

#endif
