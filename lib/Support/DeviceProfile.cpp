//===- DeviceProfile.cpp - built-in device profiles and their JSON form ---===//
#include "oflow/Support/DeviceProfile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

namespace oflow {

double DeviceProfile::gemmFlopsPerSecond(llvm::StringRef precision) const {
  if (precision == "bf16")
    return bf16FlopsPerSecond;
  if (precision == "fp16")
    return fp16FlopsPerSecond;
  if (precision == "tf32")
    return tf32FlopsPerSecond;
  return fp32FlopsPerSecond;
}

std::optional<double>
DeviceProfile::measuredGemmSeconds(llvm::StringRef precision, int64_t m, int64_t n,
                                   int64_t k, int64_t batch) const {
  for (const MeasuredGemm &g : gemms)
    if (g.precision == precision && g.m == m && g.n == n && g.k == k &&
        g.batch == batch)
      return g.seconds;
  return std::nullopt;
}

namespace {
/// name, memory B/s, bf16 = fp16, tf32, fp32 FLOP/s (GPUs: about two thirds
/// of the dense datasheet figures, what cuBLASLt sustains), SMs, memory.
struct Builtin {
  const char *name;
  double hbm, half, tf32, fp32;
  int64_t sms;
  double memoryBytes;
};
constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr Builtin kBuiltins[] = {
    {"h200", 4.3e12, 650e12, 330e12, 50e12, 132, 140 * kGiB},
    {"h100", 3.35e12, 650e12, 330e12, 45e12, 132, 80 * kGiB},
    {"a100", 2.0e12, 210e12, 105e12, 13e12, 108, 80 * kGiB},
};
} // namespace

std::vector<std::string> builtinDeviceProfileNames() {
  std::vector<std::string> names;
  for (const Builtin &b : kBuiltins)
    names.push_back(b.name);
  names.push_back("cpu");
  return names;
}

std::optional<DeviceProfile> builtinDeviceProfile(llvm::StringRef name) {
  if (name == "cpu") {
    // One CPU rank: a few vectorised cores, 100 GFLOP/s in every precision
    // (no faster GEMM units), 20 GB/s of memory. No kernels: the latency,
    // launch and thread figures only keep the schema whole.
    DeviceProfile p;
    p.name = "cpu";
    p.hbmBytesPerSecond = 20e9;
    p.bf16FlopsPerSecond = p.fp16FlopsPerSecond = 100e9;
    p.tf32FlopsPerSecond = p.fp32FlopsPerSecond = 100e9;
    p.memoryLatencySeconds = 100e-9;
    p.launchSeconds = p.graphLaunchSeconds = 1e-6;
    p.multiprocessors = 1;
    p.maxThreadsPerMultiprocessor = 1;
    p.gpu = false;
    return p;
  }
  for (const Builtin &b : kBuiltins) {
    if (name != b.name)
      continue;
    DeviceProfile p;
    p.name = b.name;
    p.hbmBytesPerSecond = b.hbm;
    p.bf16FlopsPerSecond = p.fp16FlopsPerSecond = b.half;
    p.tf32FlopsPerSecond = b.tf32;
    p.fp32FlopsPerSecond = b.fp32;
    p.memoryLatencySeconds = 600e-9;
    p.launchSeconds = 4e-6;
    p.graphLaunchSeconds = 1e-6;
    p.multiprocessors = b.sms;
    p.maxThreadsPerMultiprocessor = 2048;
    p.memoryBytes = b.memoryBytes;
    return p;
  }
  return std::nullopt;
}

static llvm::Error profileError(llvm::StringRef path, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "device profile " + path + ": " + what);
}

llvm::Expected<DeviceProfile> loadDeviceProfile(llvm::StringRef nameOrPath) {
  if (auto builtin = builtinDeviceProfile(nameOrPath))
    return *builtin;
  auto buffer = llvm::MemoryBuffer::getFile(nameOrPath);
  if (!buffer) {
    std::string names;
    for (const std::string &n : builtinDeviceProfileNames())
      names += (names.empty() ? "" : ", ") + n;
    return profileError(nameOrPath, "not a built-in profile (" + names +
                                        ") and not a readable file: " +
                                        buffer.getError().message());
  }
  llvm::Expected<llvm::json::Value> json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return profileError(nameOrPath, "invalid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return profileError(nameOrPath, "expected a JSON object");
  DeviceProfile p;
  if (auto name = root->getString("name"))
    p.name = name->str();
  else
    return profileError(nameOrPath, "missing string field \"name\"");
  auto number = [&](const llvm::json::Object &o, llvm::StringRef key,
                    double &out) -> llvm::Error {
    std::optional<double> v = o.getNumber(key);
    if (!v || !(*v > 0))
      return profileError(nameOrPath, "field \"" + key + "\" must be a positive number");
    out = *v;
    return llvm::Error::success();
  };
  double sms = 0, threads = 0;
  for (auto [key, out] : {std::pair<const char *, double *>{"hbm_bytes_per_s", &p.hbmBytesPerSecond},
                          {"memory_latency_s", &p.memoryLatencySeconds},
                          {"launch_s", &p.launchSeconds},
                          {"graph_launch_s", &p.graphLaunchSeconds},
                          {"multiprocessors", &sms},
                          {"max_threads_per_multiprocessor", &threads}})
    if (llvm::Error e = number(*root, key, *out))
      return std::move(e);
  const llvm::json::Object *flops = root->getObject("flops_per_s");
  if (!flops)
    return profileError(nameOrPath, "missing object \"flops_per_s\"");
  for (auto [key, out] : {std::pair<const char *, double *>{"bf16", &p.bf16FlopsPerSecond},
                          {"fp16", &p.fp16FlopsPerSecond},
                          {"tf32", &p.tf32FlopsPerSecond},
                          {"fp32", &p.fp32FlopsPerSecond}})
    if (llvm::Error e = number(*flops, key, *out))
      return profileError(nameOrPath, "flops_per_s: " + llvm::toString(std::move(e)));
  p.multiprocessors = static_cast<int64_t>(sms);
  p.maxThreadsPerMultiprocessor = static_cast<int64_t>(threads);
  if (root->get("memory_bytes"))
    if (llvm::Error e = number(*root, "memory_bytes", p.memoryBytes))
      return std::move(e);
  if (const llvm::json::Value *list = root->get("gemms")) {
    const llvm::json::Array *gemms = list->getAsArray();
    if (!gemms)
      return profileError(nameOrPath, "field \"gemms\" must be an array");
    for (auto [i, v] : llvm::enumerate(*gemms)) {
      std::string where = "gemms[" + std::to_string(i) + "]";
      const llvm::json::Object *o = v.getAsObject();
      if (!o)
        return profileError(nameOrPath, where + " must be an object");
      MeasuredGemm g;
      std::optional<llvm::StringRef> precision = o->getString("precision");
      if (!precision ||
          !llvm::is_contained({"bf16", "fp16", "tf32", "fp32"}, *precision))
        return profileError(nameOrPath, where + ": \"precision\" must be bf16, "
                                                "fp16, tf32 or fp32");
      g.precision = precision->str();
      for (auto [key, out] : {std::pair<const char *, int64_t *>{"m", &g.m},
                              {"n", &g.n}, {"k", &g.k}, {"batch", &g.batch}}) {
        std::optional<int64_t> d = o->getInteger(key);
        if (!d || *d <= 0)
          return profileError(nameOrPath, where + ": \"" + key +
                                              "\" must be a positive integer");
        *out = *d;
      }
      std::optional<double> seconds = o->getNumber("seconds");
      if (!seconds || !(*seconds > 0))
        return profileError(nameOrPath,
                            where + ": field \"seconds\" must be a positive number");
      g.seconds = *seconds;
      p.gemms.push_back(std::move(g));
    }
  }
  // A calibration file describes a GPU unless it says "gpu": false.
  p.gpu = true;
  if (const llvm::json::Value *gpu = root->get("gpu")) {
    if (!gpu->getAsBoolean())
      return profileError(nameOrPath, "field \"gpu\" must be true or false");
    p.gpu = *gpu->getAsBoolean();
  }
  return p;
}

std::string deviceProfileJson(const DeviceProfile &p) {
  llvm::json::Object flops{{"bf16", p.bf16FlopsPerSecond},
                           {"fp16", p.fp16FlopsPerSecond},
                           {"tf32", p.tf32FlopsPerSecond},
                           {"fp32", p.fp32FlopsPerSecond}};
  llvm::json::Value v = llvm::json::Object{
      {"name", p.name},
      {"hbm_bytes_per_s", p.hbmBytesPerSecond},
      {"flops_per_s", std::move(flops)},
      {"memory_latency_s", p.memoryLatencySeconds},
      {"launch_s", p.launchSeconds},
      {"graph_launch_s", p.graphLaunchSeconds},
      {"multiprocessors", p.multiprocessors},
      {"max_threads_per_multiprocessor", p.maxThreadsPerMultiprocessor}};
  if (p.memoryBytes > 0)
    v.getAsObject()->try_emplace("memory_bytes", p.memoryBytes);
  if (!p.gpu)
    v.getAsObject()->try_emplace("gpu", false);
  if (!p.gemms.empty()) {
    llvm::json::Array gemms;
    for (const MeasuredGemm &g : p.gemms)
      gemms.push_back(llvm::json::Object{{"precision", g.precision}, {"m", g.m},
                                         {"n", g.n}, {"k", g.k},
                                         {"batch", g.batch}, {"seconds", g.seconds}});
    v.getAsObject()->try_emplace("gemms", std::move(gemms));
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", v);
  return text;
}

} // namespace oflow
