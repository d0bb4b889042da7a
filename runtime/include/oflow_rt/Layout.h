//===- oflow_rt/Layout.h - which block of a global tensor a rank holds -*- C++ -*-===//
//
// The sbp= rule of abi.h as arithmetic, with no MPI: given a tensor's global
// dims, its sbp entries, the mesh shape and a rank's mesh coordinates, the
// per-dim [offset, offset + size) block the rank holds; and a strided copy of
// the overlap of two blocks, which serves global->local (initial values,
// data), local->global (gathered outputs) and shard->shard (resharding a
// checkpoint on load) alike.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LAYOUT_H
#define OFLOW_RT_LAYOUT_H

#include <cstdint>
#include <string>
#include <vector>

namespace oflow_rt {

/// One entry per mesh axis: the tensor axis it splits, or -1 (broadcast).
using Sbp = std::vector<int>;

/// A box of a global tensor: per dim, where it starts and how long it is.
struct Block {
  std::vector<int64_t> offset, size;
  int64_t elements() const;
  bool operator==(const Block &o) const {
    return offset == o.offset && size == o.size;
  }
};

/// The whole tensor.
Block wholeBlock(const std::vector<int64_t> &dims);

/// Row-major coordinates of `rank` on `mesh` (the last axis fastest).
std::vector<int64_t> meshCoordsOf(int64_t rank, const std::vector<int64_t> &mesh);

/// The block rank `coords` holds. Where several mesh axes split one tensor
/// axis, the piece index is mixed-radix in mesh-axis order. An empty `sbp`
/// (or empty mesh) means every entry B. Dims must divide (Manifest checks).
Block localBlock(const std::vector<int64_t> &dims, const Sbp &sbp,
                 const std::vector<int64_t> &mesh,
                 const std::vector<int64_t> &coords);

/// The local dims of every rank (equal on all ranks: dims divide evenly).
std::vector<int64_t> localDims(const std::vector<int64_t> &dims, const Sbp &sbp,
                               const std::vector<int64_t> &mesh);

/// True when this rank's piece duplicates a lower rank's: some broadcast
/// mesh axis where the coordinate is not 0 (a checkpoint skips it).
bool isReplica(const Sbp &sbp, const std::vector<int64_t> &coords);

/// Copies the elements in both `srcBlock` and `dstBlock` from `src` (a dense
/// row-major buffer holding exactly srcBlock) into `dst` (holding dstBlock).
/// Returns the number of elements copied (0 when the blocks are disjoint).
int64_t copyOverlap(int64_t elemSize, const uint8_t *src, const Block &srcBlock,
                    uint8_t *dst, const Block &dstBlock);

/// copyOverlap between blocks of two row-major views of one tensor's first
/// `limit` elements (e.g. a weight and the flat [devices, c] it is stored as
/// on a mesh, padded past the weight's elements): the elements at the same
/// row-major index of both, below `limit`. Returns the number copied.
int64_t copyOverlapViews(int64_t elemSize, const uint8_t *src,
                         const std::vector<int64_t> &srcDims, const Block &srcBlock,
                         uint8_t *dst, const std::vector<int64_t> &dstDims,
                         const Block &dstBlock, int64_t limit);

/// How many elements of `block` of a tensor of `dims` have a row-major index
/// below `limit`.
int64_t blockElementsBelow(const std::vector<int64_t> &dims, const Block &block,
                           int64_t limit);

/// "S0,B" for messages and checkpoint tables.
std::string sbpText(const Sbp &sbp);

} // namespace oflow_rt

#endif
