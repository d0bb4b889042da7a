//===- ModuleRegistry.h - GPU modules recorded early, loaded late -*- C++ -*-===//
//
// MLIR's gpu-to-llvm lowering loads each embedded GPU binary from a global
// constructor (mgpuModuleLoad / mgpuModuleLoadJIT) and unloads it from a
// global destructor: before main(), when the runtime has not yet picked the
// GPU or checked the driver, and after it, when the CUDA runtime may be gone.
// So loading only records a copy of the blob and returns a handle; the first
// mgpuModuleGetFunction loads it (through a Loader: the real one calls CUDA,
// tests pass a fake) and functions are cached by (module, name). Unloading
// forgets the module without calling CUDA: at exit the driver frees it with
// the context. Pure C++; no CUDA here.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_MODULEREGISTRY_H
#define OFLOW_RT_LIB_MODULEREGISTRY_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace oflow_rt {

struct GpuModule {
  std::vector<char> code; // cubin/fatbin bytes, or PTX text with its NUL
  bool ptx = false;
  int optLevel = -1;      // mgpuModuleLoadJIT's, for PTX
  void *library = nullptr; // set when loaded
  bool unloaded = false;
  std::map<std::string, void *> functions;
  // The generated names are constants: a lookup by address first (checked
  // with strcmp, in case an address is reused for another name).
  std::map<const char *, std::pair<std::string, void *>> byPointer;
};

class ModuleRegistry {
public:
  struct Loader {
    /// Loads m.code; returns the library handle (or ends the run itself).
    std::function<void *(const GpuModule &m)> load;
    /// The function `name` of a loaded library (or ends the run itself).
    std::function<void *(const GpuModule &m, const char *name)> function;
  };

  /// Records a cubin/fatbin of `size` bytes (copied); returns its handle.
  void *addBinary(const void *data, size_t size);
  /// Records NUL-terminated PTX (copied); returns its handle.
  void *addPtx(const void *text, int optLevel);
  /// Forgets a module: later lookups through it fail.
  void remove(void *handle);
  /// The function, loading the module first when needed. Throws
  /// std::runtime_error for an unknown or unloaded handle.
  void *function(void *handle, const char *name, const Loader &loader);

  size_t size() const;
  size_t loadedCount() const;
  const GpuModule *find(void *handle) const;

private:
  GpuModule *lookup(void *handle);
  mutable std::mutex mutex;
  // Modules are never freed (handles stay valid until exit; a handle used
  // after unload gets an error, not a dangling pointer).
  std::vector<GpuModule *> modules;
};

/// The process's registry: created on first use and never destroyed, so the
/// generated global constructors and destructors may run in any order
/// relative to the runtime's own statics.
ModuleRegistry &moduleRegistry();

} // namespace oflow_rt

#endif
