//===- oflow_rt/Error.h - one-line errors with an exit code -----*- C++ -*-===//
//
// Every failure the user can cause (a bad flag, a bad file, a diverging loss)
// becomes one Error: main prints `<exe>: error: <message>` on one line and
// exits with `exitCode`. Usage mistakes exit 2, everything else 1.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_ERROR_H
#define OFLOW_RT_ERROR_H

#include <stdexcept>
#include <string>

namespace oflow_rt {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message, int exitCode = 1)
      : std::runtime_error(message), exitCode(exitCode) {}
  int exitCode;
};

/// A mistake on the command line: exits 2, as getopt-style tools do.
inline Error usageError(const std::string &message) { return Error(message, 2); }

/// strerror(errno) for messages about files.
std::string errnoText();

} // namespace oflow_rt

#endif
