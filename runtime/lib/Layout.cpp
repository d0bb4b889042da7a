//===- Layout.cpp - which block of a global tensor a rank holds -----------===//
#include "oflow_rt/Layout.h"
#include "oflow_rt/DType.h"

#include <algorithm>
#include <cstring>

namespace oflow_rt {

int64_t Block::elements() const {
  int64_t n = 1;
  for (int64_t s : size)
    n *= s;
  return n;
}

Block wholeBlock(const std::vector<int64_t> &dims) {
  return Block{std::vector<int64_t>(dims.size(), 0), dims};
}

std::vector<int64_t> meshCoordsOf(int64_t rank,
                                  const std::vector<int64_t> &mesh) {
  std::vector<int64_t> c(mesh.size());
  for (size_t a = mesh.size(); a-- > 0;) {
    c[a] = rank % mesh[a];
    rank /= mesh[a];
  }
  return c;
}

Block localBlock(const std::vector<int64_t> &dims, const Sbp &sbp,
                 const std::vector<int64_t> &mesh,
                 const std::vector<int64_t> &coords) {
  Block b = wholeBlock(dims);
  if (sbp.empty())
    return b;
  // Mixed radix: walking the mesh axes in order, each splitting axis makes
  // the piece index one digit more significant than the next.
  std::vector<int64_t> piece(dims.size(), 0), pieces(dims.size(), 1);
  for (size_t a = 0; a < sbp.size() && a < mesh.size(); ++a) {
    if (sbp[a] < 0)
      continue;
    piece[sbp[a]] = piece[sbp[a]] * mesh[a] + coords[a];
    pieces[sbp[a]] *= mesh[a];
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    b.size[d] = dims[d] / pieces[d];
    b.offset[d] = piece[d] * b.size[d];
  }
  return b;
}

std::vector<int64_t> localDims(const std::vector<int64_t> &dims, const Sbp &sbp,
                               const std::vector<int64_t> &mesh) {
  return localBlock(dims, sbp, mesh, std::vector<int64_t>(mesh.size(), 0)).size;
}

bool isReplica(const Sbp &sbp, const std::vector<int64_t> &coords) {
  for (size_t a = 0; a < coords.size(); ++a)
    if ((sbp.empty() || sbp[a] < 0) && coords[a] != 0)
      return true;
  return false;
}

int64_t copyOverlap(int64_t elemSize, const uint8_t *src, const Block &srcBlock,
                    uint8_t *dst, const Block &dstBlock) {
  size_t rank = srcBlock.size.size();
  std::vector<int64_t> lo(rank), hi(rank);
  for (size_t d = 0; d < rank; ++d) {
    lo[d] = std::max(srcBlock.offset[d], dstBlock.offset[d]);
    hi[d] = std::min(srcBlock.offset[d] + srcBlock.size[d],
                     dstBlock.offset[d] + dstBlock.size[d]);
    if (hi[d] <= lo[d])
      return 0;
  }
  if (rank == 0) {
    std::memcpy(dst, src, elemSize);
    return 1;
  }
  // Row-major strides (in elements) of both buffers.
  std::vector<int64_t> sStride(rank, 1), dStride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) {
    sStride[d] = sStride[d + 1] * srcBlock.size[d + 1];
    dStride[d] = dStride[d + 1] * dstBlock.size[d + 1];
  }
  // Copy runs along the last dim; an odometer walks the others.
  int64_t run = (hi[rank - 1] - lo[rank - 1]) * elemSize;
  std::vector<int64_t> idx(lo);
  int64_t copied = 0;
  while (true) {
    int64_t s = 0, t = 0;
    for (size_t d = 0; d < rank; ++d) {
      s += (idx[d] - srcBlock.offset[d]) * sStride[d];
      t += (idx[d] - dstBlock.offset[d]) * dStride[d];
    }
    std::memcpy(dst + t * elemSize, src + s * elemSize, run);
    copied += hi[rank - 1] - lo[rank - 1];
    size_t d = rank - 1;
    while (d-- > 0) {
      if (++idx[d] < hi[d])
        break;
      idx[d] = lo[d];
    }
    if (d == static_cast<size_t>(-1))
      return copied;
  }
}

std::string sbpText(const Sbp &sbp) {
  std::string s;
  for (int e : sbp)
    s += (s.empty() ? "" : ",") + (e < 0 ? std::string("B") : "S" + std::to_string(e));
  return s.empty() ? "B" : s;
}

namespace {
/// Calls `row(start)` for each row (along the last dim) of `block` of a
/// tensor of `dims`, in row-major order: `start` is the row's first
/// element's row-major index in the whole tensor.
template <typename F>
void forEachRow(const std::vector<int64_t> &dims, const Block &block, F row) {
  size_t rank = dims.size();
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;)
    stride[d] = stride[d + 1] * dims[d + 1];
  std::vector<int64_t> idx(rank, 0);
  while (true) {
    int64_t start = 0;
    for (size_t d = 0; d < rank; ++d)
      start += (block.offset[d] + idx[d]) * stride[d];
    row(start);
    size_t d = rank - 1;
    while (d-- > 0) {
      if (++idx[d] < block.size[d])
        break;
      idx[d] = 0;
    }
    if (d == static_cast<size_t>(-1))
      return;
  }
}
} // namespace

int64_t blockElementsBelow(const std::vector<int64_t> &dims, const Block &block,
                           int64_t limit) {
  if (numElements(dims) <= limit)
    return block.elements();
  if (dims.empty() || block.elements() == 0)
    return 0;
  int64_t count = 0;
  forEachRow(dims, block, [&](int64_t start) {
    count += std::clamp<int64_t>(limit - start, 0, block.size.back());
  });
  return count;
}

int64_t copyOverlapViews(int64_t elemSize, const uint8_t *src,
                         const std::vector<int64_t> &srcDims, const Block &srcBlock,
                         uint8_t *dst, const std::vector<int64_t> &dstDims,
                         const Block &dstBlock, int64_t limit) {
  if (srcDims == dstDims && numElements(srcDims) <= limit)
    return copyOverlap(elemSize, src, srcBlock, dst, dstBlock);
  if (srcDims.empty() || dstDims.empty() || srcBlock.elements() == 0 ||
      dstBlock.elements() == 0)
    return 0;
  size_t dRank = dstDims.size();
  // Row-major strides of the destination's global view and of its block.
  std::vector<int64_t> dGlobal(dRank, 1), dLocal(dRank, 1);
  for (size_t d = dRank - 1; d-- > 0;) {
    dGlobal[d] = dGlobal[d + 1] * dstDims[d + 1];
    dLocal[d] = dLocal[d + 1] * dstBlock.size[d + 1];
  }
  int64_t dLast = dstDims.back();
  int64_t copied = 0, at = 0; // at: elements of srcBlock passed
  int64_t run = srcBlock.size.back();
  // Each row of the source block: global indices [flat, flat + run).
  forEachRow(srcDims, srcBlock, [&](int64_t flat) {
    for (int64_t done = 0; done < run;) {
      int64_t f = flat + done;
      if (f >= limit)
        break; // padding, to the end of this row and every later one
      // The destination coordinates of f; the rest of its destination row
      // is the most one step may take.
      int64_t t = 0;
      bool inside = true;
      int64_t rest = f;
      for (size_t d = 0; d + 1 < dRank; ++d) {
        int64_t c = rest / dGlobal[d];
        rest %= dGlobal[d];
        if (c < dstBlock.offset[d] || c >= dstBlock.offset[d] + dstBlock.size[d])
          inside = false;
        t += (c - dstBlock.offset[d]) * dLocal[d];
      }
      int64_t c = f % dLast, lo = dstBlock.offset.back(), hi = lo + dstBlock.size.back();
      int64_t step;
      if (!inside || c >= hi) {
        step = dLast - c; // to the next destination row
      } else if (c < lo) {
        step = lo - c;
      } else {
        step = std::min({run - done, hi - c, limit - f});
        std::memcpy(dst + (t + c - lo) * elemSize, src + (at + done) * elemSize,
                    step * elemSize);
        copied += step;
      }
      done += std::min(step, run - done);
    }
    at += run;
  });
  return copied;
}

} // namespace oflow_rt
