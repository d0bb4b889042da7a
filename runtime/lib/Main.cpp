//===- Main.cpp - main() of every oflow executable -------------------------===//
//
// The mode in the program's manifest picks training or inference. Every
// failure ends here as one line `<exe>: error: <message>` on stderr.
//
//===----------------------------------------------------------------------===//
#include "oflow_rt/Error.h"
#include "oflow_rt/Modes.h"

#include <cstdio>
#include <new>
#include <string>

int main(int argc, char **argv) {
  std::string exe = argc > 0 ? argv[0] : "oflow";
  if (size_t slash = exe.rfind('/'); slash != std::string::npos)
    exe = exe.substr(slash + 1);
  auto fail = [&](std::string message, int code) {
    for (char &c : message)
      if (c == '\n' || c == '\r')
        c = ' ';
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", exe.c_str(), message.c_str());
    return code;
  };
  try {
    oflow_rt::Program program;
    if (program.manifest.mode == "infer")
      return oflow_rt::runInfer(program, exe, argc, argv);
    return oflow_rt::runTrain(program, exe, argc, argv);
  } catch (const oflow_rt::Error &e) {
    return fail(e.what(), e.exitCode);
  } catch (const std::bad_alloc &) {
    return fail("out of memory", 1);
  } catch (const std::exception &e) {
    return fail(e.what(), 1);
  }
}
