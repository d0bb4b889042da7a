//===- oflow_rt/Weights.h - initial values from an ONNX model ----*- C++ -*-===//
//
// For models too large to embed: the program's param/buffer/constant
// variables are read at start-up from the initializers of an ONNX model (its
// external-data files included), each checked for dtype, shape and size.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_WEIGHTS_H
#define OFLOW_RT_WEIGHTS_H

#include "oflow_rt/Manifest.h"

#include <cstdint>
#include <string>

namespace oflow_rt {

/// Fills every param/buffer/constant variable from `modelPath`; with
/// `onlyUninitialized`, only those the program does not embed
/// (init_offset -1). A variable the model lacks is an Error naming it.
/// Returns how many variables were filled.
int loadWeights(const std::string &modelPath, const Manifest &m,
                uint8_t *state, bool onlyUninitialized);

} // namespace oflow_rt

#endif
