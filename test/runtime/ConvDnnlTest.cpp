//===- ConvDnnlTest.cpp - oneDNN convolutions against their definition ---===//
//
// oflow_rt_conv2d_{fwd,fwd_bias,bwd_data,bwd_filter} on geometries the stock
// vision models use (groups, depthwise, strides, dilations, asymmetric pads,
// pads that leave input rows unread), against direct loops in double.
//
//===----------------------------------------------------------------------===//
#include "oflow_rt/abi.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

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

std::vector<float> values(int64_t count, int salt) {
  std::vector<float> v(count);
  for (int64_t i = 0; i < count; ++i)
    v[i] = static_cast<float>((i * 37 + salt * 11) % 23 - 11) / 8.0f;
  return v;
}

/// Calls `visit(n, mo, oy, ox, ci, ky, kx, iy, ix)` for every product of
/// the convolution that reads a real (not padded) input element.
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

void expectNear(const std::vector<double> &want, const std::vector<float> &got,
                const std::string &what) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(want[i], got[i], 1e-4 * (1 + std::fabs(want[i])))
        << what << " at element " << i;
}

class ConvDnnl : public ::testing::TestWithParam<Geometry> {};

TEST_P(ConvDnnl, MatchesTheDefinition) {
  const Geometry g = GetParam();
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
  std::vector<float> x = values(g.n * g.c * g.h * g.w, 1);
  std::vector<float> w = values(g.m * cg * g.kh * g.kw, 2);
  std::vector<float> bias = values(g.m, 3);
  std::vector<float> dy = values(g.n * g.m * oh * ow, 4);

  std::vector<double> y(dy.size()), yb(dy.size()), dx(x.size()), dw(w.size());
  forEachProduct(g, [&](int64_t n, int64_t mo, int64_t oy, int64_t ox,
                        int64_t c, int64_t ci, int64_t ky, int64_t kx,
                        int64_t iy, int64_t ix) {
    double xv = x[xi(n, c, iy, ix)], wv = w[wi(mo, ci, ky, kx)],
           dyv = dy[yi(n, mo, oy, ox)];
    y[yi(n, mo, oy, ox)] += xv * wv;
    dx[xi(n, c, iy, ix)] += dyv * wv;
    dw[wi(mo, ci, ky, kx)] += dyv * xv;
  });
  for (size_t i = 0; i < y.size(); ++i)
    yb[i] = y[i] + bias[(i / (oh * ow)) % g.m];

  // Results land over garbage: every call overwrites its output.
  std::vector<float> gotY(y.size(), NAN), gotYb(y.size(), NAN),
      gotDx(x.size(), NAN), gotDw(w.size(), NAN);
#define GEOMETRY                                                               \
  g.n, g.c, g.h, g.w, g.m, g.kh, g.kw, oh, ow, g.sh, g.sw, g.dh, g.dw, g.pt,   \
      g.pl, g.pb, g.pr, g.groups
  oflow_rt_conv2d_fwd(GEOMETRY, x.data(), w.data(), gotY.data());
  oflow_rt_conv2d_fwd_bias(GEOMETRY, x.data(), w.data(), bias.data(),
                           gotYb.data());
  oflow_rt_conv2d_bwd_data(GEOMETRY, dy.data(), w.data(), gotDx.data());
  oflow_rt_conv2d_bwd_filter(GEOMETRY, dy.data(), x.data(), gotDw.data());
  // The cached primitives again, on the same buffers.
  oflow_rt_conv2d_fwd(GEOMETRY, x.data(), w.data(), gotY.data());
#undef GEOMETRY
  expectNear(y, gotY, g.name() + ": fwd");
  expectNear(yb, gotYb, g.name() + ": fwd_bias");
  expectNear(dx, gotDx, g.name() + ": bwd_data");
  expectNear(dw, gotDw, g.name() + ": bwd_filter");
}

TEST(ConvDnnlErrors, AGeometryOneDnnRejectsEndsTheRunNamingIt) {
  // 4 input channels in 3 groups: no primitive exists.
  std::vector<float> x(4 * 5 * 5), w(3 * 1 * 3 * 3), y(3 * 3 * 3);
  EXPECT_DEATH(oflow_rt_conv2d_fwd(1, 4, 5, 5, 3, 3, 3, 3, 3, 1, 1, 1, 1, 0,
                                   0, 0, 0, 3, x.data(), w.data(), y.data()),
               "oflow_rt_conv2d_fwd \\(n=1 c=4 h=5 w=5 m=3 .* groups=3\\)");
}

// n c h w m kh kw sh sw dh dw pt pl pb pr groups
INSTANTIATE_TEST_SUITE_P(
    Geometries, ConvDnnl,
    ::testing::Values(
        Geometry{2, 3, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   // same
        Geometry{2, 3, 16, 16, 4, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1}, // stem
        Geometry{2, 8, 8, 8, 16, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},  // 1x1/2
        Geometry{2, 4, 8, 7, 6, 3, 3, 2, 2, 1, 2, 1, 0, 1, 2, 2},   // groups
        Geometry{1, 6, 7, 7, 6, 3, 3, 2, 1, 1, 1, 1, 1, 0, 1, 6},   // depthwise
        Geometry{2, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},   // dilated
        Geometry{1, 2, 8, 8, 3, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0, 1})); // rows unread

} // namespace
