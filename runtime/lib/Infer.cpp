//===- Infer.cpp - one inference call from files to files ----------------===//
#include "MpiWorld.h"
#include "oflow_rt/Distributed.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/FileUtil.h"
#include "oflow_rt/Modes.h"
#include "oflow_rt/Npy.h"
#include "oflow_rt/Options.h"
#include "oflow_rt/TensorPb.h"

#include <cstdio>
#include <cstring>
#include <map>

namespace oflow_rt {

namespace {
bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

HostTensor readTensorFile(const std::string &path) {
  if (endsWith(path, ".npy"))
    return readNpy(path);
  if (endsWith(path, ".pb"))
    return readTensorPb(path);
  throw usageError(path + ": unknown file type (want .npy or .pb)");
}
} // namespace

int runInfer(Program &p, const std::string &exe, int argc, char **argv) {
  const Manifest &m = p.manifest;
  InferOptions o = parseInferOptions(argc, argv);
  if (o.help) {
    std::fputs(inferHelp(exe, m).c_str(), stdout);
    return 0;
  }
  p.requireEntry("infer", "inference");
  // One knob for every library pool: oversubscribed OpenMP threads spin.
  oflow_rt_set_threads(o.threads ? o.threads : detail::defaultThreads());
  p.setDeviceOptions(deviceOptions(o.allowTf32, o.noCudaGraph));
  p.loadWeightsFile(o.weights);

  std::vector<NamedFile> files = o.inputs;
  if (o.positional.size() > m.inputs.size())
    throw usageError(std::to_string(o.positional.size()) +
                     " input files for " + std::to_string(m.inputs.size()) +
                     " inputs (" + m.inputNames() + ")");
  for (size_t i = 0; i < o.positional.size(); ++i)
    files.push_back({m.inputs[i].name, o.positional[i]});

  std::map<std::string, bool> given;
  for (const auto &[name, path] : files) {
    const InputRecord *in = m.findInput(name);
    if (!in)
      throw usageError("--input " + name + "=" + path +
                       ": the program has no input '" + name +
                       "' (its inputs: " + m.inputNames() + ")");
    if (given[name])
      throw usageError("input '" + name + "' given twice");
    given[name] = true;
    HostTensor t = readTensorFile(path);
    if (t.dtype != in->dtype)
      throw Error(path + ": dtype " + dtypeName(t.dtype) + ", but input '" +
                  name + "' is " + dtypeName(in->dtype));
    if (t.dims != in->dims)
      throw Error(path + ": shape " + shapeText(t.dims) + ", but input '" +
                  name + "' is " + shapeText(in->dims));
    if (!t.data.empty()) // zero-sized inputs have no bytes (and maybe no pointer)
      copyMyPiece(*in, t.data.data(), p.io.data() + in->offset);
  }
  for (const InputRecord &in : m.inputs)
    if (!given[in.name])
      throw usageError("no file for input '" + in.name + "' (inputs: " +
                       m.inputNames() + ")");

  // Rank 0 alone writes the outputs, each gathered from every rank's piece.
  if (isRoot())
    makeDirectories(o.outputDir);
  p.call("infer");
  for (const OutputRecord *out : m.outputsOf("infer")) {
    HostTensor t;
    t.dtype = out->dtype;
    t.dims = out->dims;
    std::vector<uint8_t> global = gatherToRoot(*out, p.io.data() + out->offset);
    if (!isRoot())
      continue;
    t.data = std::move(global);
    std::string path = o.outputDir + "/" + fileNameFor(out->name) + "." + o.format;
    if (o.format == "pb")
      writeTensorPb(path, out->name, t);
    else
      writeNpy(path, t);
  }
  return 0;
}

} // namespace oflow_rt
