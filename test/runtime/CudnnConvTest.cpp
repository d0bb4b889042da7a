//===- CudnnConvTest.cpp - the runtime's cuDNN calls, against a stand-in --===//
//
// runtime/lib/cuda/Cudnn.cpp (descriptors, algorithm choice, calls) loaded
// against test/runtime/CudnnStandIn.cpp, a CPU library with cuDNN's
// signatures that computes what cuDNN documents from the descriptors it is
// given: the four convolutions must equal their definition
// (ConvReference.h) on the stock models' geometries, the algorithm must be
// deterministic, FMA unless TF32 is allowed, and fit the workspace, and the
// failures must say what failed. No GPU, no cuDNN needed.
//
//===----------------------------------------------------------------------===//
#include "ConvReference.h"
#include "../../runtime/lib/cuda/Cudnn.h"

#include "oflow_rt/Error.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace oflow_test::conv;
using oflow_rt::cuda::ConvGeometry;
using oflow_rt::cuda::ConvKind;
using oflow_rt::cuda::CudnnApi;
using oflow_rt::cuda::CudnnConvolutions;

const char *standInPath() { return OFLOW_CUDNN_STANDIN; }

/// The stand-in's test controls (the library CudnnApi loaded: dlopen of the
/// same path returns it).
template <typename F> F control(const char *name) {
  void *lib = dlopen(standInPath(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(lib, nullptr);
  auto f = reinterpret_cast<F>(dlsym(lib, name));
  EXPECT_NE(f, nullptr) << name;
  return f;
}
int lastAlgorithm() { return control<int (*)()>("oflowStandInLastAlgorithm")(); }
int lastMath() { return control<int (*)()>("oflowStandInLastMath")(); }

ConvGeometry abiGeometry(const Geometry &g) {
  return {g.n,  g.c,  g.h,  g.w,  g.m,  g.kh, g.kw, g.oh(), g.ow(),
          g.sh, g.sw, g.dh, g.dw, g.pt, g.pl, g.pb, g.pr,   g.groups};
}

struct Fixture {
  std::unique_ptr<CudnnApi> api;
  cudnnHandle_t handle = nullptr;
  explicit Fixture() {
    std::string why;
    api = CudnnApi::load(standInPath(), why);
    if (!api)
      ADD_FAILURE() << why;
    else
      EXPECT_EQ(api->cudnnCreate(&handle), CUDNN_STATUS_SUCCESS);
  }
  ~Fixture() {
    if (api && handle)
      api->cudnnDestroy(handle);
  }
};

class CudnnConv : public ::testing::TestWithParam<Geometry> {};

TEST_P(CudnnConv, MatchesTheDefinitionWithDeterministicFmaAlgorithms) {
  const Geometry g = GetParam();
  Fixture f;
  ASSERT_TRUE(f.api);
  CudnnConvolutions convs(*f.api, f.handle, /*allowTf32=*/false);
  Problem p = problemFor(g);
  ConvGeometry geom = abiGeometry(g);
  std::vector<char> workspace(64 << 10);
  std::vector<float> y(p.y.size(), NAN), yb(p.y.size(), NAN), dx(p.x.size(), NAN),
      dw(p.w.size(), NAN);
  std::string why;
  ASSERT_TRUE(convs.run(ConvKind::Forward, geom, p.x.data(), p.w.data(), nullptr, y.data(),
                        workspace.data(), workspace.size(), why))
      << why;
  // Implicit precomputed GEMM: the first deterministic FMA algorithm (the
  // heuristic's first three are f16, TF32 and default-math ones).
  EXPECT_EQ(lastAlgorithm(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
  EXPECT_EQ(lastMath(), CUDNN_FMA_MATH);
  ASSERT_TRUE(convs.run(ConvKind::Forward, geom, p.x.data(), p.w.data(), p.bias.data(),
                        yb.data(), workspace.data(), workspace.size(), why))
      << why;
  ASSERT_TRUE(convs.run(ConvKind::BackwardData, geom, p.dy.data(), p.w.data(), nullptr,
                        dx.data(), workspace.data(), workspace.size(), why))
      << why;
  EXPECT_EQ(lastAlgorithm(), CUDNN_CONVOLUTION_BWD_DATA_ALGO_1); // not the atomic 0
  ASSERT_TRUE(convs.run(ConvKind::BackwardFilter, geom, p.dy.data(), p.x.data(), nullptr,
                        dw.data(), workspace.data(), workspace.size(), why))
      << why;
  EXPECT_EQ(lastAlgorithm(), CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1); // not 0 or 3
  EXPECT_EQ(lastMath(), CUDNN_FMA_MATH);
  expectNear(p.y, y, g.name() + ": fwd");
  expectNear(p.yb, yb, g.name() + ": fwd_bias");
  expectNear(p.dx, dx, g.name() + ": bwd_data");
  expectNear(p.dw, dw, g.name() + ": bwd_filter");
  EXPECT_EQ(convs.choiceFor(ConvKind::BackwardFilter, geom).workspaceBytes, 4096u);
}

// n c h w m kh kw sh sw dh dw pt pl pb pr groups: symmetric pads (cuDNN's
// descriptor), the rest as ConvDnnlTest's.
INSTANTIATE_TEST_SUITE_P(
    Geometries, CudnnConv,
    ::testing::Values(
        Geometry{2, 3, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   // same
        Geometry{2, 3, 16, 16, 4, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1}, // stem
        Geometry{2, 8, 8, 8, 16, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},  // 1x1/2
        Geometry{2, 4, 8, 7, 6, 3, 3, 2, 2, 1, 2, 1, 2, 1, 2, 2},   // groups
        Geometry{1, 6, 7, 7, 6, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 6},   // depthwise
        Geometry{2, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},   // dilated
        Geometry{1, 2, 8, 8, 3, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0, 1})); // rows unread

const Geometry kSame{2, 3, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};

TEST(CudnnConvChoice, Tf32AllowedTakesTensorCoresButNeverF16Conversion) {
  Fixture f;
  ASSERT_TRUE(f.api);
  CudnnConvolutions convs(*f.api, f.handle, /*allowTf32=*/true);
  Problem p = problemFor(kSame);
  std::vector<float> y(p.y.size());
  std::string why;
  ASSERT_TRUE(convs.run(ConvKind::Forward, abiGeometry(kSame), p.x.data(), p.w.data(),
                        nullptr, y.data(), nullptr, 0, why));
  // The heuristic's first converts f32 to f16: skipped; the tensor-core one
  // runs with its math type.
  EXPECT_EQ(lastAlgorithm(), CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED);
  EXPECT_EQ(lastMath(), CUDNN_TENSOR_OP_MATH);
}

TEST(CudnnConvChoice, TensorsPastCudnnsIntAreDeclined) {
  Fixture f;
  ASSERT_TRUE(f.api);
  CudnnConvolutions convs(*f.api, f.handle, false);
  // 2^31 input elements (no buffers: nothing runs).
  Geometry g{2, 1024, 1024, 1024, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1};
  std::string why;
  EXPECT_FALSE(convs.run(ConvKind::Forward, abiGeometry(g), nullptr, nullptr, nullptr, nullptr,
                         nullptr, 0, why));
  EXPECT_NE(why.find("past cuDNN's int"), std::string::npos) << why;
}

TEST(CudnnConvChoice, AWorkspaceTooSmallPicksALaterAlgorithmOrDeclines) {
  Fixture f;
  ASSERT_TRUE(f.api);
  CudnnConvolutions convs(*f.api, f.handle, /*allowTf32=*/false);
  Problem p = problemFor(kSame);
  ConvGeometry geom = abiGeometry(kSame);
  std::vector<float> y(p.y.size()), dw(p.w.size());
  std::vector<char> workspace(1024);
  std::string why;
  // 512 bytes: implicit GEMM, which needs none.
  ASSERT_TRUE(convs.run(ConvKind::Forward, geom, p.x.data(), p.w.data(), nullptr, y.data(),
                        workspace.data(), 512, why));
  EXPECT_EQ(lastAlgorithm(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
  expectNear(p.y, y, "fwd with implicit GEMM");
  // The filter gradient's deterministic algorithm needs 4096 bytes.
  EXPECT_FALSE(convs.run(ConvKind::BackwardFilter, geom, p.dy.data(), p.x.data(), nullptr,
                         dw.data(), workspace.data(), workspace.size(), why));
  EXPECT_NE(why.find("need 4096 bytes of workspace, the call has 1024"), std::string::npos)
      << why;
  EXPECT_EQ(convs.choiceFor(ConvKind::BackwardFilter, geom).algorithm, -1);
  // The same question again gets the same answer, without asking cuDNN.
  why.clear();
  EXPECT_FALSE(convs.run(ConvKind::BackwardFilter, geom, p.dy.data(), p.x.data(), nullptr,
                         dw.data(), workspace.data(), workspace.size(), why));
  EXPECT_FALSE(why.empty());
}

TEST(CudnnConvChoice, AsymmetricPadsAreDeclined) {
  Fixture f;
  ASSERT_TRUE(f.api);
  CudnnConvolutions convs(*f.api, f.handle, false);
  Geometry g{1, 2, 5, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 1};
  Problem p = problemFor(g);
  std::vector<float> y(p.y.size());
  std::string why;
  EXPECT_FALSE(convs.run(ConvKind::Forward, abiGeometry(g), p.x.data(), p.w.data(), nullptr,
                         y.data(), nullptr, 0, why));
  EXPECT_NE(why.find("asymmetric"), std::string::npos) << why;
}

TEST(CudnnConvErrors, AFailingCallNamesTheCallTheStatusAndTheGeometry) {
  Fixture f;
  ASSERT_TRUE(f.api);
  CudnnConvolutions convs(*f.api, f.handle, false);
  Problem p = problemFor(kSame);
  std::vector<float> y(p.y.size());
  std::vector<char> workspace(4096);
  std::string why;
  control<void (*)(int)>("oflowStandInFailNext")(CUDNN_STATUS_EXECUTION_FAILED);
  try {
    convs.run(ConvKind::Forward, abiGeometry(kSame), p.x.data(), p.w.data(), nullptr,
              y.data(), workspace.data(), workspace.size(), why);
    FAIL() << "no error";
  } catch (const oflow_rt::Error &e) {
    EXPECT_STREQ(e.what(), "cudnnConvolutionForward failed (CUDNN_STATUS_EXECUTION_FAILED) "
                           "for oflow_rt_conv2d_fwd (n=2 c=3 h=9 w=9 m=8 kh=3 kw=3 oh=9 "
                           "ow=9 stride_h=1 stride_w=1 dilation_h=1 dilation_w=1 pad_top=1 "
                           "pad_left=1 pad_bottom=1 pad_right=1 groups=1)");
  }
}

TEST(CudnnConvErrors, AnOutputExtentCudnnDisagreesWithIsAnError) {
  Fixture f;
  ASSERT_TRUE(f.api);
  CudnnConvolutions convs(*f.api, f.handle, false);
  ConvGeometry geom = abiGeometry(kSame);
  geom[7] = 8; // oh: cuDNN computes 9
  std::vector<float> x(2 * 3 * 81), w(8 * 3 * 9), y(2 * 8 * 72);
  std::string why;
  try {
    convs.run(ConvKind::Forward, geom, x.data(), w.data(), nullptr, y.data(), nullptr, 0, why);
    FAIL() << "no error";
  } catch (const oflow_rt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("cuDNN's output would be 2x8x9x9, the program's is "
                                         "2x8x8x9"),
              std::string::npos)
        << e.what();
  }
}

TEST(CudnnLoad, SaysWhyALibraryCannotBeUsed) {
  std::string why;
  EXPECT_FALSE(CudnnApi::load("/nonexistent/libcudnn.so.9", why));
  EXPECT_NE(why.find("/nonexistent/libcudnn.so.9"), std::string::npos) << why;
  // A library without cuDNN's functions.
  EXPECT_FALSE(CudnnApi::load("libm.so.6", why));
  EXPECT_EQ(why, "libm.so.6 has no cudnnGetVersion");
  // Too old for the *_v7 queries.
  Fixture f; // keeps the stand-in loaded while its version is changed
  control<void (*)(size_t)>("oflowStandInSetVersion")(7605);
  EXPECT_FALSE(CudnnApi::load(standInPath(), why));
  control<void (*)(size_t)>("oflowStandInSetVersion")(91900);
  EXPECT_NE(why.find("is cuDNN 7.6.5, older than 8.0"), std::string::npos) << why;
  ASSERT_TRUE(f.api);
  EXPECT_EQ(f.api->versionText(), "9.19.0");
}

TEST(CudnnLoad, TheEnvironmentPicksTheLibraryOrTurnsCudnnOff) {
  std::string why;
  setenv("OFLOW_CUDNN_LIBRARY", standInPath(), 1);
  EXPECT_TRUE(CudnnApi::loadDefault(why)) << why;
  setenv("OFLOW_CUDNN", "0", 1);
  EXPECT_FALSE(CudnnApi::loadDefault(why));
  EXPECT_EQ(why, "OFLOW_CUDNN=0");
  unsetenv("OFLOW_CUDNN");
  unsetenv("OFLOW_CUDNN_LIBRARY");
}

} // namespace
