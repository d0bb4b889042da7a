//===- GraphReplay.cpp - replaying an entry's launches as one graph -------===//
#include "GraphReplay.h"

#include <algorithm>
#include <cstring>

namespace oflow_rt {

namespace {
thread_local LaunchTrace *gActive = nullptr;
} // namespace

void LaunchTrace::add(const char *kind, const void *data, size_t size) {
  kinds.emplace_back(kind);
  bytes.append(static_cast<const char *>(data), size);
  ends.push_back(bytes.size());
}

void LaunchTrace::addUncapturable(const std::string &reason) {
  if (why.empty())
    why = reason;
}

size_t LaunchTrace::firstDifference(const LaunchTrace &o) const {
  size_t n = std::min(size(), o.size());
  for (size_t i = 0; i < n; ++i) {
    size_t begin = i ? ends[i - 1] : 0, oBegin = i ? o.ends[i - 1] : 0;
    if (kinds[i] != o.kinds[i] || ends[i] - begin != o.ends[i] - oBegin ||
        std::memcmp(bytes.data() + begin, o.bytes.data() + oBegin, ends[i] - begin) != 0)
      return i;
  }
  return size() == o.size() ? std::string::npos : n;
}

std::string LaunchTrace::describe(size_t op) const {
  return "op " + std::to_string(op + 1) + " of " + std::to_string(size()) +
         (op < size() ? " (" + kinds[op] + ")" : std::string(" (none: it ended)"));
}

LaunchTrace *LaunchTrace::active() { return gActive; }

void noteUncapturable(const char *what) {
  if (gActive)
    gActive->addUncapturable(what);
}

LaunchTrace::Scope::Scope(LaunchTrace *trace) : saved(gActive) { gActive = trace; }
LaunchTrace::Scope::~Scope() { gActive = saved; }

EntryGraph::EntryGraph(std::unique_ptr<GraphBackend> b, bool enabled, std::string why)
    : backend(std::move(b)), state(enabled ? State::Record1 : State::Eager),
      reason(enabled ? "" : std::move(why)) {}

void EntryGraph::giveUp(std::string why) {
  state = State::Eager;
  reason = std::move(why);
}

void EntryGraph::call(const std::function<void()> &enqueue) {
  switch (state) {
  case State::Eager:
    enqueue();
    return;
  case State::Replay:
    backend->launch();
    ++launches;
    return;
  case State::Record1: {
    {
      LaunchTrace::Scope scope(&first);
      enqueue();
    }
    if (!first.uncapturable().empty())
      giveUp(first.uncapturable());
    else
      state = State::Record2;
    return;
  }
  case State::Record2: {
    LaunchTrace second;
    {
      LaunchTrace::Scope scope(&second);
      enqueue();
    }
    if (!second.uncapturable().empty())
      giveUp(second.uncapturable());
    else if (size_t d = second.firstDifference(first); d != std::string::npos)
      giveUp("call 2 enqueued other work than call 1 (" + second.describe(d) + ")");
    else
      state = State::Capture;
    return;
  }
  case State::Capture: {
    LaunchTrace third;
    backend->beginCapture();
    {
      LaunchTrace::Scope scope(&third);
      enqueue();
    }
    std::string why;
    if (!backend->endCapture(why)) {
      giveUp("the capture failed: " + why);
      enqueue(); // nothing captured has run
      return;
    }
    if (size_t d = third.firstDifference(first);
        d != std::string::npos || !third.uncapturable().empty()) {
      backend->discard();
      giveUp(third.uncapturable().empty()
                 ? "call 3 enqueued other work than calls 1 and 2 (" + third.describe(d) + ")"
                 : third.uncapturable());
      enqueue();
      return;
    }
    state = State::Replay;
    backend->launch();
    ++launches;
    return;
  }
  }
}

} // namespace oflow_rt
