//===- oflow_rt/Manifest.h - the program's self-description -----*- C++ -*-===//
//
// Parses the text manifest of abi.h into tables. Every inconsistency (an
// offset past its buffer, a misaligned offset, a duplicate name, an unknown
// record) is an Error naming the line: a manifest is generated, so these are
// compiler bugs, caught before any buffer is touched.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_MANIFEST_H
#define OFLOW_RT_MANIFEST_H

#include "oflow_rt/DType.h"
#include "oflow_rt/InitRecipe.h"
#include "oflow_rt/Layout.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oflow_rt {

/// %XX escaping of names (abi.h): bytes outside [A-Za-z0-9._:/-].
std::string escapeName(const std::string &name);
/// The inverse; nullopt on a malformed escape.
std::optional<std::string> unescapeName(const std::string &text);

struct TensorSlot {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  int64_t offset = 0; // in its buffer (state or io)
  /// The `sbp=` token (empty: broadcast on every mesh axis) and the dims of
  /// this rank's piece, which is what the buffer holds at `offset`.
  Sbp sbp;
  std::vector<int64_t> localDims;
  /// The `view=` token: the shape of a tensor stored flat (its row-major
  /// elements first in `dims`, which the mesh splits, then zeros where
  /// `dims` has more); empty otherwise.
  std::vector<int64_t> view;

  /// The shape files, checkpoints' tables and users see.
  const std::vector<int64_t> &shape() const { return view.empty() ? dims : view; }
  /// The bytes of that shape (the first of a global buffer of `dims`).
  int64_t shapeBytes() const { return numElements(shape()) * dtypeSize(dtype); }

  /// The global tensor's bytes (what files and gathered outputs hold).
  int64_t bytes() const { return numElements(dims) * dtypeSize(dtype); }
  /// The local piece's bytes (what the buffer holds).
  int64_t localBytes() const { return numElements(localDims) * dtypeSize(dtype); }
  bool sharded() const { return localDims != dims; }
};

enum class VarKind { Param, Buffer, Optimizer, Constant };
const char *varKindName(VarKind k);

struct VarRecord : TensorSlot {
  VarKind kind = VarKind::Param;
  int64_t initOffset = -1; // into oflow_state_init; -1 = zeros
  /// `init=KIND:a:b:seed`: drawn at start instead (InitRecipe.h).
  std::optional<InitRecipe> recipe;
};

struct InputRecord : TensorSlot {
  /// synth: normal (floats) or int:<lo>:<hi>[:ignore=<v>|:unchecked]
  /// (integers in [lo, hi); data files are checked against the range, where
  /// `ignore` is one more allowed value (a loss's ignore_index) and
  /// `unchecked` means no consumer bounds the values).
  bool synthNormal = true;
  int64_t lo = 0, hi = 0;
  bool checked = true;
  std::optional<int64_t> ignore;
};

struct OutputRecord : TensorSlot {
  std::string entry; // train | grads | infer
};

struct ScalarRecord {
  std::string name;
  DType dtype = DType::F32;
  int64_t offset = 0;
  std::optional<double> defaultValue;
};

struct Manifest {
  int version = 0;
  std::string mode; // train | infer
  std::string model;
  int64_t batch = 0;
  int64_t stateBytes = 0, ioBytes = 0, arenaBytes = 0;
  std::vector<std::string> entries;
  std::vector<VarRecord> vars;
  std::vector<InputRecord> inputs;
  std::vector<OutputRecord> outputs;
  std::vector<TensorSlot> grads;
  std::vector<ScalarRecord> scalars;
  std::vector<std::string> info; // optimizer/schedule/plan lines, verbatim
  std::string weightsFile;       // `weights` record; empty when absent
  std::vector<int64_t> mesh;     // `mesh` record; empty: one device

  /// Devices of the mesh (1 without one).
  int64_t meshSize() const;
  /// "4 (2x2)" / "2" for messages.
  std::string meshText() const;

  bool hasEntry(const std::string &e) const;
  const InputRecord *findInput(const std::string &name) const;
  const ScalarRecord *findScalar(const std::string &name) const;
  const OutputRecord *findOutput(const std::string &entry,
                                 const std::string &name) const;
  /// Outputs of one entry, in manifest order.
  std::vector<const OutputRecord *> outputsOf(const std::string &entry) const;
  /// "x, y, label" for error messages.
  std::string inputNames() const;
  /// The compiled learning rate: the `lr` scalar's default, else the `lr=`
  /// of the `optimizer` line (where oflow-compile writes it).
  std::optional<double> defaultLearningRate() const;
  /// The train/grads entry's `loss` output. The entries share one io layout,
  /// so a grads entry without its own `loss` record uses the train entry's.
  const OutputRecord *lossOutput(const std::string &entry) const;
};

/// Parses and checks; throws Error("manifest line N: ..."). Layouts are
/// checked too: sbp= needs a mesh, one entry per mesh axis, split axes in
/// range and dims divisible by the product of their splitting mesh axes
/// (P, partial values, never reaches the runtime).
Manifest parseManifest(const std::string &text);

} // namespace oflow_rt

#endif
