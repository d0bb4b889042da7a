//===- oflow_rt/Feeder.h - one batch of every input per step ----*- C++ -*-===//
//
// Step k copies rows (k*B + i) mod N, i = 0..B-1, of each input's file into
// the input's io slot. With shuffling, the g-th sample (g = k*B + i) is row
// perm_e[g mod N] of epoch e = g / N, where perm_e is a Fisher-Yates
// permutation drawn from SplitMix64 keyed by (seed, e): the position depends
// only on the step counter, so a resumed run sees the data a straight run
// would. Inputs without a file get synthetic values keyed by (input, step).
// A rank of a mesh program writes only its piece (sbp=) of each global
// batch: rows o..o+b of the batch when its block along dim 0 is [o, o+b),
// sliced along the other split dims; synthetic values are those of the
// global batch, sliced, so every mesh trains on the same numbers.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_FEEDER_H
#define OFLOW_RT_FEEDER_H

#include "oflow_rt/Manifest.h"
#include "oflow_rt/Tensor.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace oflow_rt {

/// Checks a data file against its input: dtype (an int32 file feeds an i64
/// input and vice versa, converted; floats never feed integers), dims[1:],
/// at least `batch` rows. Returns the rows converted to the input's dtype.
/// Errors name the file. Integer values must lie in the input's range (the
/// rows of the table they index, the class count) or equal its ignore index;
/// inputs whose range is `unchecked` (no consumer bounds them) are not
/// checked.
HostTensor prepareInputData(const InputRecord &in, HostTensor file,
                            const std::string &path, int64_t batch);

/// The permutation of [0, n) for one epoch.
std::vector<int64_t> epochPermutation(uint64_t seed, uint64_t epoch, int64_t n);

class Feeder {
public:
  /// `files` maps input names to prepared data (prepareInputData); inputs
  /// not in it are synthesized.
  /// `coords`: this rank's mesh coordinates (empty: Distributed's).
  Feeder(const Manifest &m, std::map<std::string, HostTensor> files,
         std::optional<uint64_t> shuffleSeed,
         std::vector<int64_t> coords = {});

  /// Writes batch `step` of every input into `io`.
  void fill(int64_t step, uint8_t *io);
  /// Row of an n-row file that sample i of batch `step` reads, when a batch
  /// has `rows` samples (the input's dims[0], the manifest's batch).
  int64_t rowFor(int64_t step, int64_t i, int64_t rows, int64_t n);
  /// Names of the inputs that are synthesized.
  std::vector<std::string> synthesized() const;
  /// Rows of the smallest file (0 when every input is synthetic).
  int64_t minRows() const;

private:
  void synthesize(const InputRecord &in, int64_t step, uint8_t *dst) const;

  const Manifest &manifest;
  std::map<std::string, HostTensor> files;
  std::optional<uint64_t> seed;
  std::vector<int64_t> coords;
  // One cached permutation per (n, epoch): inputs of equal length share it.
  std::map<std::pair<int64_t, uint64_t>, std::vector<int64_t>> perms;
};

} // namespace oflow_rt

#endif
