//===- PlanHtml.h - --emit=plan-html: the plan as one page -----*- C++ -*-===//
#ifndef OFLOW_LIB_DRIVER_PLANHTML_H
#define OFLOW_LIB_DRIVER_PLANHTML_H

#include "MemoryLimit.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace oflow {

/// The training step's layer graph after SBP choice and boxing: one node
/// per (layer, phase), a layer being an ONNX node name's parent path
/// ("/blocks.0/attn/MatMul" -> "blocks.0.attn") or a variable's module
/// ("blocks.0.attn.q.weight" -> "blocks.0.attn.q"); the phase is forward
/// (what the loss depends on) or backward and update. Edges carry the
/// values that flow between nodes and the collectives that convert them.
struct PlanGraph {
  struct Node {
    std::string layer, phase, layout; ///< layout: by bytes the most common
    int64_t ops = 0, bytes = 0;       ///< ops, global bytes of their results
    int64_t column = 0, row = 0;      ///< place in the drawing
  };
  struct Edge {
    int64_t from = 0, to = 0;
    int64_t values = 0;                   ///< values that flow
    int64_t collectiveBytes = 0;          ///< bytes per device sent on it
    std::vector<std::string> collectives; ///< "all-reduce on mesh axis 0: ..."
    bool backward = false;                ///< against the drawing's order
  };
  std::string mesh; ///< "2x2 (4 devices)"
  int64_t devices = 1;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
};

/// Reads the train entry (else the first entry) of a module after boxing.
PlanGraph collectPlanGraph(mlir::ModuleOp module);

/// One self-contained HTML page (no network): `planText` (--emit=plan's
/// records) folded away, the layer graph as SVG coloured by layout with the
/// collectives on its edges, and a memory bar per device against the limit.
/// An inline script checks the drawing laid out and says so in
/// #render-check (what the headless-browser test reads).
std::string renderPlanHtml(const PlanGraph &graph, const std::string &planText,
                           const MemoryUse &use, const MemoryLimit &limit,
                           const std::string &title);

} // namespace oflow

#endif // OFLOW_LIB_DRIVER_PLANHTML_H
