//===- TestUtil.h - shared helpers of the runtime unit tests ----*- C++ -*-===//
#ifndef OFLOW_RT_TEST_TESTUTIL_H
#define OFLOW_RT_TEST_TESTUTIL_H

#include "oflow_rt/Error.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

namespace oflow_rt::test {

/// A fresh directory under $TMPDIR, removed at the end of the test.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base ? base : "/tmp") + "/oflow-rt-XXXXXX";
    path = mkdtemp(tmpl.data()) ? tmpl : "";
    EXPECT_FALSE(path.empty());
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
  std::string path;
};

/// Runs `fn`, expects an oflow_rt::Error whose message contains `part`.
template <typename Fn>
void expectError(Fn fn, const std::string &part, int exitCode = -1) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one containing '" << part << "'";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << part;
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos)
        << "multi-line message: " << e.what();
    if (exitCode >= 0) {
      EXPECT_EQ(e.exitCode, exitCode) << e.what();
    }
  }
}

} // namespace oflow_rt::test

#endif
