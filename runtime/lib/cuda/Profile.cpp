//===- Profile.cpp - per-kernel GPU times (OFLOW_CUDA_PROFILE=1) ----------===//
#include "Profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace oflow_rt::cuda {
namespace {
struct Record {
  const char *label; // interned in State::labels
  cudaEvent_t start, end;
};

struct State {
  std::mutex mutex;
  std::vector<Record> records;
  std::map<std::string, std::string> labels; // interned label texts
  std::map<const void *, std::string> kernels;
  bool reported = false;
};

State &state() {
  static auto *s = new State; // never destroyed: read by the atexit report
  return *s;
}

const char *intern(State &s, const char *label) {
  auto it = s.labels.find(label);
  if (it == s.labels.end())
    it = s.labels.emplace(label, label).first;
  return it->second.c_str();
}

// Prints the GPU time per label of the records that have finished; with
// `wait`, waits for all of them. The caller holds the mutex.
void print(State &s, bool wait, const char *when) {
  struct Total {
    double ms = 0;
    long count = 0;
  };
  std::map<std::string, Total> totals;
  double all = 0;
  long unread = 0;
  const Record *running = nullptr;
  for (size_t i = 0; i < s.records.size(); ++i) {
    const Record &r = s.records[i];
    if (!wait && cudaEventQuery(r.end) != cudaSuccess) {
      if (!running)
        running = &r;
      continue;
    }
    float ms = 0;
    if (cudaEventSynchronize(r.end) != cudaSuccess ||
        cudaEventElapsedTime(&ms, r.start, r.end) != cudaSuccess) {
      ++unread;
      continue;
    }
    Total &t = totals[r.label];
    t.ms += ms;
    ++t.count;
    all += ms;
  }
  std::vector<std::pair<std::string, Total>> rows(totals.begin(), totals.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto &a, const auto &b) { return a.second.ms > b.second.ms; });
  int top = 40;
  if (const char *v = std::getenv("OFLOW_CUDA_PROFILE_TOP"))
    top = std::max(1, std::atoi(v));
  std::fprintf(stderr,
               "oflow cuda profile (%s): %zu launches, %zu labels, %.3f ms of GPU time%s\n",
               when, s.records.size(), rows.size(), all,
               unread ? " (some events could not be read)" : "");
  if (running)
    std::fprintf(stderr, "  still running: %s\n", running->label);
  std::fprintf(stderr, "  %10s %6s %8s %10s  %s\n", "total ms", "%", "calls",
               "ms/call", "label");
  for (int i = 0; i < static_cast<int>(rows.size()) && i < top; ++i) {
    const Total &t = rows[i].second;
    std::fprintf(stderr, "  %10.3f %6.2f %8ld %10.4f  %s\n", t.ms,
                 all > 0 ? 100.0 * t.ms / all : 0.0, t.count, t.ms / t.count,
                 rows[i].first.c_str());
  }
  std::fflush(stderr);
}

// Runs at exit, before the CUDA runtime's own teardown (it registered its
// handler when it started, which was before the first record).
void report() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.reported || s.records.empty())
    return;
  s.reported = true;
  print(s, /*wait=*/true, "at exit");
}

// With OFLOW_CUDA_PROFILE_EVERY=SECONDS, a thread prints what has finished so
// far (and what is still running) that often: a run that never ends still
// says where its time goes.
void watch(double seconds) {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.reported)
      return;
    print(s, /*wait=*/false, "so far");
  }
}
} // namespace

bool profiling() {
  static const bool on = [] {
    const char *v = std::getenv("OFLOW_CUDA_PROFILE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

ProfileScope::ProfileScope(cudaStream_t stream, const char *label) : stream(stream) {
  if (!profiling())
    return;
  State &s = state();
  Record r{nullptr, nullptr, nullptr};
  if (cudaEventCreate(&r.start) != cudaSuccess || cudaEventCreate(&r.end) != cudaSuccess ||
      cudaEventRecord(r.start, stream) != cudaSuccess)
    return; // profiling is best effort: the run itself checks its own calls
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.records.empty()) {
    std::atexit(report);
    if (const char *v = std::getenv("OFLOW_CUDA_PROFILE_EVERY"); v && std::atof(v) > 0)
      std::thread(watch, std::atof(v)).detach();
  }
  r.label = intern(s, label);
  index = static_cast<long>(s.records.size());
  s.records.push_back(r);
}

ProfileScope::~ProfileScope() {
  if (index < 0)
    return;
  State &s = state();
  cudaEvent_t end;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    end = s.records[index].end;
  }
  cudaEventRecord(end, stream);
}

void nameKernel(const void *kernel, const char *name) {
  if (!profiling())
    return;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.kernels[kernel] = name;
}

const char *kernelName(const void *kernel) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.kernels.find(kernel);
  if (it == s.kernels.end()) {
    char text[40];
    std::snprintf(text, sizeof text, "kernel@%p", kernel);
    it = s.kernels.emplace(kernel, text).first;
  }
  return it->second.c_str();
}

} // namespace oflow_rt::cuda
