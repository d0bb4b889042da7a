//===- FuzzWorkDir.h - a folder of the harness process's own ----*- C++ -*-===//
//
// Harnesses that must hand their input to a reader as a file write it in a
// folder of their own process, so parallel fuzzers never share a file (and
// an ONNX model's external data can only name what is in that folder).
// No MLIR and no runtime headers: both kinds of harness include it.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_TEST_FUZZ_FUZZWORKDIR_H
#define OFLOW_TEST_FUZZ_FUZZWORKDIR_H

#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

inline const std::string &fuzzWorkDir() {
  static const std::string dir = [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string d = std::string(tmp && *tmp ? tmp : "/tmp") + "/oflow-fuzz-" +
                    std::to_string(::getpid());
    ::mkdir(d.c_str(), 0700);
    return d;
  }();
  return dir;
}

#endif
