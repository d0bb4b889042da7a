//===- OptionsTest.cpp - the executable's command line --------------------===//
#include "TestUtil.h"
#include "../../runtime/lib/MpiWorld.h"
#include "oflow_rt/Options.h"

#include <sched.h>
#include <cstdlib>

using namespace oflow_rt;
using oflow_rt::test::expectError;

namespace {
struct Argv {
  explicit Argv(std::vector<std::string> a) : words(std::move(a)) {
    words.insert(words.begin(), "train");
    for (std::string &w : words)
      ptrs.push_back(w.data());
  }
  int argc() const { return static_cast<int>(ptrs.size()); }
  char **argv() { return ptrs.data(); }
  std::vector<std::string> words;
  std::vector<char *> ptrs;
};

TrainOptions train(std::vector<std::string> a) {
  Argv v(std::move(a));
  return parseTrainOptions(v.argc(), v.argv());
}
InferOptions infer(std::vector<std::string> a) {
  Argv v(std::move(a));
  return parseInferOptions(v.argc(), v.argv());
}
} // namespace

TEST(Options, ParsesTrainFlags) {
  TrainOptions o = train({"--steps", "20", "--lr=0.5", "--data", "x=a.npy", "y=b.npy",
                          "--data=z=c.npy", "--shuffle", "--seed", "3", "--save", "ck",
                          "--save-every", "5", "--eval-data", "x=e.npy", "--eval-every=2",
                          "--log-json", "l.json", "--check-memory", "--threads", "2",
                          "--no-cuda-graph"});
  EXPECT_EQ(o.steps, 20);
  EXPECT_DOUBLE_EQ(*o.lr, 0.5);
  ASSERT_EQ(o.data.size(), 3u);
  EXPECT_EQ(o.data[1], (NamedFile{"y", "b.npy"}));
  EXPECT_EQ(o.data[2], (NamedFile{"z", "c.npy"}));
  EXPECT_TRUE(o.shuffle);
  EXPECT_EQ(o.seed, 3u);
  EXPECT_EQ(o.saveDir, "ck");
  EXPECT_EQ(o.saveEvery, 5);
  EXPECT_EQ(o.evalEvery, 2);
  EXPECT_EQ(o.logJson, "l.json");
  EXPECT_TRUE(o.checkMemory);
  EXPECT_EQ(o.threads, 2);
  EXPECT_TRUE(o.noCudaGraph);
  EXPECT_EQ(train({}).steps, 100);
  EXPECT_FALSE(train({}).noCudaGraph);
}

TEST(Options, RejectsBadTrainFlagsWithExit2) {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  } cases[] = {
      {{"--stpes", "3"}, "unknown option '--stpes'"},
      {{"--steps"}, "--steps needs a value"},
      {{"--steps", "ten"}, "--steps wants an integer >= 0, got 'ten'"},
      {{"--steps", "-1"}, "--steps wants an integer >= 0"},
      {{"--steps", "5x"}, "got '5x'"},
      {{"--lr", "nan"}, "--lr wants a finite number"},
      {{"--lr", "-1"}, "--lr wants a finite number >= 0"},
      {{"--data", "x"}, "--data wants NAME=FILE, got 'x'"},
      {{"--data", "=f.npy"}, "--data wants NAME=FILE"},
      {{"--seed", "1"}, "--seed only applies with --shuffle"},
      {{"--save-every", "2"}, "--save-every needs --save DIR"},
      {{"--save-every", "0", "--save", "d"}, "--save-every wants an integer >= 1"},
      {{"--eval-every", "2"}, "--eval-every needs --eval-data"},
      {{"--shuffle=yes"}, "--shuffle takes no value"},
      {{"--no-cuda-graph=1"}, "--no-cuda-graph takes no value"},
      {{"stray"}, "unexpected argument 'stray'"},
      {{"--threads", "0"}, "--threads wants an integer >= 1"},
      {{"--threads", "99999"}, "--threads wants an integer >= 1 and <= 4096"},
      {{"--save", "--steps"}, "looks like an option"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.error);
    expectError([&] { train(c.args); }, c.error, 2);
  }
}

TEST(Options, ParsesInferFlags) {
  InferOptions o = infer({"input_0.pb", "input_1.npy", "--output-dir", "out",
                          "--output-format", "pb"});
  EXPECT_EQ(o.positional, (std::vector<std::string>{"input_0.pb", "input_1.npy"}));
  EXPECT_EQ(o.outputDir, "out");
  EXPECT_EQ(o.format, "pb");
  EXPECT_FALSE(o.noCudaGraph);
  o = infer({"--input", "x=a.npy", "--output-dir=o", "--no-cuda-graph"});
  ASSERT_EQ(o.inputs.size(), 1u);
  EXPECT_TRUE(o.noCudaGraph);
  EXPECT_EQ(o.format, "npy");
  expectError([&] { infer({"a.pb"}); }, "--output-dir DIR is required", 2);
  expectError([&] { infer({"--output-dir", "o", "--output-format", "csv"}); },
              "--output-format wants npy or pb, got 'csv'", 2);
  expectError([&] { infer({"--output-dir", "o", "--input", "x=a.npy", "b.npy"}); },
              "not both", 2);
  expectError([&] { infer({"--output-dir", "o", "--bogus"}); }, "unknown option '--bogus'", 2);
}

TEST(Options, HelpListsInputsAndOutputs) {
  Manifest m = parseManifest(
      "oflow-manifest 1\nmode train\nmodel mlp.onnx\nbatch 4\nstate_bytes 64\n"
      "io_bytes 256\narena_bytes 0\nentry train\nvar w param f32 1 3 0 0\n"
      "input x f32 2 4 3 0 normal\ninput label i64 1 4 64 int:0:10\n"
      "output train loss f32 0 128\nscalar lr f32 192 0.01\n");
  std::string h = trainHelp("train", m);
  for (const char *part : {"usage: train [options]", "mlp.onnx", "--steps N", "--resume DIR",
                           "--export OUT.onnx", "x  f32[4,3]", "label  i64[4]",
                           "integers in [0, 10)", "loss  f32[]  (train)",
                           "default 0.01", "3 values"})
    EXPECT_NE(h.find(part), std::string::npos) << part << "\n" << h;
  std::string ih = inferHelp("infer", m);
  EXPECT_NE(ih.find("input_0.pb"), std::string::npos) << ih;
}

// --threads' default (oflow_rt_set_threads for OpenBLAS and oneDNN):
// OMP_NUM_THREADS when set, else this process's cores over the node's ranks.
TEST(Options, DefaultThreadsFollowOmpNumThreadsThenCoresPerRank) {
  auto restore = [](const char *name, const char *old) {
    if (old)
      setenv(name, old, 1);
    else
      unsetenv(name);
  };
  std::string omp = getenv("OMP_NUM_THREADS") ? getenv("OMP_NUM_THREADS") : "";
  bool hadOmp = getenv("OMP_NUM_THREADS");
  const char *rank = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const char *size = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  std::string rankOld = rank ? rank : "", sizeOld = size ? size : "";

  setenv("OMP_NUM_THREADS", "3", 1);
  EXPECT_EQ(oflow_rt::detail::defaultThreads(), 3);
  unsetenv("OMP_NUM_THREADS");
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "1", 1);
  EXPECT_EQ(oflow_rt::detail::defaultThreads(), CPU_COUNT(&set));
  // More ranks than cores: one thread each, never zero.
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "100000", 1);
  EXPECT_EQ(oflow_rt::detail::defaultThreads(), 1);

  restore("OMP_NUM_THREADS", hadOmp ? omp.c_str() : nullptr);
  restore("OMPI_COMM_WORLD_LOCAL_RANK", rank ? rankOld.c_str() : nullptr);
  restore("OMPI_COMM_WORLD_LOCAL_SIZE", size ? sizeOld.c_str() : nullptr);
}
