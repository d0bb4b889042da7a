//===- BoxingPlanner.cpp - cheapest SBP conversions -----------------------===//
//
// Dijkstra over nd-SBP states. The state space is small (per mesh axis: B,
// S(i) for every tensor axis, P(sum), and P(max) when an end point has it;
// 49 states for a rank-4 tensor on a 2-D mesh), so the search scans for the
// next state linearly instead of keeping a heap: simpler, and the scan order
// is the deterministic tie-break.
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/BoxingPlanner.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace oflow::sbp {

llvm::StringRef str(BoxingKind kind) {
  switch (kind) {
  case BoxingKind::AllReduce:
    return "all-reduce";
  case BoxingKind::ReduceScatter:
    return "reduce-scatter";
  case BoxingKind::AllGather:
    return "all-gather";
  case BoxingKind::AllToAll:
    return "all-to-all";
  case BoxingKind::LocalSlice:
    return "local-slice";
  case BoxingKind::BroadcastToPartial:
    return "broadcast-to-partial";
  case BoxingKind::SplitToPartial:
    return "split-to-partial";
  }
  return "?";
}

std::string BoxingStep::str() const {
  std::string kindName = sbp::str(kind).str();
  if (max && (kind == BoxingKind::AllReduce || kind == BoxingKind::ReduceScatter))
    kindName += "(max)";
  return kindName + " on mesh axis " + std::to_string(meshAxis) + ": " +
         sbp::str(from) + " -> " + sbp::str(to) + ", " +
         std::to_string(bytesPerDevice) + " B/device";
}

std::string BoxingPlan::str() const {
  std::string out;
  for (const BoxingStep &step : steps)
    out += step.str() + "\n";
  return out;
}

namespace {

/// A step without its layouts: what the search prices on every edge.
struct StepCost {
  BoxingKind kind;
  int64_t splitAxis = -1, sourceSplitAxis = -1;
  bool max = false;
  int64_t bytes = 0;
  double seconds = 0;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr double kJoinTurnsSeconds = 1.0;

int64_t ceilLog2(int64_t n) {
  int64_t steps = 0;
  while ((int64_t(1) << steps) < n)
    ++steps;
  return steps;
}

/// Prices changing `state[axis]` from `f` to `t` (f != t) for a tensor of
/// `totalBytes` (`elementBytes` each); `state` is the layout on the other
/// mesh axes (valid, as are both end points). std::nullopt when it is not
/// one plain 1-D step.
std::optional<StepCost> priceStep(const Mesh &mesh, int64_t totalBytes,
                                  int64_t elementBytes, const NdSbp &state,
                                  int64_t axis, Sbp f, Sbp t) {
  // A later mesh axis splitting the same tensor axis is the less
  // significant digit of the piece index: the group along `axis` would hold
  // strided chunks, which no plain collective or slice produces.
  for (int64_t b = axis + 1, e = mesh.rank(); b < e; ++b) {
    if (!state[b].isSplit())
      continue;
    if ((f.isSplit() && f.axis == state[b].axis) ||
        (t.isSplit() && t.axis == state[b].axis))
      return std::nullopt;
  }

  StepCost c;
  bool sends = true;
  if (f.isPartial() && t.kind == SbpKind::Broadcast) {
    c.kind = BoxingKind::AllReduce;
    c.max = f.kind == SbpKind::PartialMax;
  } else if (f.isPartial() && t.isSplit()) {
    c.kind = BoxingKind::ReduceScatter;
    c.max = f.kind == SbpKind::PartialMax;
    c.splitAxis = t.axis;
  } else if (f.isSplit() && t.kind == SbpKind::Broadcast) {
    c.kind = BoxingKind::AllGather;
    c.splitAxis = f.axis;
  } else if (f.isSplit() && t.isSplit()) {
    c.kind = BoxingKind::AllToAll;
    c.splitAxis = t.axis;
    c.sourceSplitAxis = f.axis;
  } else if (f.kind == SbpKind::Broadcast && t.isSplit()) {
    c.kind = BoxingKind::LocalSlice;
    c.splitAxis = t.axis;
    sends = false;
  } else if (f.kind == SbpKind::Broadcast && t.isPartial()) {
    c.kind = BoxingKind::BroadcastToPartial;
    c.max = t.kind == SbpKind::PartialMax;
    sends = false;
  } else if (f.isSplit() && t.kind == SbpKind::PartialSum) {
    c.kind = BoxingKind::SplitToPartial;
    c.splitAxis = f.axis;
    sends = false;
  } else {
    // P(sum) <-> P(max) and S -> P(max) have no one-step form.
    return std::nullopt;
  }
  // On a sequential axis, slicing a value into the micro-batches means it
  // was computed for all of them at once: every micro-batch's activations
  // up to there are alive together, as after a join. Priced like a join;
  // so is S -> P(sum), whose sum over the turns is their concatenation: a
  // join in two steps (free, it let the planner gather a GPT's tokens over
  // the micro-batches, and every activation after them was whole there).
  if (!sends) {
    if ((c.kind == BoxingKind::LocalSlice || c.kind == BoxingKind::SplitToPartial) &&
        mesh.link(axis).sequential)
      c.seconds = kJoinTurnsSeconds;
    return c;
  }

  // T: the piece the group along `axis` works on; the other axes' splits
  // have already divided the tensor.
  // A split along a sequential axis (micro-batches) divides nothing: the
  // device sends each turn's piece in turn.
  int64_t t_ = totalBytes, turns = 1;
  for (int64_t b = 0, e = mesh.rank(); b < e; ++b)
    if (b != axis && state[b].isSplit()) {
      if (mesh.link(b).sequential)
        turns *= mesh.shape[b];
      else
        t_ /= mesh.shape[b];
    }
  int64_t n = mesh.shape[axis];
  switch (c.kind) {
  case BoxingKind::AllReduce:
    // Ring: reduce-scatter then all-gather. A piece of fewer elements than
    // devices cannot be cut into a ring's blocks: MPI libraries (OpenMPI's
    // ring falls back below that) and NCCL's trees then exchange the whole
    // piece in log2(n) rounds, recursive doubling.
    if (t_ / elementBytes < n)
      c.bytes = ceilLog2(n) * t_;
    else
      c.bytes = ceilDiv(2 * (n - 1) * t_, n);
    break;
  case BoxingKind::AllToAll: // keeps 1/n of its T/n piece, sends the rest
    c.bytes = ceilDiv((n - 1) * t_, n * n);
    break;
  default:
    c.bytes = ceilDiv((n - 1) * t_, n);
    break;
  }
  if (c.bytes > 0) {
    Link link = mesh.link(axis);
    c.seconds = turns * link.alphaSeconds + double(c.bytes) / link.bytesPerSecond;
    // Joining the micro-batches of a sequential axis (all-gather,
    // all-to-all; a reduce-scatter, which slices the sum over all of them)
    // waits for every one of them, so all their activations up to there
    // are alive together: what gradient accumulation is for undone. Priced
    // at a second, the planner takes it only when nothing else works (a sum
    // over them, P -> B, is the accumulation itself).
    if (link.sequential &&
        (c.kind == BoxingKind::AllGather || c.kind == BoxingKind::AllToAll ||
         c.kind == BoxingKind::ReduceScatter))
      c.seconds += kJoinTurnsSeconds;
  }
  return c;
}

int64_t tensorBytes(llvm::ArrayRef<int64_t> shape, int64_t elementBytes) {
  int64_t bytes = elementBytes;
  for (int64_t d : shape)
    bytes *= d;
  return bytes;
}

BoxingStep makeStep(const StepCost &c, int64_t axis, const NdSbp &from,
                    const NdSbp &to) {
  BoxingStep step{c.kind, axis, c.splitAxis, c.sourceSplitAxis, c.max,
                  from,   to,   c.bytes,     c.seconds};
  return step;
}

/// Path cost, compared lexicographically; seconds within a relative 1e-9
/// count as equal so that rounding in different summation orders cannot
/// beat the byte and step tie-breaks.
struct Key {
  double seconds = 0;
  int64_t bytes = 0;
  int64_t steps = 0;

  bool operator<(const Key &o) const {
    double tol = 1e-9 * std::max(std::fabs(seconds), std::fabs(o.seconds));
    if (seconds < o.seconds - tol)
      return true;
    if (o.seconds < seconds - tol)
      return false;
    if (bytes != o.bytes)
      return bytes < o.bytes;
    return steps < o.steps;
  }
};

} // namespace

std::optional<BoxingStep> planOneAxisStep(const Mesh &mesh,
                                          llvm::ArrayRef<int64_t> shape,
                                          int64_t elementBytes,
                                          const NdSbp &from, const NdSbp &to,
                                          int64_t meshAxis) {
  if (meshAxis < 0 || meshAxis >= mesh.rank() || elementBytes < 1 ||
      !isValidLayout(mesh, shape, from) || !isValidLayout(mesh, shape, to))
    return std::nullopt;
  for (int64_t b = 0, e = mesh.rank(); b < e; ++b)
    if ((b == meshAxis) == (from[b] == to[b]))
      return std::nullopt; // must differ exactly at meshAxis
  std::optional<StepCost> c =
      priceStep(mesh, tensorBytes(shape, elementBytes), elementBytes, from,
                meshAxis, from[meshAxis], to[meshAxis]);
  if (!c)
    return std::nullopt;
  return makeStep(*c, meshAxis, from, to);
}

std::optional<BoxingPlan> planBoxing(const Mesh &mesh,
                                     llvm::ArrayRef<int64_t> shape,
                                     int64_t elementBytes, const NdSbp &from,
                                     const NdSbp &to) {
  if (elementBytes < 1 || !isValidLayout(mesh, shape, from) ||
      !isValidLayout(mesh, shape, to))
    return std::nullopt;
  if (from == to)
    return BoxingPlan{};

  // Candidate entries per mesh axis, in the fixed order that breaks ties.
  auto has = [&](SbpKind kind) {
    auto pred = [&](const Sbp &s) { return s.kind == kind; };
    return llvm::any_of(from, pred) || llvm::any_of(to, pred);
  };
  llvm::SmallVector<Sbp, 8> cands{Sbp::broadcast()};
  for (int64_t i = 0, e = shape.size(); i < e; ++i)
    cands.push_back(Sbp::split(i));
  cands.push_back(Sbp::partialSum());
  if (has(SbpKind::PartialMax))
    cands.push_back(Sbp::partialMax());

  // State index: mixed radix over mesh axes (axis 0 most significant).
  int64_t k = cands.size(), rank = mesh.rank(), numStates = 1;
  for (int64_t a = 0; a < rank; ++a)
    numStates *= k;
  auto decode = [&](int64_t index) {
    NdSbp nd(rank, Sbp::broadcast());
    for (int64_t a = rank - 1; a >= 0; --a, index /= k)
      nd[a] = cands[index % k];
    return nd;
  };
  auto encode = [&](const NdSbp &nd) {
    int64_t index = 0;
    for (int64_t a = 0; a < rank; ++a)
      index = index * k + (llvm::find(cands, nd[a]) - cands.begin());
    return index;
  };

  int64_t totalBytes = tensorBytes(shape, elementBytes);
  int64_t source = encode(from), target = encode(to);
  std::vector<Key> dist(numStates);
  std::vector<int64_t> prev(numStates, -1);
  std::vector<char> reached(numStates, 0), done(numStates, 0);
  std::vector<char> valid(numStates);
  for (int64_t s = 0; s < numStates; ++s)
    valid[s] = isValidLayout(mesh, shape, decode(s));
  reached[source] = 1;

  while (true) {
    int64_t cur = -1;
    for (int64_t s = 0; s < numStates; ++s)
      if (reached[s] && !done[s] && (cur < 0 || dist[s] < dist[cur]))
        cur = s;
    if (cur < 0 || cur == target)
      break;
    done[cur] = 1;
    NdSbp state = decode(cur);
    int64_t stride = 1;
    for (int64_t a = rank - 1; a >= 0; stride *= k, --a) {
      int64_t digit = (cur / stride) % k;
      for (int64_t c = 0; c < k; ++c) {
        int64_t next = cur + (c - digit) * stride;
        if (c == digit || !valid[next] || done[next])
          continue;
        std::optional<StepCost> step =
            priceStep(mesh, totalBytes, elementBytes, state, a, state[a], cands[c]);
        if (!step)
          continue;
        Key key{dist[cur].seconds + step->seconds,
                dist[cur].bytes + step->bytes, dist[cur].steps + 1};
        if (!reached[next] || key < dist[next]) {
          reached[next] = 1;
          dist[next] = key;
          prev[next] = cur;
        }
      }
    }
  }
  if (!reached[target])
    return std::nullopt;

  // Walk back from the target and re-derive each step with its layouts.
  llvm::SmallVector<int64_t> path;
  for (int64_t s = target; s != source; s = prev[s])
    path.push_back(s);
  BoxingPlan plan;
  NdSbp cur = from;
  for (int64_t s : llvm::reverse(path)) {
    NdSbp next = decode(s);
    int64_t axis = 0;
    while (cur[axis] == next[axis])
      ++axis;
    std::optional<StepCost> c =
        priceStep(mesh, totalBytes, elementBytes, cur, axis, cur[axis], next[axis]);
    plan.steps.push_back(makeStep(*c, axis, cur, next));
    plan.bytesPerDevice += c->bytes;
    plan.seconds += c->seconds;
    cur = std::move(next);
  }
  return plan;
}

} // namespace oflow::sbp
