//===- CommLayout.cpp - abi.h's collective layouts over native ones -------===//
#include "CommLayout.h"

#include <cstring>

namespace oflow_rt {

namespace {
// Rows that are back to back on both sides are one row.
Copy2D simplified(Copy2D c) {
  if (c.height > 1 && c.srcPitch == c.width && c.dstPitch == c.width) {
    c.width *= c.height;
    c.height = 1;
  }
  if (c.height == 1)
    c.srcPitch = c.dstPitch = c.width;
  return c;
}

std::vector<Copy2D> nonEmpty(std::vector<Copy2D> v) {
  std::vector<Copy2D> r;
  for (const Copy2D &c : v)
    if (c.width > 0 && c.height > 0)
      r.push_back(simplified(c));
  return r;
}
} // namespace

std::vector<Copy2D> allGatherUnpack(int64_t n, int64_t outer, int64_t chunkBytes) {
  std::vector<Copy2D> r;
  // Member p's block [outer][chunk] becomes column p of [outer][n][chunk].
  for (int64_t p = 0; p < n; ++p)
    r.push_back({p * outer * chunkBytes, chunkBytes, p * chunkBytes,
                 n * chunkBytes, chunkBytes, outer});
  return nonEmpty(r);
}

std::vector<Copy2D> reduceScatterPack(int64_t n, int64_t outer, int64_t chunkBytes) {
  std::vector<Copy2D> r;
  for (int64_t p = 0; p < n; ++p)
    r.push_back({p * chunkBytes, n * chunkBytes, p * outer * chunkBytes,
                 chunkBytes, chunkBytes, outer});
  return nonEmpty(r);
}

// With s = 1 the block for member q is, for each index of dim 0, the
// contiguous run of dims 1..4 from row q * d1/n; with s = 3 it is, for each
// index of dims 0..2, the run of dims 3..4 from q * d3/n. The output puts
// member p's chunk at p * d_g along the gather dim g = 4 - s: for s = 1
// (g = 3) each index of dims 0..2 holds n runs of d3*d4, for s = 3 (g = 1)
// each index of dim 0 holds n runs of d1*d2*(d3/n)*d4.
std::vector<Copy2D> allToAllPack(const int64_t d[5], int s, int64_t n,
                                 int64_t elem) {
  int64_t total = d[0] * d[1] * d[2] * d[3] * d[4] * elem;
  int64_t chunk = total / n;
  std::vector<Copy2D> r;
  for (int64_t q = 0; q < n; ++q) {
    if (s == 1) {
      int64_t run = d[1] / n * d[2] * d[3] * d[4] * elem;
      r.push_back({q * run, d[1] * d[2] * d[3] * d[4] * elem, q * chunk, run,
                   run, d[0]});
    } else {
      int64_t run = d[3] / n * d[4] * elem;
      r.push_back({q * run, d[3] * d[4] * elem, q * chunk, run, run,
                   d[0] * d[1] * d[2]});
    }
  }
  return nonEmpty(r);
}

std::vector<Copy2D> allToAllUnpack(const int64_t d[5], int s, int64_t n,
                                   int64_t elem) {
  int64_t total = d[0] * d[1] * d[2] * d[3] * d[4] * elem;
  int64_t chunk = total / n;
  std::vector<Copy2D> r;
  for (int64_t p = 0; p < n; ++p) {
    if (s == 1) {
      int64_t run = d[3] * d[4] * elem;
      r.push_back({p * chunk, run, p * run, n * run, run,
                   d[0] * (d[1] / n) * d[2]});
    } else {
      int64_t run = d[1] * d[2] * (d[3] / n) * d[4] * elem;
      r.push_back({p * chunk, run, p * run, n * run, run, d[0]});
    }
  }
  return nonEmpty(r);
}

void applyCopies(const std::vector<Copy2D> &copies, const uint8_t *src,
                 uint8_t *dst) {
  for (const Copy2D &c : copies)
    for (int64_t r = 0; r < c.height; ++r)
      std::memcpy(dst + c.dstOffset + r * c.dstPitch,
                  src + c.srcOffset + r * c.srcPitch, c.width);
}

} // namespace oflow_rt
