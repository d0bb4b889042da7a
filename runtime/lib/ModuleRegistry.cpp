//===- ModuleRegistry.cpp - GPU modules recorded early, loaded late -------===//
#include "ModuleRegistry.h"

#include <cstring>
#include <stdexcept>

namespace oflow_rt {

void *ModuleRegistry::addBinary(const void *data, size_t size) {
  auto *m = new GpuModule;
  const char *p = static_cast<const char *>(data);
  m->code.assign(p, p + size);
  std::lock_guard<std::mutex> lock(mutex);
  modules.push_back(m);
  return m;
}

void *ModuleRegistry::addPtx(const void *text, int optLevel) {
  auto *m = new GpuModule;
  const char *p = static_cast<const char *>(text);
  m->code.assign(p, p + std::strlen(p) + 1);
  m->ptx = true;
  m->optLevel = optLevel;
  std::lock_guard<std::mutex> lock(mutex);
  modules.push_back(m);
  return m;
}

GpuModule *ModuleRegistry::lookup(void *handle) {
  for (GpuModule *m : modules)
    if (m == handle)
      return m;
  return nullptr;
}

const GpuModule *ModuleRegistry::find(void *handle) const {
  std::lock_guard<std::mutex> lock(mutex);
  return const_cast<ModuleRegistry *>(this)->lookup(handle);
}

void ModuleRegistry::remove(void *handle) {
  std::lock_guard<std::mutex> lock(mutex);
  if (GpuModule *m = lookup(handle)) {
    m->unloaded = true;
    m->functions.clear();
    m->byPointer.clear();
  }
}

void *ModuleRegistry::function(void *handle, const char *name,
                               const Loader &loader) {
  std::lock_guard<std::mutex> lock(mutex);
  GpuModule *m = lookup(handle);
  if (!m)
    throw std::runtime_error("mgpuModuleGetFunction: unknown module handle");
  if (m->unloaded)
    throw std::runtime_error(std::string("mgpuModuleGetFunction(") + name +
                             "): the module was unloaded");
  if (auto it = m->byPointer.find(name);
      it != m->byPointer.end() && it->second.first == name)
    return it->second.second;
  void *f = nullptr;
  if (auto it = m->functions.find(name); it != m->functions.end()) {
    f = it->second;
  } else {
    if (!m->library)
      m->library = loader.load(*m);
    f = loader.function(*m, name);
    m->functions[name] = f;
  }
  m->byPointer[name] = {name, f};
  return f;
}

size_t ModuleRegistry::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  return modules.size();
}

size_t ModuleRegistry::loadedCount() const {
  std::lock_guard<std::mutex> lock(mutex);
  size_t n = 0;
  for (const GpuModule *m : modules)
    n += m->library && !m->unloaded;
  return n;
}

ModuleRegistry &moduleRegistry() {
  static ModuleRegistry *r = new ModuleRegistry;
  return *r;
}

} // namespace oflow_rt
