//===- oflow_rt/InitRecipe.h - weights drawn at start ------------*- C++ -*-===//
//
// A variable whose manifest line carries `init=KIND:a:b:seed` (a weight of
// native IR with an `#oflow.init` recipe) has no stored bytes: each rank
// draws its own piece when the executable starts. Element i (the global
// row-major index) of the variable named N is a function of (seed, N, i)
// alone, so every mesh and plan starts from the values of one device:
// Philox4x32-10 (Salmon et al., SC'11) with key (seed, FNV-1a-32 of N) and
// counter (i mod 2^32, i div 2^32, attempt, 0). Words w0..w3 of a draw:
//   uniform(lo, hi):   lo + (hi - lo) * u,  u = (w0:w1 >> 11) * 2^-53
//   normal(mean, std): mean + std * sqrt(-2 ln u1) cos(2 pi u2), with
//                      u1 = ((w0:w1 >> 11) + 1) * 2^-53, u2 = (w2:w3 >> 11) * 2^-53
//   truncated_normal:  normal draws at attempt 0, 1, ... until within
//                      mean +- 2 std (64 attempts at most, then mean)
//   zeros, ones, constant(c)
// in double, rounded once to the variable's f32 or f64. The NumPy
// reference in test/e2e/init_recipes.py computes the same bits.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_INITRECIPE_H
#define OFLOW_RT_INITRECIPE_H

#include "oflow_rt/DType.h"
#include "oflow_rt/Layout.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace oflow_rt {

struct InitRecipe {
  std::string kind; // zeros | ones | constant | normal | uniform | truncated_normal
  double a = 0, b = 0;
  uint32_t seed = 0;
};

/// "normal:0:0.02:7" -> the recipe; nullopt when malformed (unknown kind,
/// a standard deviation that is not positive, low not below high, a seed
/// past 32 bits).
std::optional<InitRecipe> parseInitRecipe(const std::string &text);

uint32_t fnv1a32(const std::string &text);
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter,
                                      std::array<uint32_t, 2> key);
/// Element `index` of the variable whose name hashes to `nameKey`.
double drawInitial(const InitRecipe &r, uint32_t nameKey, uint64_t index);
/// Fills `local`, the block `block` of a tensor of global `dims` (f32 or
/// f64), with its drawn values.
void fillInitial(const InitRecipe &r, const std::string &name, DType dtype,
                 const std::vector<int64_t> &dims, const Block &block,
                 uint8_t *local);

} // namespace oflow_rt

#endif
