//===- ConvDnnlTest.cpp - oneDNN convolutions against their definition ---===//
//
// oflow_rt_conv2d_{fwd,fwd_bias,bwd_data,bwd_filter} on geometries the stock
// vision models use (groups, depthwise, strides, dilations, asymmetric pads,
// pads that leave input rows unread), against direct loops in double.
//
//===----------------------------------------------------------------------===//
#include "ConvReference.h"
#include "oflow_rt/abi.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace oflow_test::conv;

class ConvDnnl : public ::testing::TestWithParam<Geometry> {};

TEST_P(ConvDnnl, MatchesTheDefinition) {
  const Geometry g = GetParam();
  const int64_t oh = g.oh(), ow = g.ow();
  Problem p = problemFor(g);
  const std::vector<float> &x = p.x, &w = p.w, &bias = p.bias, &dy = p.dy;
  const std::vector<double> &y = p.y, &yb = p.yb, &dx = p.dx, &dw = p.dw;

  // Results land over garbage: every call overwrites its output.
  std::vector<float> gotY(y.size(), NAN), gotYb(y.size(), NAN),
      gotDx(x.size(), NAN), gotDw(w.size(), NAN);
  // Without a workspace (0 bytes) oneDNN's scratchpads are the runtime's
  // own; with one (poisoned: a primitive must not read what it did not
  // write) they live in it.
  std::vector<float> workspace((8 << 20) / sizeof(float), NAN);
#define GEOMETRY                                                               \
  g.n, g.c, g.h, g.w, g.m, g.kh, g.kw, oh, ow, g.sh, g.sw, g.dh, g.dw, g.pt,   \
      g.pl, g.pb, g.pr, g.groups
  int64_t none = 0, bytes = int64_t(workspace.size() * sizeof(float));
  oflow_rt_conv2d_fwd(GEOMETRY, none, x.data(), w.data(), gotY.data(),
                      workspace.data());
  oflow_rt_conv2d_fwd_bias(GEOMETRY, bytes, x.data(), w.data(), bias.data(),
                           gotYb.data(), workspace.data());
  oflow_rt_conv2d_bwd_data(GEOMETRY, none, dy.data(), w.data(), gotDx.data(),
                           workspace.data());
  oflow_rt_conv2d_bwd_filter(GEOMETRY, bytes, dy.data(), x.data(),
                             gotDw.data(), workspace.data());
  expectNear(dw, gotDw, g.name() + ": bwd_filter (workspace)");
  std::fill(workspace.begin(), workspace.end(), NAN);
  oflow_rt_conv2d_bwd_filter(GEOMETRY, none, dy.data(), x.data(),
                             gotDw.data(), workspace.data());
  // The cached primitives again, on the same buffers.
  oflow_rt_conv2d_fwd(GEOMETRY, bytes, x.data(), w.data(), gotY.data(),
                      workspace.data());
#undef GEOMETRY
  expectNear(y, gotY, g.name() + ": fwd");
  expectNear(yb, gotYb, g.name() + ": fwd_bias");
  expectNear(dx, gotDx, g.name() + ": bwd_data");
  expectNear(dw, gotDw, g.name() + ": bwd_filter");
}

// The blocked copies (nChw16c, OIhw16i16o: channels that 16 divides) are
// buffers every primitive shares, grown to the largest seen: geometries of
// different sizes, called in turn, each small one after a large one and
// the other way round, still give their own results.
TEST(ConvDnnlShared, InterleavedGeometriesShareTheBlockedCopies) {
  const Geometry small{2, 16, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const Geometry large{4, 32, 16, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  Problem ps = problemFor(small), pl = problemFor(large);
  char workspace[1];
  auto forward = [&](const Geometry &g, const Problem &p) {
    std::vector<float> y(p.y.size(), NAN);
    oflow_rt_conv2d_fwd(g.n, g.c, g.h, g.w, g.m, g.kh, g.kw, g.oh(), g.ow(),
                        g.sh, g.sw, g.dh, g.dw, g.pt, g.pl, g.pb, g.pr,
                        g.groups, 0, p.x.data(), p.w.data(), y.data(),
                        workspace);
    expectNear(p.y, y, g.name() + ": fwd");
  };
  auto backward = [&](const Geometry &g, const Problem &p) {
    std::vector<float> dx(p.x.size(), NAN), dw(p.w.size(), NAN);
    oflow_rt_conv2d_bwd_data(g.n, g.c, g.h, g.w, g.m, g.kh, g.kw, g.oh(),
                             g.ow(), g.sh, g.sw, g.dh, g.dw, g.pt, g.pl, g.pb,
                             g.pr, g.groups, 0, p.dy.data(), p.w.data(),
                             dx.data(), workspace);
    oflow_rt_conv2d_bwd_filter(g.n, g.c, g.h, g.w, g.m, g.kh, g.kw, g.oh(),
                               g.ow(), g.sh, g.sw, g.dh, g.dw, g.pt, g.pl,
                               g.pb, g.pr, g.groups, 0, p.dy.data(),
                               p.x.data(), dw.data(), workspace);
    expectNear(p.dx, dx, g.name() + ": bwd_data");
    expectNear(p.dw, dw, g.name() + ": bwd_filter");
  };
  forward(small, ps);
  forward(large, pl);
  forward(small, ps);
  backward(large, pl);
  backward(small, ps);
  backward(large, pl);
}

TEST(ConvDnnlErrors, AGeometryOneDnnRejectsEndsTheRunNamingIt) {
  // 4 input channels in 3 groups: no primitive exists.
  std::vector<float> x(4 * 5 * 5), w(3 * 1 * 3 * 3), y(3 * 3 * 3);
  char workspace[1];
  EXPECT_DEATH(oflow_rt_conv2d_fwd(1, 4, 5, 5, 3, 3, 3, 3, 3, 1, 1, 1, 1, 0,
                                   0, 0, 0, 3, 0, x.data(), w.data(), y.data(),
                                   workspace),
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
