//===- RuntimeFuzzer.cpp - the executable's file readers ------------------===//
//
// One reader per harness (OFLOW_FUZZ_READER): .npy data, ONNX TensorProto
// .pb inputs, the manifest, and a checkpoint (index and shard). The runtime
// reports bad input by throwing oflow_rt::Error (one line, non-zero exit);
// anything else, a crash, a hang or a sanitizer report is a finding.
//
// A checkpoint's files end with a checksum, which random bytes almost never
// match, so that harness frames the input itself: bytes 0-7 are the step,
// then the index text up to a NUL, then the shard's pieces; it writes the
// index (OFLOWCK2) and the one shard its seed names (OFLOWSH1) with their
// checksums, and loads them against a fixed two-variable manifest.
//
// OFLOW_FUZZ_VERBOSE=1 prints each input's error (to see what seeds reach).
//
//===----------------------------------------------------------------------===//
#include "FuzzWorkDir.h"
#include "oflow_rt/Checkpoint.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/Manifest.h"
#include "oflow_rt/Npy.h"
#include "oflow_rt/TensorPb.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#define OFLOW_READER_npy 1
#define OFLOW_READER_tensor_pb 2
#define OFLOW_READER_manifest 3
#define OFLOW_READER_checkpoint 4
#define OFLOW_CAT(a, b) a##b
#define OFLOW_READER(r) OFLOW_CAT(OFLOW_READER_, r)

namespace {

const std::string &workDir() { return fuzzWorkDir(); }

void writeFile(const std::string &path, const std::string &bytes) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::abort();
  }
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

[[maybe_unused]] std::string u64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

[[maybe_unused]] std::string withChecksum(std::string bytes) {
  return bytes + u64(oflow_rt::fnv1a64(bytes.data(), bytes.size()));
}

/// The manifest the checkpoint harness loads against (CheckpointTest's).
[[maybe_unused]] const oflow_rt::Manifest &checkpointManifest() {
  static const oflow_rt::Manifest m = oflow_rt::parseManifest(
      "oflow-manifest 1\nmode train\nbatch 1\nstate_bytes 1024\nio_bytes 0\n"
      "arena_bytes 0\nvar w param f32 2 8 8 0 0\n"
      "var w.m optimizer f32 2 8 8 512 -1\n");
  return m;
}

void readOne(const std::string &bytes) {
#if OFLOW_READER(OFLOW_FUZZ_READER) == OFLOW_READER_npy
  oflow_rt::parseNpy(bytes, "fuzz.npy");
#elif OFLOW_READER(OFLOW_FUZZ_READER) == OFLOW_READER_tensor_pb
  std::string path = workDir() + "/input.pb";
  writeFile(path, bytes);
  oflow_rt::readTensorPb(path);
#elif OFLOW_READER(OFLOW_FUZZ_READER) == OFLOW_READER_manifest
  oflow_rt::parseManifest(bytes);
#elif OFLOW_READER(OFLOW_FUZZ_READER) == OFLOW_READER_checkpoint
  if (bytes.size() < 8)
    return;
  uint64_t step = 0;
  std::memcpy(&step, bytes.data(), 8);
  size_t nul = bytes.find('\0', 8);
  std::string text = bytes.substr(8, nul == std::string::npos ? std::string::npos : nul - 8);
  std::string pieces = nul == std::string::npos ? std::string() : bytes.substr(nul + 1);
  std::string dir = workDir() + "/ckpt-dir";
  ::mkdir(dir.c_str(), 0700);
  writeFile(dir + "/ckpt",
            withChecksum("OFLOWCK2" + u64(step) + u64(text.size()) + text));
  writeFile(dir + "/ckpt-7-0000000000000000-r0of1",
            withChecksum("OFLOWSH1" + u64(step) + pieces));
  std::vector<uint8_t> state(checkpointManifest().stateBytes);
  oflow_rt::readCheckpoint(dir, checkpointManifest(), state.data(), {0});
#else
#error "OFLOW_FUZZ_READER must be npy, tensor_pb, manifest or checkpoint"
#endif
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    readOne(std::string(reinterpret_cast<const char *>(data), size));
  } catch (const oflow_rt::Error &e) {
    // A clean, named error: what bad input must give.
    static const bool verbose = std::getenv("OFLOW_FUZZ_VERBOSE") != nullptr;
    if (verbose)
      std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 0;
}
