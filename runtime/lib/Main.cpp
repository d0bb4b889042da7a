//===- Main.cpp - main() of every oflow executable -------------------------===//
//
// The mode in the program's manifest picks training or inference. Every
// failure ends here as one line `<exe>: error: <message>` on stderr. In a
// mesh program a failing rank then aborts the whole job (MPI_Abort), so no
// other rank waits forever in a collective for it.
//
//===----------------------------------------------------------------------===//
#include "oflow_rt/Distributed.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/Modes.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

int main(int argc, char **argv) {
  // A file size limit (RLIMIT_FSIZE, a quota) must end a save with an
  // error naming the file, as a full disk does, not kill the rank mid-write
  // with a signal: the write then fails with EFBIG.
  std::signal(SIGXFSZ, SIG_IGN);
  std::string path = argc > 0 ? argv[0] : "oflow";
  std::string exe = path;
  if (size_t slash = exe.rfind('/'); slash != std::string::npos)
    exe = exe.substr(slash + 1);
  auto fail = [&](std::string message, int code) {
    for (char &c : message)
      if (c == '\n' || c == '\r')
        c = ' ';
    if (oflow_rt::isDistributed() && !oflow_rt::isRoot())
      message = "rank " + std::to_string(oflow_rt::worldRank()) + ": " + message;
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", exe.c_str(), message.c_str());
    std::fflush(stderr);
    oflow_rt::abortDistributed(code);
    return code;
  };
  // --help needs no mpirun: it only reads the manifest.
  bool help = false;
  for (int i = 1; i < argc; ++i)
    help |= !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h");
  int code = 0;
  try {
    oflow_rt::Program program(path, help);
    if (program.manifest.mode == "infer")
      code = oflow_rt::runInfer(program, exe, argc, argv);
    else
      code = oflow_rt::runTrain(program, exe, argc, argv);
  } catch (const oflow_rt::Error &e) {
    return fail(e.what(), e.exitCode);
  } catch (const std::bad_alloc &) {
    return fail("out of memory", 1);
  } catch (const std::exception &e) {
    return fail(e.what(), 1);
  }
  oflow_rt::finishDistributed();
  return code;
}
