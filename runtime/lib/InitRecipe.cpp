//===- InitRecipe.cpp - weights drawn at start (see InitRecipe.h) ---------===//
//
// Compiled with -ffp-contract=off: the arithmetic must be the NumPy
// reference's, one rounding per operation.
//
//===----------------------------------------------------------------------===//
#include "oflow_rt/InitRecipe.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace oflow_rt {

std::optional<InitRecipe> parseInitRecipe(const std::string &text) {
  InitRecipe r;
  size_t c1 = text.find(':');
  size_t c2 = c1 == std::string::npos ? c1 : text.find(':', c1 + 1);
  size_t c3 = c2 == std::string::npos ? c2 : text.find(':', c2 + 1);
  if (c3 == std::string::npos || text.find(':', c3 + 1) != std::string::npos)
    return std::nullopt;
  r.kind = text.substr(0, c1);
  auto number = [&](size_t from, size_t to, double &out) {
    std::string w = text.substr(from, to - from);
    char *end = nullptr;
    out = std::strtod(w.c_str(), &end);
    return !w.empty() && !*end && std::isfinite(out);
  };
  std::string seed = text.substr(c3 + 1);
  char *end = nullptr;
  unsigned long long s = std::strtoull(seed.c_str(), &end, 10);
  if (!number(c1 + 1, c2, r.a) || !number(c2 + 1, c3, r.b) || seed.empty() ||
      *end || seed[0] == '-' || s > 0xffffffffull)
    return std::nullopt;
  r.seed = static_cast<uint32_t>(s);
  if (r.kind == "zeros" || r.kind == "ones" || r.kind == "constant")
    return r;
  if ((r.kind == "normal" || r.kind == "truncated_normal") && r.b > 0)
    return r;
  if (r.kind == "uniform" && r.a < r.b)
    return r;
  return std::nullopt;
}

uint32_t fnv1a32(const std::string &text) {
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> x,
                                      std::array<uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * x[0], p1 = uint64_t(0xCD9E8D57u) * x[2];
    x = {uint32_t(p1 >> 32) ^ x[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ x[3] ^ k[1],
         uint32_t(p0)};
    k = {k[0] + 0x9E3779B9u, k[1] + 0xBB67AE85u};
  }
  return x;
}

namespace {
/// A 53-bit fraction of [0, 1) from two words.
double fraction(uint32_t hi, uint32_t lo) {
  uint64_t bits = ((uint64_t(hi) << 32) | lo) >> 11;
  return static_cast<double>(bits) * 0x1p-53;
}

double normalDraw(uint32_t nameKey, uint32_t seed, uint64_t index, uint32_t attempt) {
  auto w = philox4x32_10({uint32_t(index), uint32_t(index >> 32), attempt, 0},
                         {seed, nameKey});
  double u1 = fraction(w[0], w[1]) + 0x1p-53; // (0, 1]
  double u2 = fraction(w[2], w[3]);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}
} // namespace

double drawInitial(const InitRecipe &r, uint32_t nameKey, uint64_t index) {
  if (r.kind == "zeros")
    return 0.0;
  if (r.kind == "ones")
    return 1.0;
  if (r.kind == "constant")
    return r.a;
  if (r.kind == "uniform") {
    auto w = philox4x32_10({uint32_t(index), uint32_t(index >> 32), 0, 0},
                           {r.seed, nameKey});
    return r.a + (r.b - r.a) * fraction(w[0], w[1]);
  }
  if (r.kind == "normal")
    return r.a + r.b * normalDraw(nameKey, r.seed, index, 0);
  // truncated_normal: within 2 standard deviations.
  for (uint32_t attempt = 0; attempt < 64; ++attempt) {
    double z = normalDraw(nameKey, r.seed, index, attempt);
    if (std::fabs(z) <= 2.0)
      return r.a + r.b * z;
  }
  return r.a;
}

void fillInitial(const InitRecipe &r, const std::string &name, DType dtype,
                 const std::vector<int64_t> &dims, const Block &block,
                 uint8_t *local) {
  uint32_t key = fnv1a32(name);
  size_t rank = dims.size();
  int64_t n = block.elements();
  std::vector<int64_t> at(rank, 0); // position within the block, row-major
  for (int64_t k = 0; k < n; ++k) {
    uint64_t index = 0;
    for (size_t d = 0; d < rank; ++d)
      index = index * dims[d] + block.offset[d] + at[d];
    double v = drawInitial(r, key, index);
    if (dtype == DType::F64) {
      std::memcpy(local + 8 * k, &v, 8);
    } else {
      float f = static_cast<float>(v);
      std::memcpy(local + 4 * k, &f, 4);
    }
    for (size_t d = rank; d-- > 0;) {
      if (++at[d] < block.size[d])
        break;
      at[d] = 0;
    }
  }
}

} // namespace oflow_rt
