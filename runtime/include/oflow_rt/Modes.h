//===- oflow_rt/Modes.h - what the executable does per manifest mode -*- C++ -*-===//
#ifndef OFLOW_RT_MODES_H
#define OFLOW_RT_MODES_H

#include "oflow_rt/Program.h"

#include <string>

namespace oflow_rt {

/// Both return the process exit code and throw Error for failures.
int runTrain(Program &p, const std::string &exe, int argc, char **argv);
int runInfer(Program &p, const std::string &exe, int argc, char **argv);

} // namespace oflow_rt

#endif
