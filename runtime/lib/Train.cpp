//===- Train.cpp - the training loop ---------------------------------------===//
//
// Everything that can be checked (flags, data files, checkpoint, output
// paths) is checked before the first step, so a bad run fails in seconds,
// not hours in. Signals only set a flag: the step in flight finishes, the
// state is saved, and the process exits 128 + signal.
//
//===----------------------------------------------------------------------===//
#include "oflow_rt/Checkpoint.h"
#include "MpiWorld.h"
#include "oflow_rt/Distributed.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/Export.h"
#include "oflow_rt/Feeder.h"
#include "oflow_rt/FileUtil.h"
#include "oflow_rt/GradCheck.h"
#include "oflow_rt/Modes.h"
#include "oflow_rt/Npy.h"
#include "oflow_rt/Options.h"
#include "oflow_rt/StepLog.h"

#include "HalfFloat.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <optional>
#include <set>
#include <unistd.h>

namespace oflow_rt {

namespace {
volatile std::sig_atomic_t gSignal = 0;
// /dev/null, opened before the handlers are installed (see onSignal).
volatile std::sig_atomic_t gDevNull = -1;

extern "C" void onSignal(int sig) {
  gSignal = sig;
  // SIGTERM ends the job (a scheduler's preemption, mpirun passing it on):
  // from here on no progress line may hold the final save up. Under mpirun,
  // rank 0's stdout is a pseudo-terminal the launcher stops draining once it
  // has forwarded the signal; the next line then blocked rank 0 in write()
  // while the other ranks waited for it in the stop agreement, until
  // mpirun's SIGKILL. stdout now goes to /dev/null (dup2 is async-signal-
  // safe, and a write() the signal interrupted restarts on the new file).
  // Errors still reach stderr. Ctrl-C (SIGINT) keeps stdout: a person
  // watching the terminal wants the last lines.
  if (sig == SIGTERM && gDevNull >= 0)
    ::dup2(gDevNull, STDOUT_FILENO);
  // A second Ctrl-C or SIGTERM kills at once, for a step (or a rank stuck
  // in a collective) that takes too long.
  std::signal(sig, SIG_DFL);
}

std::map<std::string, HostTensor> loadData(const Manifest &m,
                                           const std::vector<NamedFile> &files,
                                           const char *opt) {
  std::map<std::string, HostTensor> r;
  for (const auto &[name, path] : files) {
    const InputRecord *in = m.findInput(name);
    if (!in)
      throw usageError(std::string(opt) + " " + name + "=" + path +
                       ": the program has no input '" + name +
                       "' (its inputs: " + m.inputNames() + ")");
    if (r.count(name))
      throw usageError(std::string(opt) + ": input '" + name +
                       "' given twice");
    r[name] = prepareInputData(*in, readNpy(path), path, m.batch);
  }
  return r;
}

/// The first element of `v`'s local piece in `state` that is a NaN or an
/// infinity, as (index, value); nullopt when all are finite (and for
/// integer variables).
std::optional<std::pair<int64_t, double>> firstNonFinite(const VarRecord &v,
                                                         const uint8_t *state) {
  const uint8_t *at = state + v.offset;
  int64_t n = numElements(v.localDims);
  for (int64_t i = 0; i < n; ++i) {
    double x;
    switch (v.dtype) {
    case DType::F32: { float f; std::memcpy(&f, at + 4 * i, 4); x = f; break; }
    case DType::F64: std::memcpy(&x, at + 8 * i, 8); break;
    case DType::F16: case DType::BF16: {
      uint16_t h;
      std::memcpy(&h, at + 2 * i, 2);
      x = v.dtype == DType::F16 ? detail::f16ToFloat(h) : detail::bf16ToFloat(h);
      break;
    }
    default: return std::nullopt;
    }
    if (!std::isfinite(x))
      return std::make_pair(i, x);
  }
  return std::nullopt;
}

std::string formatLoss(float loss) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", loss);
  return text;
}

const OutputRecord &lossOutput(const Manifest &m, const std::string &entry) {
  const OutputRecord *o = m.lossOutput(entry);
  if (!o || o->dtype != DType::F32 || !o->dims.empty())
    throw Error("the manifest has no f32 scalar output 'loss' for the " +
                entry + " entry");
  return *o;
}

class Trainer {
public:
  Trainer(Program &p, const TrainOptions &o) : p(p), m(p.manifest), o(o) {}

  int run();

private:
  void setScalars(int64_t step);
  float readLoss(const std::string &entry);
  void dumpGrads(int64_t step);
  void dumpWeights(int64_t first);
  void evaluate(int64_t afterStep);
  void save(int64_t stepsDone);
  void exportTrained();

  Program &p;
  const Manifest &m;
  const TrainOptions &o;
  std::unique_ptr<Feeder> feed, evalFeed;
  std::unique_ptr<StepLog> log;
  double lr = 0;
};

void Trainer::setScalars(int64_t step) {
  if (const ScalarRecord *s = m.findScalar("step"))
    p.writeScalar(*s, static_cast<double>(step));
  if (const ScalarRecord *s = m.findScalar("lr"))
    p.writeScalar(*s, lr);
  if (const ScalarRecord *s = m.findScalar("poison"))
    p.writeScalar(*s, o.checkMemory ? 1 : 0);
  Program::setCheckMemory(o.checkMemory);
  // Poisoning the whole arena before a call also catches reads of regions
  // the plan never wrote in this call.
  if (o.checkMemory)
    p.poisonArena();
}

float Trainer::readLoss(const std::string &entry) {
  return static_cast<float>(p.readValue(DType::F32, lossOutput(m, entry).offset));
}

void Trainer::dumpGrads(int64_t step) {
  if (isRoot())
    makeDirectories(o.dumpGradsDir);
  feed->fill(step, p.io.data());
  setScalars(step);
  p.call("grads");
  for (const TensorSlot &g : m.grads) {
    // Gathered from every rank's piece; rank 0 writes the whole gradient.
    std::vector<uint8_t> global = gatherToRoot(g, p.io.data() + g.offset);
    if (!isRoot())
      continue;
    HostTensor t;
    t.dtype = g.dtype;
    t.dims = g.shape();
    const uint8_t *src = global.data();
    if (g.dtype == DType::BF16) { // NumPy has no bfloat16: widen exactly
      t.dtype = DType::F32;
      int64_t n = numElements(g.shape());
      t.data.resize(n * 4);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t bits = uint32_t(src[2 * i] | src[2 * i + 1] << 8) << 16;
        std::memcpy(t.data.data() + 4 * i, &bits, 4);
      }
    } else {
      t.data.assign(src, src + g.shapeBytes());
    }
    writeNpy(o.dumpGradsDir + "/" + fileNameFor(g.name) + ".npy", t);
  }
  if (isRoot())
    std::fprintf(stderr, "wrote %zu gradients of step %lld to %s\n",
               m.grads.size(), static_cast<long long>(step),
               o.dumpGradsDir.c_str());
}

void Trainer::dumpWeights(int64_t first) {
  if (isRoot())
    makeDirectories(o.dumpWeightsDir);
  const uint8_t *state = p.stateForRead();
  int64_t written = 0;
  for (const VarRecord &v : m.vars) {
    if (v.kind != VarKind::Param && v.kind != VarKind::Buffer)
      continue;
    // Gathered from every rank's piece; rank 0 writes the whole tensor.
    std::vector<uint8_t> global = gatherToRoot(v, state + v.offset);
    if (!isRoot())
      continue;
    HostTensor t;
    t.dtype = v.dtype;
    t.dims = v.shape();
    t.data = std::move(global);
    t.data.resize(v.shapeBytes()); // a flat store's padding is not the weight's
    writeNpy(o.dumpWeightsDir + "/" + fileNameFor(v.name) + ".npy", t);
    ++written;
  }
  if (isRoot())
    std::fprintf(stderr, "wrote %lld weights before step %lld to %s\n",
                 static_cast<long long>(written), static_cast<long long>(first),
                 o.dumpWeightsDir.c_str());
}

void Trainer::evaluate(int64_t afterStep) {
  int64_t rows = evalFeed->minRows();
  int64_t batches = std::max<int64_t>(1, (rows + m.batch - 1) / m.batch);
  double sum = 0;
  for (int64_t j = 0; j < batches; ++j) {
    evalFeed->fill(j, p.io.data());
    // A negative step evaluates: dropout is the identity (model.eval()).
    setScalars(-1);
    p.call("grads");
    sum += readLoss("grads");
  }
  float loss = static_cast<float>(sum / batches);
  if (!std::isfinite(loss))
    throw Error("evaluation after step " + std::to_string(afterStep) +
                ": eval_loss is " + (std::isnan(loss) ? "nan" : "inf"));
  if (log)
    log->eval(afterStep, loss, batches);
}

void Trainer::save(int64_t stepsDone) {
  saveCheckpoint(o.saveDir, m, p.stateForRead(), stepsDone);
}

void Trainer::exportTrained() {
  // Every rank takes part in each gather; rank 0 writes the file.
  std::map<std::string, std::vector<uint8_t>> values;
  const uint8_t *state = p.stateForRead();
  for (const VarRecord &v : m.vars)
    if (isExported(v))
      values[v.name] = gatherToRoot(v, state + v.offset);
  if (isRoot())
    exportOnnx(o.exportPath, p.modelBytes(), p.modelSize(), m,
               [&](const VarRecord &v) { return values.at(v.name).data(); });
}

int Trainer::run() {
  p.requireEntry("train", "training");
  lossOutput(m, "train");
  // Programs without inputs (every operand an initializer) have batch 0.
  if (!m.inputs.empty() && m.batch < 1)
    throw Error("the manifest's batch is " + std::to_string(m.batch) +
                "; training on inputs needs at least one row per step");
  // One knob for every library pool: oversubscribed OpenMP threads spin.
  oflow_rt_set_threads(o.threads ? o.threads : detail::defaultThreads());
  p.setDeviceOptions(deviceOptions(o.allowTf32, o.noCudaGraph));

  // Everything below is checked before the first step.
  const ScalarRecord *lrScalar = m.findScalar("lr");
  if (o.lr && !lrScalar)
    throw usageError("--lr: this program has a fixed learning rate");
  std::optional<double> compiledLr = m.defaultLearningRate();
  if (lrScalar && !o.lr && !compiledLr)
    throw usageError("this program has no default learning rate: pass --lr X");
  lr = o.lr ? *o.lr : compiledLr ? *compiledLr : 0;
  if (o.checkMemory && !m.findScalar("poison"))
    throw usageError("--check-memory: this program was compiled without "
                     "the poison scalar");
  if (o.checkGradients)
    p.requireEntry("grads", "--check-gradients");
  if (!o.dumpGradsDir.empty()) {
    p.requireEntry("grads", "--dump-grads");
    if (m.grads.empty())
      throw Error("--dump-grads: the program has no gradient outputs");
  }
  if (!o.exportPath.empty()) {
    if (p.modelSize() == 0)
      throw Error("--export: this program embeds no ONNX model (it was not "
                  "compiled from one), so there is nothing to export into");
    // Fail now, not after the training, when the file cannot be written.
    size_t slash = o.exportPath.rfind('/');
    std::string dir = slash == std::string::npos ? "." : o.exportPath.substr(0, slash + 1);
    if (::access(dir.c_str(), W_OK) != 0)
      throw Error("--export " + o.exportPath + ": cannot write to " + dir +
                  ": " + errnoText());
  }

  feed = std::make_unique<Feeder>(m, loadData(m, o.data, "--data"),
                                  o.shuffle ? std::optional<uint64_t>(o.seed)
                                            : std::nullopt);
  if (!o.evalData.empty()) {
    p.requireEntry("grads", "--eval-data");
    lossOutput(m, "grads");
    auto files = loadData(m, o.evalData, "--eval-data");
    for (const InputRecord &in : m.inputs)
      if (!files.count(in.name))
        throw usageError("--eval-data: no file for input '" + in.name +
                         "' (evaluation needs every input: " +
                         m.inputNames() + ")");
    evalFeed = std::make_unique<Feeder>(m, std::move(files), std::nullopt);
  }

  p.loadWeightsFile(o.weights);
  int64_t first = 0;
  if (!o.resumeDir.empty()) {
    first = loadCheckpoint(o.resumeDir, m, p.stateForWrite());
    if (isRoot())
      std::fprintf(stderr, "resumed from %s at step %lld\n",
                 checkpointPath(o.resumeDir).c_str(),
                 static_cast<long long>(first));
  }
  if (!o.saveDir.empty())
    makeDirectories(o.saveDir);
  int64_t end = first + o.steps;
  // Rank 0 alone logs: the loss is broadcast, every rank holds the same.
  if (isRoot())
    log = std::make_unique<StepLog>(o.logJson, m.batch, first, end - 1);
  if (log)
    log->setJsonExtra([this] { return p.deviceJsonFields(); });

  std::vector<std::string> synth = feed->synthesized();
  if (!synth.empty() && isRoot()) {
    std::string names;
    for (const std::string &n : synth)
      names += (names.empty() ? "" : ", ") + n;
    std::fprintf(stderr,
                 "warning: no --data for %s: training on deterministic "
                 "synthetic data\n", names.c_str());
  }

  // A regular file never blocks a write: its lines are kept.
  struct stat out;
  if (gDevNull < 0 && !(::fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode)))
    gDevNull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);

  if (!o.dumpWeightsDir.empty())
    dumpWeights(first);
  if (!o.dumpGradsDir.empty())
    dumpGrads(first);
  if (o.checkGradients) {
    GradCheckOptions check;
    check.tolerance = *o.checkGradients;
    return checkGradients(p, check, [&] {
      feed->fill(first, p.io.data());
      setScalars(first);
    });
  }

  int64_t lastSave = -1, lastEval = -1;
  if (log)
    log->startClock();
  setCollectiveTimeout(o.collectiveTimeout);
  for (int64_t k = first; k < end; ++k) {
    setCurrentStep(k);
    feed->fill(k, p.io.data());
    setScalars(k);
    p.call("train");
    float loss = readLoss("train");
    if (!std::isfinite(loss))
      throw Error("step " + std::to_string(k) + ": loss is " +
                  (std::isnan(loss) ? "nan" : "inf") +
                  " (training diverged; this state is not saved)");
    if (o.checkFinite) {
      const uint8_t *state = p.stateForRead();
      for (const VarRecord &v : m.vars)
        if (v.kind != VarKind::Param && v.kind != VarKind::Optimizer)
          continue; // a buffer may hold -inf on purpose (a mask)
        else if (auto bad = firstNonFinite(v, state))
          throw Error("step " + std::to_string(k) + ": " + varKindName(v.kind) + " '" +
                      v.name + "' holds " + (std::isnan(bad->second) ? "nan" : "inf") +
                      " at element " + std::to_string(bad->first) +
                      (v.sharded() ? " of this rank's piece" : "") +
                      " after the update, with a finite loss " + formatLoss(loss) +
                      " (--check-finite; this state is not saved)");
    }
    const ScalarRecord *used = m.findScalar("lr_used");
    std::vector<std::pair<std::string, float>> extra;
    for (const OutputRecord *out : m.outputsOf("train"))
      if (out->name != "loss" && out->dims.empty() &&
          (out->dtype == DType::F32 || out->dtype == DType::F64 || !isFloat(out->dtype)))
        extra.emplace_back(out->name, static_cast<float>(p.readValue(out->dtype, out->offset)));
    if (log)
      log->step(k, loss,
              used ? static_cast<float>(p.readValue(used->dtype, used->offset))
                   : static_cast<float>(lr),
              extra);
    int64_t done = k + 1;
    if (!o.saveDir.empty() && o.saveEvery && done % o.saveEvery == 0) {
      save(done);
      lastSave = done;
    }
    // Ranks see a signal at different steps; they stop at the same one.
    int sig = isDistributed() ? static_cast<int>(maxOverRanks(gSignal)) : gSignal;
    if (sig) {
      gSignal = sig;
      if (!o.saveDir.empty() && lastSave != done)
        save(done);
      if (isRoot())
        std::fprintf(stderr, "stopped by signal %d after step %lld%s\n",
                   static_cast<int>(gSignal), static_cast<long long>(k),
                   o.saveDir.empty() ? "" : ("; saved " + checkpointPath(o.saveDir)).c_str());
      return 128 + gSignal;
    }
    if (evalFeed && o.evalEvery && done % o.evalEvery == 0) {
      evaluate(k);
      lastEval = done;
    }
  }
  if (!o.saveDir.empty() && lastSave != end)
    save(end);
  if (evalFeed && lastEval != end)
    evaluate(end - 1);
  if (!o.exportPath.empty())
    exportTrained();
  return gSignal ? 128 + gSignal : 0;
}
} // namespace

int runTrain(Program &p, const std::string &exe, int argc, char **argv) {
  TrainOptions o = parseTrainOptions(argc, argv);
  if (o.help) {
    std::fputs(trainHelp(exe, p.manifest).c_str(), stdout);
    return 0;
  }
  Trainer t(p, o);
  return t.run();
}

} // namespace oflow_rt
