//===- ConvReference.h - abi.h's convolutions by definition -----*- C++ -*-===//
//
// The tests' oracle for oflow_rt_conv2d_* (oneDNN on the CPU, cuDNN on the
// GPU): a geometry in abi.h's terms, deterministic inputs, and the four
// results computed by direct loops in double.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_TEST_RUNTIME_CONVREFERENCE_H
#define OFLOW_TEST_RUNTIME_CONVREFERENCE_H

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace oflow_test::conv {

struct Geometry {
  int64_t n, c, h, w, m, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, groups;
  int64_t oh() const { return (h + pt + pb - (dh * (kh - 1) + 1)) / sh + 1; }
  int64_t ow() const { return (w + pl + pr - (dw * (kw - 1) + 1)) / sw + 1; }
  std::string name() const {
    return "n" + std::to_string(n) + " c" + std::to_string(c) + " " +
           std::to_string(h) + "x" + std::to_string(w) + " m" +
           std::to_string(m) + " k" + std::to_string(kh) + "x" +
           std::to_string(kw) + " s" + std::to_string(sh) + "," +
           std::to_string(sw) + " d" + std::to_string(dh) + "," +
           std::to_string(dw) + " pads " + std::to_string(pt) + "," +
           std::to_string(pl) + "," + std::to_string(pb) + "," +
           std::to_string(pr) + " g" + std::to_string(groups);
  }
};

/// gtest's name for a parameter ("n2 c3 9x9 m8 k3x3 ...", not its bytes).
inline void PrintTo(const Geometry &g, std::ostream *os) { *os << g.name(); }

inline std::vector<float> values(int64_t count, int salt) {
  std::vector<float> v(count);
  for (int64_t i = 0; i < count; ++i)
    v[i] = static_cast<float>((i * 37 + salt * 11) % 23 - 11) / 8.0f;
  return v;
}

/// Calls `visit(n, mo, oy, ox, c, ci, ky, kx, iy, ix)` for every product of
/// the convolution that reads a real (not padded) input element (c: the
/// input channel, ci: its index within the group's filter).
template <typename F>
void forEachProduct(const Geometry &g, F visit) {
  int64_t mg = g.m / g.groups, cg = g.c / g.groups;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t mo = 0; mo < g.m; ++mo)
      for (int64_t oy = 0; oy < g.oh(); ++oy)
        for (int64_t ox = 0; ox < g.ow(); ++ox)
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < g.kh; ++ky)
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                int64_t iy = oy * g.sh + ky * g.dh - g.pt;
                int64_t ix = ox * g.sw + kx * g.dw - g.pl;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w)
                  continue;
                visit(n, mo, oy, ox, (mo / mg) * cg + ci, ci, ky, kx, iy, ix);
              }
}

/// A geometry's inputs and, by definition, its results: y = conv(x, w),
/// yb = y + bias, dx and dw the gradients for dy.
struct Problem {
  std::vector<float> x, w, bias, dy;
  std::vector<double> y, yb, dx, dw;
};

inline Problem problemFor(const Geometry &g) {
  const int64_t oh = g.oh(), ow = g.ow(), cg = g.c / g.groups;
  auto xi = [&](int64_t n, int64_t c, int64_t y, int64_t x) {
    return ((n * g.c + c) * g.h + y) * g.w + x;
  };
  auto yi = [&](int64_t n, int64_t m, int64_t y, int64_t x) {
    return ((n * g.m + m) * oh + y) * ow + x;
  };
  auto wi = [&](int64_t m, int64_t c, int64_t y, int64_t x) {
    return ((m * cg + c) * g.kh + y) * g.kw + x;
  };
  Problem p;
  p.x = values(g.n * g.c * g.h * g.w, 1);
  p.w = values(g.m * cg * g.kh * g.kw, 2);
  p.bias = values(g.m, 3);
  p.dy = values(g.n * g.m * oh * ow, 4);
  p.y.assign(p.dy.size(), 0);
  p.dx.assign(p.x.size(), 0);
  p.dw.assign(p.w.size(), 0);
  forEachProduct(g, [&](int64_t n, int64_t mo, int64_t oy, int64_t ox, int64_t c,
                        int64_t ci, int64_t ky, int64_t kx, int64_t iy, int64_t ix) {
    double xv = p.x[xi(n, c, iy, ix)], wv = p.w[wi(mo, ci, ky, kx)],
           dyv = p.dy[yi(n, mo, oy, ox)];
    p.y[yi(n, mo, oy, ox)] += xv * wv;
    p.dx[xi(n, c, iy, ix)] += dyv * wv;
    p.dw[wi(mo, ci, ky, kx)] += dyv * xv;
  });
  p.yb = p.y;
  for (size_t i = 0; i < p.yb.size(); ++i)
    p.yb[i] += p.bias[(i / (oh * ow)) % g.m];
  return p;
}

inline void expectNear(const std::vector<double> &want, const std::vector<float> &got,
                       const std::string &what) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(want[i], got[i], 1e-4 * (1 + std::fabs(want[i])))
        << what << " at element " << i;
}

} // namespace oflow_test::conv

#endif
