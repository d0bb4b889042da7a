//===- ExactPlanner.h - layout choice as an integer program -----*- C++ -*-===//
//
// `--planner ilp` (issue #15 item 5): the layout choice of a whole function
// as Alpa's integer program. Every op is a node with its candidate
// nd-signatures, each with a cost (local compute plus the boxing from and to
// layouts that are fixed: inputs, variables, hints, returns); every pair of
// ops joined by values is an edge with the boxing time of each pair of
// choices. The program picks one choice per node minimising the sum. (A
// value read by several ops is charged its boxing on each edge, as in Alpa;
// the boxing pass converts it once per layout, so the sum can overstate a
// plan whose consumers share a conversion. `optimal` is under this sum and
// under the ties.)
//
// Plain C++ over numbers, so that it can be checked against brute force. The
// graph is coarsened before the solver sees it: nodes tied together (the same
// op of repeated layers) share one choice; nodes with one neighbour are folded
// into it and nodes with two are replaced by an edge between them (both
// exact); what is left goes to COIN-OR CBC. Memory rows (bytes live at a
// point of the program) are constraints of the program; the nodes they name
// are kept for the solver.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_SBP_EXACTPLANNER_H
#define OFLOW_SBP_EXACTPLANNER_H

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace oflow::sbp {

struct PlanProblem {
  /// nodeCost[n][c]: seconds of node n under its choice c (infinity: not
  /// allowed).
  std::vector<std::vector<double>> nodeCost;
  struct Edge {
    int from = 0, to = 0;
    /// |choices of from| x |choices of to|, row-major: seconds of the pair.
    std::vector<double> cost;
  };
  std::vector<Edge> edges;
  /// Groups of nodes that must take the same choice (same number of choices,
  /// the same meaning for each index): repeated layers solved once.
  std::vector<std::vector<int>> ties;
  /// Memory constraints: at some point of the program, the bytes per device
  /// of the values live there, each term a node and its bytes under each of
  /// its choices, must not exceed `limit`.
  struct MemoryRow {
    std::vector<std::pair<int, std::vector<double>>> terms;
    double limit = 0;
  };
  std::vector<MemoryRow> memory;

  int addNode(std::vector<double> cost) {
    nodeCost.push_back(std::move(cost));
    return static_cast<int>(nodeCost.size()) - 1;
  }
};

/// The total seconds of one choice per node (infinity if one is not allowed;
/// ties are not checked).
double evaluate(const PlanProblem &problem, llvm::ArrayRef<int> choice);

struct PlanSolution {
  std::vector<int> choice;
  double seconds = 0;
  /// The solver proved no better choice exists (within its tolerance).
  bool optimal = false;
  /// Nodes, edges and binary variables the solver saw after coarsening.
  int solverNodes = 0, solverEdges = 0, solverVariables = 0;
  double solveSeconds = 0;
};

struct ExactOptions {
  /// CBC's time limit; past it the best choice found is returned, not
  /// proven optimal.
  double maxSeconds = 60;
  /// A known choice (the greedy planner's) to start from, when it respects
  /// the ties.
  std::vector<int> start;
};

/// Whether a choice per node respects every memory row.
bool fitsMemory(const PlanProblem &problem, llvm::ArrayRef<int> choice);

/// The optimum under the ties and memory rows (std::nullopt with `error` set
/// when no choice has finite cost or fits, or the solver fails).
std::optional<PlanSolution> solveExactly(const PlanProblem &problem,
                                         const ExactOptions &options,
                                         std::string &error);

/// Every combination (tests only: the product of the choice counts must be
/// small). Ties and memory rows are respected (infinite seconds: nothing
/// fits).
PlanSolution solveByEnumeration(const PlanProblem &problem);

/// Node by node in index order, each taking its cheapest choice given the
/// choices already made (what the greedy planner does, without its
/// look-ahead).
PlanSolution solveGreedily(const PlanProblem &problem);

} // namespace oflow::sbp

#endif // OFLOW_SBP_EXACTPLANNER_H
