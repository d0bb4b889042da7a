//===- ExactPlanner.cpp - layout choice as an integer program ------------===//
//
// Ties are merged first (a tied group is one node carrying the sum of its
// members' costs; an edge inside a group costs its diagonal). Then, while
// any applies, three exact reductions: choices that another choice of the
// same node dominates (no dearer on the node and on every edge, whatever the
// neighbours choose) are forbidden; edges whose cost is a sum of one term per
// end move into their nodes; nodes of degree 0, 1 and 2 are eliminated: a leaf
// adds to its neighbour, for each of the neighbour's choices, its own best
// response; a node between two others becomes an edge between them whose
// cost, for each pair of their choices, is the node's best response. Chains
// of elementwise ops, and the single-use ops hanging off the main path, go
// away this way. The rest is Alpa's program: a binary s(n, c) per node and
// choice, one-hot per node, and per edge a continuous e(g, h) whose row and
// column sums equal the s of the choices in row group g and column group h
// (choices whose rows, or columns, of the edge's matrix are equal are
// grouped: the program never needs to tell them apart on that edge).
//
//===----------------------------------------------------------------------===//
#include "oflow/Sbp/ExactPlanner.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <Cbc_C_Interface.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>

namespace oflow::sbp {

static constexpr double kInfinity = std::numeric_limits<double>::infinity();
/// The solver works in microseconds: seconds are too close to its
/// tolerances.
static constexpr double kScale = 1e6;
static constexpr double kMiB = 1024.0 * 1024.0;

double evaluate(const PlanProblem &problem, llvm::ArrayRef<int> choice) {
  double seconds = 0;
  for (size_t n = 0; n < problem.nodeCost.size(); ++n)
    seconds += problem.nodeCost[n][choice[n]];
  for (const PlanProblem::Edge &e : problem.edges) {
    size_t cols = problem.nodeCost[e.to].size();
    seconds += e.cost[choice[e.from] * cols + choice[e.to]];
  }
  return seconds;
}

bool fitsMemory(const PlanProblem &problem, llvm::ArrayRef<int> choice) {
  for (const PlanProblem::MemoryRow &row : problem.memory) {
    double bytes = 0;
    for (const auto &[n, perChoice] : row.terms)
      bytes += perChoice[choice[n]];
    if (bytes > row.limit * (1 + 1e-9))
      return false;
  }
  return true;
}

namespace {

struct Matrix {
  int rows = 0, cols = 0;
  std::vector<double> v;
  Matrix() = default;
  Matrix(int rows, int cols, double fill = 0)
      : rows(rows), cols(cols), v(static_cast<size_t>(rows) * cols, fill) {}
  double &at(int i, int j) { return v[static_cast<size_t>(i) * cols + j]; }
  double at(int i, int j) const { return v[static_cast<size_t>(i) * cols + j]; }
  Matrix transposed() const {
    Matrix t(cols, rows);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        t.at(j, i) = at(i, j);
    return t;
  }
};

/// Groups the indices whose rows of `m` (or columns, if `byColumn`) are
/// equal; ignores indices not in `allowed`.
std::vector<std::vector<int>> groupEqual(const Matrix &m, bool byColumn,
                                         const std::vector<bool> &allowed) {
  std::map<std::vector<double>, size_t> index;
  std::vector<std::vector<int>> groups;
  int count = byColumn ? m.cols : m.rows, other = byColumn ? m.rows : m.cols;
  for (int i = 0; i < count; ++i) {
    if (!allowed[i])
      continue;
    std::vector<double> line(other);
    for (int k = 0; k < other; ++k)
      line[k] = byColumn ? m.at(k, i) : m.at(i, k);
    auto [it, inserted] = index.try_emplace(std::move(line), groups.size());
    if (inserted)
      groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

/// What an elimination needs to recover the eliminated node's choice from
/// its neighbours' (decided later).
struct Elimination {
  int node;
  int a = -1, c = -1;     // neighbours (none, one or two)
  std::vector<int> pick;  // by a's choice, or a's x c's choices, or one
};

/// The working graph: tied groups merged, nodes eliminated one by one.
class Graph {
public:
  std::vector<std::vector<double>> cost;
  std::vector<bool> alive;
  std::vector<std::set<int>> adjacent;
  /// Keyed (low, high), oriented low -> high.
  std::map<std::pair<int, int>, Matrix> edges;
  /// Per node, its bytes per choice in each memory row that names it: such
  /// nodes are kept for the solver, and a choice dominates another only
  /// if it also takes no more memory.
  std::vector<std::vector<std::vector<double>>> memoryBytes;
  /// For a choice forbidden as dominated, the choice that dominated it (no
  /// dearer, no larger): where a start's choice goes.
  std::vector<std::vector<int>> dominatedBy;

  int choices(int n) const { return static_cast<int>(cost[n].size()); }

  /// Adds `m` (oriented a -> b) to the edge between a and b.
  void addEdge(int a, int b, const Matrix &m) {
    if (a > b)
      return addEdge(b, a, m.transposed());
    auto [it, inserted] = edges.try_emplace({a, b}, m);
    if (!inserted)
      for (size_t k = 0; k < m.v.size(); ++k)
        it->second.v[k] += m.v[k];
    adjacent[a].insert(b);
    adjacent[b].insert(a);
  }
  /// The edge oriented a -> b.
  Matrix edge(int a, int b) const {
    return a < b ? edges.at({a, b}) : edges.at({b, a}).transposed();
  }
  void removeNode(int n) {
    for (int m : adjacent[n]) {
      adjacent[m].erase(n);
      edges.erase({std::min(n, m), std::max(n, m)});
    }
    adjacent[n].clear();
    alive[n] = false;
  }

  bool allowed(int n, int c) const { return std::isfinite(cost[n][c]); }

  /// Forbids the choices of n that another allowed choice dominates (no
  /// dearer on n itself nor on any edge whatever the neighbour chooses):
  /// some optimum never needs them. Of equal choices the first stays.
  bool pruneDominated(int n) {
    std::vector<std::pair<int, Matrix>> around;
    for (int m : adjacent[n])
      around.emplace_back(m, edge(n, m));
    auto noWorse = [&](int better, int worse) {
      if (cost[n][better] > cost[n][worse])
        return false;
      for (const std::vector<double> &bytes : memoryBytes[n])
        if (bytes[better] > bytes[worse])
          return false;
      for (auto &[m, e] : around)
        for (int k = 0; k < e.cols; ++k)
          if (allowed(m, k) && e.at(better, k) > e.at(worse, k))
            return false;
      return true;
    };
    bool changed = false;
    for (int c = 0; c < choices(n); ++c) {
      if (!allowed(n, c))
        continue;
      for (int d = 0; d < choices(n); ++d)
        if (d != c && allowed(n, d) && noWorse(d, c) &&
            (d < c || !noWorse(c, d))) {
          cost[n][c] = kInfinity;
          dominatedBy[n][c] = d;
          changed = true;
          break;
        }
    }
    return changed;
  }

  /// Removes the edge a-b if its cost is a sum of a term of a's choice and
  /// one of b's (over the allowed choices), moving the terms to the nodes.
  bool dropSeparable(int a, int b) {
    Matrix e = edge(a, b);
    int i0 = -1, j0 = -1;
    for (int i = 0; i < e.rows && i0 < 0; ++i)
      if (allowed(a, i))
        i0 = i;
    for (int j = 0; j < e.cols && j0 < 0; ++j)
      if (allowed(b, j))
        j0 = j;
    if (i0 < 0 || j0 < 0 || !std::isfinite(e.at(i0, j0)))
      return false;
    for (int i = 0; i < e.rows; ++i)
      for (int j = 0; j < e.cols; ++j) {
        if (!allowed(a, i) || !allowed(b, j))
          continue;
        double sum = e.at(i, j0) + e.at(i0, j) - e.at(i0, j0);
        if (!std::isfinite(e.at(i, j)) ||
            std::abs(e.at(i, j) - sum) > 1e-12 * (std::abs(e.at(i, j)) + 1e-9))
          return false;
      }
    for (int i = 0; i < e.rows; ++i)
      if (allowed(a, i))
        cost[a][i] += e.at(i, j0) - e.at(i0, j0);
    for (int j = 0; j < e.cols; ++j)
      if (allowed(b, j))
        cost[b][j] += e.at(i0, j);
    adjacent[a].erase(b);
    adjacent[b].erase(a);
    edges.erase({std::min(a, b), std::max(a, b)});
    return true;
  }

  std::vector<bool> allowedMask(int n) const {
    std::vector<bool> mask;
    for (int c = 0; c < choices(n); ++c)
      mask.push_back(allowed(n, c));
    return mask;
  }
  /// The solver's pair variables for an edge a -> b with matrix m.
  size_t pairVariables(int a, int b, const Matrix &m) const {
    return groupEqual(m, false, allowedMask(a)).size() *
           groupEqual(m, true, allowedMask(b)).size();
  }

  /// Eliminates n (degree 0, 1 or 2); std::nullopt, changing nothing, where
  /// the edge that would replace a node of degree 2 needs more of the
  /// solver's variables than the node and its two edges (joining two wide
  /// nodes makes a dense matrix).
  std::optional<Elimination> eliminate(int n) {
    Elimination record{n};
    std::vector<int> around(adjacent[n].begin(), adjacent[n].end());
    int cn = choices(n);
    if (around.empty()) {
      record.pick = {static_cast<int>(
          std::min_element(cost[n].begin(), cost[n].end()) - cost[n].begin())};
    } else if (around.size() == 1) {
      int a = around[0];
      record.a = a;
      Matrix e = edge(a, n);
      for (int i = 0; i < choices(a); ++i) {
        double best = kInfinity;
        int bestJ = 0;
        for (int j = 0; j < cn; ++j)
          if (double s = e.at(i, j) + cost[n][j]; s < best)
            best = s, bestJ = j;
        cost[a][i] += best;
        record.pick.push_back(bestJ);
      }
    } else {
      int a = around[0], c = around[1];
      record.a = a;
      record.c = c;
      Matrix left = edge(a, n), right = edge(n, c);
      Matrix joined(choices(a), choices(c));
      record.pick.resize(joined.v.size());
      for (int i = 0; i < choices(a); ++i)
        for (int k = 0; k < choices(c); ++k) {
          double best = kInfinity;
          int bestJ = 0;
          for (int j = 0; j < cn; ++j)
            if (double s = left.at(i, j) + cost[n][j] + right.at(j, k); s < best)
              best = s, bestJ = j;
          joined.at(i, k) = best;
          record.pick[static_cast<size_t>(i) * choices(c) + k] = bestJ;
        }
      size_t before = pairVariables(a, n, left) + pairVariables(n, c, right) +
                      llvm::count(allowedMask(n), true);
      Matrix replacement = joined;
      if (adjacent[a].count(c)) {
        Matrix existing = edge(a, c);
        before += pairVariables(a, c, existing);
        for (size_t k = 0; k < replacement.v.size(); ++k)
          replacement.v[k] += existing.v[k];
      }
      if (pairVariables(a, c, replacement) > before)
        return std::nullopt;
      removeNode(n);
      addEdge(a, c, joined);
      return record;
    }
    removeNode(n);
    return record;
  }
};

/// For each node, the smallest node it is tied to (groups that share a
/// node are one group).
std::vector<int> representatives(const PlanProblem &problem) {
  std::vector<int> parent(problem.nodeCost.size());
  for (size_t n = 0; n < parent.size(); ++n)
    parent[n] = static_cast<int>(n);
  auto find = [&](int n) {
    while (parent[n] != n)
      n = parent[n] = parent[parent[n]];
    return n;
  };
  for (const std::vector<int> &group : problem.ties)
    for (int n : group) {
      int a = find(n), b = find(group[0]);
      parent[std::max(a, b)] = std::min(a, b);
    }
  for (size_t n = 0; n < parent.size(); ++n)
    parent[n] = find(static_cast<int>(n));
  return parent;
}

/// A linear program built row by row, handed to CBC in one piece (adding
/// CBC's rows one at a time copies its matrix each time).
struct Program {
  std::vector<double> objective;
  std::vector<char> integer;
  /// Rows: lower <= terms (column, coefficient) <= upper.
  std::vector<std::vector<std::pair<int, double>>> rows;
  std::vector<double> lower, upper;

  /// A column in [0, 1].
  int addColumn(double cost, bool isInteger) {
    objective.push_back(cost);
    integer.push_back(isInteger);
    return static_cast<int>(objective.size()) - 1;
  }
  /// terms = value.
  void addRow(std::vector<std::pair<int, double>> terms, double value) {
    addRow(std::move(terms), value, value);
  }
  void addRow(std::vector<std::pair<int, double>> terms, double low, double high) {
    rows.push_back(std::move(terms));
    lower.push_back(low);
    upper.push_back(high);
  }
  void load(Cbc_Model *model) const {
    size_t numColumns = objective.size();
    std::vector<CoinBigIndex> start(numColumns + 1, 0);
    for (const auto &row : rows)
      for (auto [c, coef] : row)
        ++start[c + 1];
    for (size_t c = 0; c < numColumns; ++c)
      start[c + 1] += start[c];
    std::vector<int> index(start.back());
    std::vector<double> value(start.back());
    std::vector<CoinBigIndex> next(start.begin(), start.end() - 1);
    for (auto [r, row] : llvm::enumerate(rows))
      for (auto [c, coef] : row) {
        index[next[c]] = static_cast<int>(r);
        value[next[c]++] = coef;
      }
    std::vector<double> columnLower(numColumns, 0), columnUpper(numColumns, 1);
    Cbc_loadProblem(model, static_cast<int>(numColumns),
                    static_cast<int>(rows.size()), start.data(), index.data(),
                    value.data(), columnLower.data(), columnUpper.data(),
                    objective.data(), lower.data(), upper.data());
    for (size_t c = 0; c < numColumns; ++c)
      if (integer[c])
        Cbc_setInteger(model, static_cast<int>(c));
  }
};

struct CbcDeleter {
  void operator()(Cbc_Model *m) const { Cbc_deleteModel(m); }
};

} // namespace

std::optional<PlanSolution> solveExactly(const PlanProblem &problem,
                                         const ExactOptions &options,
                                         std::string &error) {
  auto started = std::chrono::steady_clock::now();
  size_t numNodes = problem.nodeCost.size();
  std::vector<int> rep = representatives(problem);
  for (size_t n = 0; n < numNodes; ++n)
    if (problem.nodeCost[n].size() != problem.nodeCost[rep[n]].size()) {
      error = "tied nodes have different numbers of choices";
      return std::nullopt;
    }

  Graph g;
  g.cost.assign(numNodes, {});
  g.alive.assign(numNodes, false);
  g.adjacent.resize(numNodes);
  g.dominatedBy.resize(numNodes);
  for (size_t n = 0; n < numNodes; ++n) {
    g.dominatedBy[n].assign(problem.nodeCost[n].size(), -1);
    int r = rep[n];
    if (g.cost[r].empty())
      g.cost[r].assign(problem.nodeCost[n].size(), 0);
    g.alive[r] = true;
    for (size_t c = 0; c < problem.nodeCost[n].size(); ++c)
      g.cost[r][c] += problem.nodeCost[n][c];
  }
  for (const PlanProblem::Edge &e : problem.edges) {
    int a = rep[e.from], b = rep[e.to];
    int rows = static_cast<int>(problem.nodeCost[e.from].size());
    int cols = static_cast<int>(problem.nodeCost[e.to].size());
    if (a == b) {
      for (int i = 0; i < rows; ++i)
        g.cost[a][i] += e.cost[static_cast<size_t>(i) * cols + i];
      continue;
    }
    Matrix m(rows, cols);
    m.v = e.cost;
    g.addEdge(a, b, m);
  }
  // Memory rows over the representatives (tied members' bytes summed).
  std::vector<std::map<int, std::vector<double>>> memoryRows;
  g.memoryBytes.resize(numNodes);
  for (const PlanProblem::MemoryRow &row : problem.memory) {
    std::map<int, std::vector<double>> &terms = memoryRows.emplace_back();
    for (const auto &[n, bytes] : row.terms) {
      std::vector<double> &sum = terms[rep[n]];
      sum.resize(bytes.size(), 0);
      for (size_t c = 0; c < bytes.size(); ++c)
        sum[c] += bytes[c];
    }
    for (const auto &[r, bytes] : terms)
      g.memoryBytes[r].push_back(bytes);
  }

  // Exact reductions until none applies: dominated choices forbidden,
  // separable edges moved into their nodes, nodes of degree 2 or less
  // eliminated.
  std::vector<Elimination> eliminated;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = 0; n < numNodes; ++n)
      if (g.alive[n])
        changed |= g.pruneDominated(static_cast<int>(n));
    std::vector<std::pair<int, int>> keys;
    for (const auto &entry : g.edges)
      keys.push_back(entry.first);
    for (auto [a, b] : keys)
      changed |= g.dropSeparable(a, b);
    // A node in a memory row is decided by the solver.
    auto eliminable = [&](int n) {
      return g.alive[n] && g.adjacent[n].size() <= 2 && g.memoryBytes[n].empty();
    };
    std::vector<int> queue;
    for (size_t n = 0; n < numNodes; ++n)
      if (eliminable(static_cast<int>(n)))
        queue.push_back(static_cast<int>(n));
    while (!queue.empty()) {
      int n = queue.back();
      queue.pop_back();
      if (!eliminable(n))
        continue;
      std::vector<int> around(g.adjacent[n].begin(), g.adjacent[n].end());
      std::optional<Elimination> record = g.eliminate(n);
      if (!record)
        continue;
      eliminated.push_back(std::move(*record));
      changed = true;
      for (int m : around)
        if (eliminable(m))
          queue.push_back(m);
    }
  }

  PlanSolution solution;
  solution.choice.assign(numNodes, -1);
  std::vector<int> &choice = solution.choice;
  solution.optimal = true;

  std::vector<int> remaining;
  for (size_t n = 0; n < numNodes; ++n)
    if (g.alive[n])
      remaining.push_back(static_cast<int>(n));
  if (!remaining.empty()) {
    Program program;
    // s(n, c), or -1 where the choice is not allowed.
    llvm::DenseMap<int, std::vector<int>> column;
    for (int n : remaining) {
      std::vector<int> &cols = column[n];
      std::vector<std::pair<int, double>> oneHot;
      for (int c = 0; c < g.choices(n); ++c) {
        cols.push_back(g.allowed(n, c)
                           ? program.addColumn(g.cost[n][c] * kScale, true)
                           : -1);
        if (cols.back() >= 0)
          oneHot.emplace_back(cols.back(), 1.0);
      }
      if (oneHot.empty()) {
        error = "a node has no allowed choice";
        return std::nullopt;
      }
      program.addRow(std::move(oneHot), 1);
    }
    solution.solverNodes = static_cast<int>(remaining.size());
    solution.solverVariables = static_cast<int>(program.objective.size());
    for (const auto &[key, m] : g.edges) {
      auto [a, b] = key;
      std::vector<std::vector<int>> rowGroups = groupEqual(m, false, g.allowedMask(a));
      std::vector<std::vector<int>> colGroups = groupEqual(m, true, g.allowedMask(b));
      // Per group of either side: the sum of its pair columns equals the
      // sum of its choices' s.
      std::vector<std::vector<std::pair<int, double>>> rowSums(rowGroups.size()),
          colSums(colGroups.size());
      for (size_t gi = 0; gi < rowGroups.size(); ++gi)
        for (size_t hi = 0; hi < colGroups.size(); ++hi) {
          double seconds = m.at(rowGroups[gi][0], colGroups[hi][0]);
          if (!std::isfinite(seconds))
            continue; // the pair cannot happen
          int pair = program.addColumn(seconds * kScale, false);
          rowSums[gi].emplace_back(pair, 1.0);
          colSums[hi].emplace_back(pair, 1.0);
        }
      for (size_t gi = 0; gi < rowGroups.size(); ++gi) {
        for (int c : rowGroups[gi])
          rowSums[gi].emplace_back(column[a][c], -1.0);
        program.addRow(std::move(rowSums[gi]), 0);
      }
      for (size_t hi = 0; hi < colGroups.size(); ++hi) {
        for (int c : colGroups[hi])
          colSums[hi].emplace_back(column[b][c], -1.0);
        program.addRow(std::move(colSums[hi]), 0);
      }
      ++solution.solverEdges;
    }
    // Memory rows, in MiB (bytes are too large for the solver's tolerances).
    for (auto [r, terms] : llvm::enumerate(memoryRows)) {
      std::vector<std::pair<int, double>> row;
      for (const auto &[n, bytes] : terms)
        for (int c = 0; c < g.choices(n); ++c)
          if (column[n][c] >= 0 && bytes[c] != 0)
            row.emplace_back(column[n][c], bytes[c] / kMiB);
      program.addRow(std::move(row), -std::numeric_limits<double>::max(),
                     problem.memory[r].limit / kMiB);
    }
    std::unique_ptr<Cbc_Model, CbcDeleter> model(Cbc_newModel());
    program.load(model.get());
    Cbc_setLogLevel(model.get(), 0);
    Cbc_setMaximumSeconds(model.get(), options.maxSeconds);
    Cbc_setAllowableFractionGap(model.get(), 1e-7);
    Cbc_setAllowableGap(model.get(), 1e-9);
    // The relaxation of this program is usually integral already; CLP's
    // presolve and CGL's preprocessing of its ~10^5 pair columns cost 10x
    // the LP itself (GPT example on 2x2: 9.6 s against 0.1 s).
    Cbc_setParameter(model.get(), "presolve", "off");
    Cbc_setParameter(model.get(), "preprocess", "off");
    // --planner ilp's limit is wall-clock time, not CPU time.
    Cbc_setParameter(model.get(), "timeMode", "elapsed");
    // Start from the known choice when it respects the ties and the memory
    // rows.
    if (options.start.size() == numNodes) {
      bool consistent = true;
      for (size_t n = 0; n < numNodes; ++n)
        consistent &= options.start[n] >= 0 &&
                      options.start[n] < static_cast<int>(problem.nodeCost[n].size()) &&
                      options.start[n] == options.start[rep[n]];
      consistent = consistent && fitsMemory(problem, options.start);
      std::vector<int> startCols;
      for (int n : remaining) {
        if (!consistent)
          break;
        // A pruned choice goes to the one that dominated it (no dearer, no
        // larger, so the start stays as good and as small).
        int c = options.start[n];
        while (c >= 0 && !g.allowed(n, c))
          c = g.dominatedBy[n][c];
        consistent &= c >= 0 && column[n][c] >= 0;
        if (consistent)
          startCols.push_back(column[n][c]);
      }
      if (consistent) {
        std::vector<double> values(startCols.size(), 1.0);
        Cbc_setMIPStartI(model.get(), static_cast<int>(startCols.size()),
                         startCols.data(), values.data());
      }
    }
    Cbc_solve(model.get());
    // The best integer solution (the column solution is the last LP's,
    // fractional when the time limit stopped the search first).
    const double *values = Cbc_bestSolution(model.get());
    if (!values || Cbc_isProvenInfeasible(model.get())) {
      error = problem.memory.empty()
                  ? "the integer program has no solution"
                  : "no layout of every op fits the memory rows";
      return std::nullopt;
    }
    solution.optimal = Cbc_isProvenOptimal(model.get());
    for (int n : remaining) {
      for (int c = 0; c < g.choices(n); ++c)
        if (column[n][c] >= 0 && values[column[n][c]] > 0.5)
          choice[n] = c;
      if (choice[n] < 0) {
        error = "the solver stopped before finding a layout for every op "
                "(raise its time limit)";
        return std::nullopt;
      }
    }
  }
  // Back through the eliminations: neighbours are decided first.
  for (const Elimination &e : llvm::reverse(eliminated)) {
    if (e.a < 0)
      choice[e.node] = e.pick[0];
    else if (e.c < 0)
      choice[e.node] = e.pick[choice[e.a]];
    else
      choice[e.node] = e.pick[static_cast<size_t>(choice[e.a]) * g.choices(e.c) +
                              choice[e.c]];
  }
  for (size_t n = 0; n < numNodes; ++n)
    choice[n] = choice[rep[n]];
  solution.seconds = evaluate(problem, choice);
  if (!std::isfinite(solution.seconds)) {
    error = "no layout of every op has a finite cost";
    return std::nullopt;
  }
  if (!fitsMemory(problem, choice)) {
    error = "the solver's layouts do not fit the memory rows";
    return std::nullopt;
  }
  solution.solveSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return solution;
}

PlanSolution solveByEnumeration(const PlanProblem &problem) {
  size_t numNodes = problem.nodeCost.size();
  std::vector<int> rep = representatives(problem);
  std::vector<int> free;
  for (size_t n = 0; n < numNodes; ++n)
    if (rep[n] == static_cast<int>(n))
      free.push_back(static_cast<int>(n));
  PlanSolution best;
  best.seconds = kInfinity;
  best.optimal = true;
  std::vector<int> choice(numNodes, 0);
  while (true) {
    for (size_t n = 0; n < numNodes; ++n)
      choice[n] = choice[rep[n]];
    double seconds = evaluate(problem, choice);
    if (seconds < best.seconds && fitsMemory(problem, choice)) {
      best.seconds = seconds;
      best.choice = choice;
    }
    size_t k = 0;
    for (; k < free.size(); ++k) {
      int n = free[k];
      if (++choice[n] < static_cast<int>(problem.nodeCost[n].size()))
        break;
      choice[n] = 0;
    }
    if (k == free.size())
      break;
  }
  return best;
}

PlanSolution solveGreedily(const PlanProblem &problem) {
  size_t numNodes = problem.nodeCost.size();
  // Edges by their later node.
  std::vector<std::vector<const PlanProblem::Edge *>> incoming(numNodes);
  for (const PlanProblem::Edge &e : problem.edges)
    incoming[std::max(e.from, e.to)].push_back(&e);
  PlanSolution solution;
  solution.choice.assign(numNodes, 0);
  for (size_t n = 0; n < numNodes; ++n) {
    double best = kInfinity;
    for (size_t c = 0; c < problem.nodeCost[n].size(); ++c) {
      double seconds = problem.nodeCost[n][c];
      for (const PlanProblem::Edge *e : incoming[n]) {
        size_t cols = problem.nodeCost[e->to].size();
        seconds += static_cast<size_t>(e->to) == n
                       ? e->cost[solution.choice[e->from] * cols + c]
                       : e->cost[c * cols + solution.choice[e->to]];
      }
      if (seconds < best) {
        best = seconds;
        solution.choice[n] = static_cast<int>(c);
      }
    }
  }
  solution.seconds = evaluate(problem, solution.choice);
  return solution;
}

} // namespace oflow::sbp
