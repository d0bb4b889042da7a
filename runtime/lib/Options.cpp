//===- Options.cpp - the executable's command line ------------------------===//
//
// Hand-rolled on purpose: the executable links nothing it does not need.
// `--opt VALUE` and `--opt=VALUE` both work; the list options (--data,
// --eval-data, --input) take one or more NAME=FILE words.
//
//===----------------------------------------------------------------------===//
#include "oflow_rt/Options.h"
#include "oflow_rt/Error.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

namespace oflow_rt {

namespace {
class ArgReader {
public:
  ArgReader(int argc, char **argv) : args(argv + 1, argv + argc) {}

  bool done() const { return pos >= args.size() && !pendingValue; }
  /// The next word; for `--opt=value`, splits it and keeps the value pending.
  std::string next() {
    std::string a = args[pos++];
    size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      pendingValue = a.substr(eq + 1);
      return a.substr(0, eq);
    }
    return a;
  }
  std::string value(const std::string &opt) {
    if (pendingValue) {
      std::string v = *pendingValue;
      pendingValue.reset();
      return v;
    }
    if (pos >= args.size())
      throw usageError(opt + " needs a value");
    return args[pos++];
  }
  /// One or more NAME=FILE words after a list option.
  std::vector<NamedFile> namedFiles(const std::string &opt) {
    std::vector<NamedFile> r;
    r.push_back(namedFile(opt, value(opt)));
    while (pos < args.size() && args[pos].rfind("--", 0) != 0 &&
           args[pos].find('=') != std::string::npos)
      r.push_back(namedFile(opt, args[pos++]));
    return r;
  }
  /// The value of `--opt=value`, if the word had one.
  std::optional<std::string> optionalValue() {
    std::optional<std::string> v = pendingValue;
    pendingValue.reset();
    return v;
  }

  void noValue(const std::string &opt) {
    if (pendingValue)
      throw usageError(opt + " takes no value");
  }

private:
  static NamedFile namedFile(const std::string &opt, const std::string &w) {
    size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == w.size())
      throw usageError(opt + " wants NAME=FILE, got '" + w + "'");
    return {w.substr(0, eq), w.substr(eq + 1)};
  }

  std::vector<std::string> args;
  size_t pos = 0;
  std::optional<std::string> pendingValue;
};

int64_t parseCount(const std::string &opt, const std::string &v, int64_t lo,
                   int64_t hi = INT64_MAX) {
  errno = 0;
  char *end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end || errno || n < lo || n > hi)
    throw usageError(opt + " wants an integer >= " + std::to_string(lo) +
                     (hi == INT64_MAX ? "" : " and <= " + std::to_string(hi)) +
                     ", got '" + v + "'");
  return n;
}

double parseReal(const std::string &opt, const std::string &v) {
  errno = 0;
  char *end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || errno || !std::isfinite(d) || d < 0)
    throw usageError(opt + " wants a finite number >= 0, got '" + v + "'");
  return d;
}

std::string slotText(const TensorSlot &s) {
  return s.name + "  " + dtypeName(s.dtype) + shapeText(s.shape());
}
} // namespace

TrainOptions parseTrainOptions(int argc, char **argv) {
  TrainOptions o;
  ArgReader r(argc, argv);
  bool sawSeed = false;
  while (!r.done()) {
    std::string a = r.next();
    if (a == "--steps") o.steps = parseCount(a, r.value(a), 0);
    else if (a == "--lr") o.lr = parseReal(a, r.value(a));
    else if (a == "--data") for (auto &f : r.namedFiles(a)) o.data.push_back(f);
    else if (a == "--eval-data") for (auto &f : r.namedFiles(a)) o.evalData.push_back(f);
    else if (a == "--eval-every") o.evalEvery = parseCount(a, r.value(a), 1);
    else if (a == "--shuffle") { r.noValue(a); o.shuffle = true; }
    else if (a == "--seed") { o.seed = static_cast<uint64_t>(parseCount(a, r.value(a), 0)); sawSeed = true; }
    else if (a == "--log-json") o.logJson = r.value(a);
    else if (a == "--save") o.saveDir = r.value(a);
    else if (a == "--save-every") o.saveEvery = parseCount(a, r.value(a), 1);
    else if (a == "--resume") o.resumeDir = r.value(a);
    else if (a == "--export") o.exportPath = r.value(a);
    else if (a == "--dump-grads") o.dumpGradsDir = r.value(a);
    else if (a == "--dump-weights") o.dumpWeightsDir = r.value(a);
    else if (a == "--weights") o.weights = r.value(a);
    else if (a == "--check-memory") { r.noValue(a); o.checkMemory = true; }
    else if (a == "--check-finite") { r.noValue(a); o.checkFinite = true; }
    else if (a == "--collective-timeout") o.collectiveTimeout = parseReal(a, r.value(a));
    else if (a == "--check-gradients") {
      std::optional<std::string> tol = r.optionalValue();
      o.checkGradients = tol ? parseReal(a, *tol) : 1e-2;
    }
    else if (a == "--threads") o.threads = static_cast<int>(parseCount(a, r.value(a), 1, 4096));
    else if (a == "--allow-tf32") { r.noValue(a); o.allowTf32 = true; }
    else if (a == "--no-cuda-graph") { r.noValue(a); o.noCudaGraph = true; }
    else if (a == "--help" || a == "-h") { r.noValue(a); o.help = true; }
    else if (a.rfind("-", 0) == 0) throw usageError("unknown option '" + a + "' (see --help)");
    else throw usageError("unexpected argument '" + a + "' (see --help)");
  }
  if (sawSeed && !o.shuffle)
    throw usageError("--seed only applies with --shuffle");
  if (o.saveEvery && o.saveDir.empty())
    throw usageError("--save-every needs --save DIR");
  if (o.evalEvery && o.evalData.empty())
    throw usageError("--eval-every needs --eval-data NAME=FILE ...");
  for (const std::string *p : {&o.logJson, &o.saveDir, &o.resumeDir,
                               &o.exportPath, &o.dumpGradsDir, &o.dumpWeightsDir,
                               &o.weights})
    if (p->rfind("--", 0) == 0)
      throw usageError("option value '" + *p + "' looks like an option");
  return o;
}

InferOptions parseInferOptions(int argc, char **argv) {
  InferOptions o;
  ArgReader r(argc, argv);
  while (!r.done()) {
    std::string a = r.next();
    if (a == "--input") for (auto &f : r.namedFiles(a)) o.inputs.push_back(f);
    else if (a == "--output-dir") o.outputDir = r.value(a);
    else if (a == "--weights") o.weights = r.value(a);
    else if (a == "--threads") o.threads = static_cast<int>(parseCount(a, r.value(a), 1, 4096));
    else if (a == "--allow-tf32") { r.noValue(a); o.allowTf32 = true; }
    else if (a == "--no-cuda-graph") { r.noValue(a); o.noCudaGraph = true; }
    else if (a == "--output-format") {
      o.format = r.value(a);
      if (o.format != "npy" && o.format != "pb")
        throw usageError("--output-format wants npy or pb, got '" + o.format + "'");
    }
    else if (a == "--help" || a == "-h") { r.noValue(a); o.help = true; }
    else if (a.rfind("-", 0) == 0 && a != "-") throw usageError("unknown option '" + a + "' (see --help)");
    else o.positional.push_back(a);
  }
  if (!o.help && o.outputDir.empty())
    throw usageError("--output-dir DIR is required (see --help)");
  if (!o.inputs.empty() && !o.positional.empty())
    throw usageError("give inputs either as --input NAME=FILE or positionally, not both");
  return o;
}

std::string trainHelp(const std::string &exe, const Manifest &m) {
  std::string lrDefault = "none compiled in: pass --lr";
  if (std::optional<double> lr = m.defaultLearningRate()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", *lr);
    lrDefault = buf;
  }
  std::string h =
      "usage: " + exe + " [options]\n"
      "Trains " + (m.model.empty() ? std::string("the compiled model") : m.model) +
      " (batch " + std::to_string(m.batch) + " rows per step).\n\n"
      "options:\n"
      "  --steps N                 optimizer steps to run (default 100), counted\n"
      "                            on from the resumed step with --resume\n"
      "  --lr X                    base learning rate (default " + lrDefault + ")\n"
      "  --data NAME=FILE.npy ...  training data per input; step k reads rows\n"
      "                            (k*B + i) mod N, i = 0..B-1; inputs without a\n"
      "                            file get deterministic synthetic data\n"
      "  --shuffle [--seed S]      a per-epoch permutation keyed by (S, epoch)\n"
      "  --eval-data NAME=FILE.npy ...  held-out data; each evaluation covers\n"
      "                            ceil(N/B) batches and reports eval_loss\n"
      "                            (dropout off; batch norm on batch statistics)\n"
      "  --eval-every K            evaluate every K steps (default: at the end)\n"
      "  --log-json FILE           one JSON object per step (and evaluation)\n"
      "  --save DIR                checkpoint DIR/ckpt at the end, on SIGINT/SIGTERM\n"
      "  --save-every K            ... and after every K steps\n"
      "  --resume DIR              continue from DIR/ckpt (bit-identically)\n"
      "  --weights FILE.onnx       initial weights from this model's initializers\n"
      "  --export OUT.onnx         write the model with the trained weights\n"
      "  --dump-grads DIR          first step's gradients as DIR/<param>.npy\n"
      "  --dump-weights DIR        parameters and buffers before the first step\n"
      "                            (initialized, resumed or loaded) as DIR/<name>.npy\n"
      "  --check-gradients[=TOL]   check the gradients against central differences\n"
      "                            of the loss on the first batch (float32\n"
      "                            programs, one device), print the worst tensors,\n"
      "                            exit 1 if one is off by more than TOL (0.01)\n"
      "  --check-memory            poison dead arena regions with NaN\n"
      "  --check-finite            after every step, stop at the first weight or\n"
      "                            optimizer state holding a NaN or an infinity\n"
      "  --collective-timeout S    mesh runs: a collective (MPI, or NCCL on the GPU's\n"
      "                            stream) that has waited S seconds for the other\n"
      "                            ranks ends the job, naming it, its mesh axis, the\n"
      "                            step and the ranks that sent no heartbeat (1800;\n"
      "                            0: never)\n"
      "  --threads N               BLAS and oneDNN threads (default: OMP_NUM_THREADS, else\n"
      "                            this process's cores / the ranks on its node)\n"
      "  --allow-tf32              CUDA: f32 GEMMs on TF32 tensor cores (faster,\n"
      "                            less exact; also OFLOW_ALLOW_TF32=1); CPU: no effect\n"
      "  --no-cuda-graph           CUDA: launch every kernel from the host instead of\n"
      "                            replaying each entry from a CUDA graph after two\n"
      "                            identical calls (debugging; also OFLOW_CUDA_GRAPH=0)\n"
      "  --help                    this text\n\ninputs:\n";
  for (const InputRecord &in : m.inputs)
    h += "  " + slotText(in) + "  synthetic: " +
         (in.synthNormal ? std::string("N(0,1)")
                         : "integers in [" + std::to_string(in.lo) + ", " +
                               std::to_string(in.hi) + ")") + "\n";
  h += "outputs:\n";
  for (const OutputRecord &o : m.outputs)
    h += "  " + slotText(o) + "  (" + o.entry + ")\n";
  int64_t params = 0;
  for (const VarRecord &v : m.vars)
    if (v.kind == VarKind::Param)
      params += numElements(v.shape());
  h += "parameters: " + std::to_string(params) + " values in " +
       std::to_string(m.grads.size()) + " trained tensors\n";
  for (const std::string &line : m.info)
    h += line + "\n";
  return h;
}

std::string inferHelp(const std::string &exe, const Manifest &m) {
  std::string h =
      "usage: " + exe + " --input NAME=FILE ... --output-dir DIR [--output-format npy|pb]\n"
      "       " + exe + " FILE ... --output-dir DIR   (inputs in the order below)\n"
      "Runs " + (m.model.empty() ? std::string("the compiled model") : m.model) +
      " once. Input files are NumPy .npy or ONNX TensorProto .pb (as in ONNX's\n"
      "node tests: input_0.pb input_1.pb ...); each output is written as\n"
      "DIR/<output name>.npy or .pb (names escaped: bytes outside\n"
      "[A-Za-z0-9._:-] become %XX).\n\n"
      "options:\n"
      "  --input NAME=FILE ...     one file per input\n"
      "  --output-dir DIR          where outputs go (created if missing)\n"
      "  --output-format npy|pb    output file format (default npy)\n"
      "  --weights FILE.onnx       weights from this model's initializers\n"
      "  --threads N               BLAS and oneDNN threads (default: OMP_NUM_THREADS, else\n"
      "                            this process's cores / the ranks on its node)\n"
      "  --allow-tf32              CUDA: f32 GEMMs on TF32 tensor cores (faster,\n"
      "                            less exact; also OFLOW_ALLOW_TF32=1); CPU: no effect\n"
      "  --no-cuda-graph           CUDA: launch every kernel from the host instead of\n"
      "                            replaying each entry from a CUDA graph after two\n"
      "                            identical calls (debugging; also OFLOW_CUDA_GRAPH=0)\n"
      "  --help                    this text\n\ninputs:\n";
  for (const InputRecord &in : m.inputs)
    h += "  " + slotText(in) + "\n";
  h += "outputs:\n";
  for (const OutputRecord *o : m.outputsOf("infer"))
    h += "  " + slotText(*o) + "\n";
  return h;
}

} // namespace oflow_rt
