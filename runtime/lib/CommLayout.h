//===- CommLayout.h - abi.h's collective layouts over native ones -*- C++ -*-===//
//
// abi.h's all_gather / reduce_scatter / all_to_all layouts differ from what
// NCCL (like MPI) does natively: NCCL gathers and scatters whole per-member
// blocks, [member][...]. These pure functions say which strided copies turn
// one into the other; the CUDA collectives run them as cudaMemcpy2DAsync,
// the MPI collectives on the host (applyCopies), and the tests check them
// against abi.h's formulas.
// No CUDA here.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_COMMLAYOUT_H
#define OFLOW_RT_LIB_COMMLAYOUT_H

#include <cstdint>
#include <vector>

namespace oflow_rt {

/// `height` rows of `width` bytes: row r goes from src + srcOffset +
/// r * srcPitch to dst + dstOffset + r * dstPitch (cudaMemcpy2D's shape).
struct Copy2D {
  int64_t srcOffset, srcPitch, dstOffset, dstPitch, width, height;
  bool operator==(const Copy2D &o) const {
    return srcOffset == o.srcOffset && srcPitch == o.srcPitch &&
           dstOffset == o.dstOffset && dstPitch == o.dstPitch &&
           width == o.width && height == o.height;
  }
};

/// all_gather: NCCL's [member][outer][chunk] -> abi.h's [outer][member][chunk]
/// (chunkBytes = chunk * element size; n members).
std::vector<Copy2D> allGatherUnpack(int64_t n, int64_t outer, int64_t chunkBytes);
/// reduce_scatter: abi.h's [outer][member][chunk] -> NCCL's [member][outer][chunk].
std::vector<Copy2D> reduceScatterPack(int64_t n, int64_t outer, int64_t chunkBytes);
/// all_to_all over dims d[5] with scatter dim s (1 or 3): abi.h's input ->
/// the send buffer [member q][chunk] (chunk = in's shape with d_s / n),
/// and the receive buffer [member p][chunk] -> abi.h's output.
std::vector<Copy2D> allToAllPack(const int64_t d[5], int s, int64_t n, int64_t elemBytes);
std::vector<Copy2D> allToAllUnpack(const int64_t d[5], int s, int64_t n, int64_t elemBytes);

/// Runs copies on host memory (tests; the CPU reference).
void applyCopies(const std::vector<Copy2D> &copies, const uint8_t *src, uint8_t *dst);

} // namespace oflow_rt

#endif
