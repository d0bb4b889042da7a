//===- PlanHtml.cpp - --emit=plan-html: the plan as one page --------------===//
//
// The layer graph is read from the program after boxing (global shapes,
// every value's nd-SBP, the collectives as ops); collectives are priced with
// the planner's own step costs, as --emit=plan and --emit=simulate price
// them. The page is drawn here as SVG and HTML with no script dependency
// and no network: a plan is often read where the cluster is, offline.
//
//===----------------------------------------------------------------------===//
#include "PlanHtml.h"

#include "OFlow/OFlowOps.h"
#include "oflow/Codegen/Passes.h"
#include "oflow/Sbp/BoxingPlanner.h"
#include "oflow/Sbp/CostModel.h"
#include "oflow/Sbp/SbpConversions.h"
#include "oflow/Support/ByteSize.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace mlir;
namespace of = mlir::oflow;
namespace sbp = ::oflow::sbp;

namespace oflow {
namespace {

int64_t globalBytes(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return type.getNumElements() * elementBytes(type.getElementType());
}

std::string layoutText(Value v) {
  of::NdSbpAttr layout = sbp::getValueSbp(v);
  if (!layout)
    return "-";
  std::string text;
  for (char c : sbp::str(sbp::toPlanner(layout)))
    if (c != ' ')
      text += c;
  return text;
}

/// "/blocks.0/attn/MatMul" -> "blocks.0.attn"; "fc1.weight" -> "fc1";
/// "oflow.optimizer" -> "optimizer".
std::string layerOf(Operation *op) {
  std::optional<StringRef> name = of::getNodeName(op->getLoc());
  if (!name)
    return "(unnamed)";
  StringRef n = *name;
  if (n.consume_front("oflow."))
    return n.str();
  std::string layer;
  if (n.consume_front("/")) {
    size_t slash = n.rfind('/');
    layer = (slash == StringRef::npos ? n : n.take_front(slash)).str();
    std::replace(layer.begin(), layer.end(), '/', '.');
    return layer;
  }
  size_t dot = n.rfind('.');
  return (dot == StringRef::npos ? n : n.take_front(dot)).str();
}

func::FuncOp stepFunction(ModuleOp module) {
  func::FuncOp first;
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto entry = fn->getAttrOfType<StringAttr>(of::OFlowDialect::kEntryAttrName);
    if (!entry || fn.isDeclaration())
      continue;
    if (entry.getValue() == "train")
      return fn;
    if (!first)
      first = fn;
  }
  return first;
}

/// The ops the entry's loss (its result named "loss") depends on.
llvm::DenseSet<Operation *> forwardOps(func::FuncOp fn) {
  llvm::DenseSet<Operation *> forward;
  SmallVector<Operation *> work;
  Operation *ret = fn.getBody().front().getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    auto name = fn.getResultAttrOfType<StringAttr>(i, "oflow.name");
    if (name && name.getValue() == "loss")
      if (Operation *def = v.getDefiningOp())
        work.push_back(def);
  }
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!forward.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        work.push_back(def);
  }
  return forward;
}

std::string escape(StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

// Tableau 10 and two more; layouts past twelve reuse them.
const char *const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                "#9c755f", "#bab0ac", "#86bcb6", "#d37295"};

} // namespace

PlanGraph collectPlanGraph(ModuleOp module) {
  PlanGraph g;
  auto meshAttr = module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
  func::FuncOp fn = stepFunction(module);
  if (!meshAttr || !fn)
    return g;
  sbp::Mesh mesh = sbp::toPlanner(meshAttr);
  g.devices = meshAttr.getNumDevices();
  for (auto [i, d] : llvm::enumerate(meshAttr.getShape()))
    g.mesh += (i ? "x" : "") + std::to_string(d);
  g.mesh += " (" + std::to_string(g.devices) + " devices)";

  llvm::DenseSet<Operation *> forward = forwardOps(fn);
  std::map<std::pair<std::string, std::string>, int64_t> nodeIndex;
  std::vector<std::map<std::string, int64_t>> layoutBytes;
  auto nodeFor = [&](const std::string &layer, const std::string &phase) {
    auto [it, added] = nodeIndex.try_emplace({layer, phase}, int64_t(g.nodes.size()));
    if (added) {
      g.nodes.push_back({layer, phase});
      layoutBytes.emplace_back();
    }
    return it->second;
  };
  auto addResult = [&](int64_t node, Value v) {
    g.nodes[node].bytes += globalBytes(v);
    layoutBytes[node][layoutText(v)] += std::max<int64_t>(globalBytes(v), 1);
  };

  llvm::DenseMap<Operation *, int64_t> opNode;
  int64_t inputs = -1;
  for (BlockArgument arg : fn.getArguments()) {
    if (inputs < 0)
      inputs = nodeFor("inputs", "forward");
    addResult(inputs, arg);
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> edgeIndex;
  auto edgeFor = [&](int64_t from, int64_t to) {
    auto [it, added] = edgeIndex.try_emplace({from, to}, int64_t(g.edges.size()));
    if (added)
      g.edges.push_back({from, to});
    return it->second;
  };
  auto collective = [&](Operation *box, unsigned index, int64_t &bytes) {
    Value in = box->getOperand(index), out = box->getResult(index);
    auto type = cast<RankedTensorType>(in.getType());
    std::optional<sbp::BoxingStep> step = sbp::planOneAxisStep(
        mesh, type.getShape(), elementBytes(type.getElementType()),
        sbp::toPlanner(sbp::getValueSbp(in)), sbp::toPlanner(sbp::getValueSbp(out)),
        *of::getBoxingMeshAxis(box));
    if (!step)
      return std::string(box->getName().getStringRef());
    bytes += step->bytesPerDevice;
    return step->str();
  };

  for (Operation &op : fn.getBody().front()) {
    if (of::getBoxingMeshAxis(&op) || op.hasTrait<OpTrait::IsTerminator>() ||
        op.hasTrait<OpTrait::ConstantLike>())
      continue;
    // Variables stand alone (their layout is the plan's main choice), named
    // by their symbol (an optimizer slot's read is located at the update).
    auto read = dyn_cast<of::ReadVariableOp>(op);
    bool state = bool(read);
    std::string layer = read ? read.getVariable().str() : layerOf(&op);
    std::string phase = state                    ? "state"
                        : forward.contains(&op)  ? "forward"
                        : layer == "optimizer"   ? "update"
                                                 : "backward";
    int64_t node = nodeFor(layer, phase);
    opNode[&op] = node;
    ++g.nodes[node].ops;
    for (Value result : op.getResults())
      addResult(node, result);
    for (Value operand : op.getOperands()) {
      // Through the collectives that converted it to where it came from.
      std::vector<std::string> steps;
      int64_t bytes = 0;
      Value source = operand;
      while (Operation *def = source.getDefiningOp()) {
        if (!of::getBoxingMeshAxis(def))
          break;
        unsigned index = cast<OpResult>(source).getResultNumber();
        steps.push_back(collective(def, index, bytes));
        source = def->getOperand(index);
      }
      int64_t from = -1;
      if (Operation *def = source.getDefiningOp()) {
        auto it = opNode.find(def);
        if (it != opNode.end())
          from = it->second;
      } else if (isa<BlockArgument>(source)) {
        from = inputs;
      }
      if (from < 0 || (from == node && steps.empty()))
        continue;
      PlanGraph::Edge &edge = g.edges[edgeFor(from, node)];
      ++edge.values;
      edge.collectiveBytes += bytes;
      for (std::string &s : llvm::reverse(steps))
        edge.collectives.push_back(std::move(s));
    }
  }

  // Each node's layout: the one most of its bytes have.
  for (auto [node, bytes] : llvm::zip(g.nodes, layoutBytes)) {
    int64_t best = -1;
    for (auto &[layout, b] : bytes)
      if (b > best) {
        best = b;
        node.layout = layout;
      }
  }
  // Columns: longest path over the edges that go forward in program
  // order (a node's first op); rows: in that order within a column.
  for (PlanGraph::Edge &e : g.edges)
    e.backward = e.from >= e.to;
  std::vector<std::vector<int64_t>> incoming(g.nodes.size());
  for (const PlanGraph::Edge &e : g.edges)
    if (!e.backward)
      incoming[e.to].push_back(e.from);
  for (auto [i, node] : llvm::enumerate(g.nodes))
    for (int64_t from : incoming[i])
      node.column = std::max(node.column, g.nodes[from].column + 1);
  // A node nothing feeds (the inputs, variables) sits just before its
  // first reader rather than in one tall first column.
  std::vector<int64_t> firstReader(g.nodes.size(), -1);
  for (const PlanGraph::Edge &e : g.edges)
    if (!e.backward && (firstReader[e.from] < 0 ||
                        g.nodes[e.to].column < firstReader[e.from]))
      firstReader[e.from] = g.nodes[e.to].column;
  std::map<int64_t, int64_t> rows;
  for (auto [i, node] : llvm::enumerate(g.nodes)) {
    if (incoming[i].empty() && firstReader[i] > 0)
      node.column = firstReader[i] - 1;
    node.row = rows[node.column]++;
  }
  return g;
}

std::string renderPlanHtml(const PlanGraph &graph, const std::string &planText,
                           const MemoryUse &use, const MemoryLimit &limit,
                           const std::string &title) {
  std::string html;
  llvm::raw_string_ostream os(html);

  // Colours by layout, the most common first.
  std::map<std::string, int64_t> layoutCount;
  for (const PlanGraph::Node &n : graph.nodes)
    ++layoutCount[n.layout];
  std::vector<std::pair<std::string, int64_t>> layouts(layoutCount.begin(),
                                                       layoutCount.end());
  std::stable_sort(layouts.begin(), layouts.end(),
                   [](auto &a, auto &b) { return a.second > b.second; });
  llvm::StringMap<const char *> colour;
  for (auto [i, l] : llvm::enumerate(layouts))
    colour[l.first] = kPalette[i % std::size(kPalette)];

  int64_t collectiveEdges = 0, columns = 1, rows = 1;
  for (const PlanGraph::Edge &e : graph.edges)
    collectiveEdges += !e.collectives.empty();
  for (const PlanGraph::Node &n : graph.nodes) {
    columns = std::max(columns, n.column + 1);
    rows = std::max(rows, n.row + 1);
  }

  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
     << escape(title) << "</title>\n<style>\n"
     << "body{font:14px system-ui,sans-serif;margin:16px;color:#222}\n"
     << "h1{font-size:18px}h2{font-size:16px;margin-top:24px}\n"
     << ".legend span{display:inline-block;margin:2px 10px 2px 0}\n"
     << ".swatch{display:inline-block;width:12px;height:12px;margin-right:4px;"
        "vertical-align:middle;border:1px solid #555}\n"
     << ".graph{overflow:auto;border:1px solid #ccc;max-height:80vh}\n"
     << "svg text{font:11px system-ui,sans-serif}\n"
     << ".membar{position:relative;display:flex;height:18px;width:800px;"
        "background:#eee;margin:3px 0}\n"
     << ".membar div{height:100%}\n"
     << ".limit{position:absolute;top:-3px;bottom:-3px;width:2px;background:#d62728}\n"
     << "pre{font-size:12px;background:#f6f6f6;padding:8px;overflow:auto}\n"
     << "</style></head><body>\n";
  os << "<h1>" << escape(title) << "</h1>\n<p>mesh " << escape(graph.mesh) << "; "
     << graph.nodes.size() << " layers (forward, backward and update apart), "
     << graph.edges.size() << " edges, " << collectiveEdges
     << " with collectives (red; hover for each one).</p>\n";

  os << "<div class=\"legend\">layouts: ";
  for (auto &[layout, count] : layouts)
    os << "<span><i class=\"swatch\" style=\"background:" << colour[layout] << "\"></i>"
       << escape(layout) << " (" << count << ")</span>";
  os << "</div>\n";

  // The graph.
  const int64_t colW = 230, nodeW = 190, nodeH = 40, rowH = 56, margin = 20;
  int64_t width = 2 * margin + columns * colW, height = 2 * margin + rows * rowH;
  auto x = [&](const PlanGraph::Node &n) { return margin + n.column * colW; };
  auto y = [&](const PlanGraph::Node &n) { return margin + n.row * rowH; };
  os << "<div class=\"graph\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
     << "\" height=\"" << height << "\" data-layers=\"" << graph.nodes.size()
     << "\" data-collective-edges=\"" << collectiveEdges << "\">\n";
  for (const PlanGraph::Edge &e : graph.edges) {
    const PlanGraph::Node &a = graph.nodes[e.from], &b = graph.nodes[e.to];
    int64_t x1 = x(a) + nodeW, y1 = y(a) + nodeH / 2, x2 = x(b), y2 = y(b) + nodeH / 2;
    bool comm = !e.collectives.empty();
    std::string d, title;
    llvm::raw_string_ostream path(d), tip(title);
    if (e.from == e.to) { // within a layer: a loop over its box
      x1 -= 20, x2 += 20, y1 = y2 = y(a);
      path << "M" << x1 << " " << y1 << " C" << x1 << " " << y1 - 24 << " " << x2 << " "
           << y2 - 24 << " " << x2 << " " << y2;
    } else {
      path << "M" << x1 << " " << y1 << " C" << x1 + 40 << " " << y1 << " " << x2 - 40 << " "
           << y2 << " " << x2 << " " << y2;
    }
    tip << a.layer << " (" << a.phase << ") -> " << b.layer << " (" << b.phase
        << "): " << e.values << " value(s)";
    for (const std::string &c : e.collectives)
      tip << "\n" << c;
    os << "<path class=\"" << (comm ? "edge collective" : "edge") << "\" d=\"" << d
       << "\" fill=\"none\" stroke=\"" << (comm ? "#d62728\" stroke-width=\"2.5" : "#999")
       << "\"" << (e.backward && e.from != e.to ? " stroke-dasharray=\"4 3\"" : "")
       << "><title>" << escape(title) << "</title></path>\n";
    if (comm)
      os << "<text x=\"" << (x1 + x2) / 2 << "\" y=\""
         << (y1 + y2) / 2 - (e.from == e.to ? 20 : 3)
         << "\" fill=\"#d62728\" text-anchor=\"middle\">" << e.collectives.size()
         << (e.collectives.size() == 1 ? " collective, " : " collectives, ")
         << escape(formatByteSize(double(e.collectiveBytes))) << "</text>\n";
  }
  for (const PlanGraph::Node &n : graph.nodes) {
    os << "<g class=\"node\" data-layer=\"" << escape(n.layer) << "\" data-phase=\""
       << n.phase << "\" data-layout=\"" << escape(n.layout) << "\"><rect x=\"" << x(n)
       << "\" y=\"" << y(n) << "\" width=\"" << nodeW << "\" height=\"" << nodeH
       << "\" rx=\"5\" fill=\"" << colour[n.layout] << "\" fill-opacity=\"0.85\" stroke=\""
       << (n.phase == "forward" ? "#222" : "#777") << "\"/>"
       << "<text x=\"" << x(n) + 6 << "\" y=\"" << y(n) + 16 << "\">"
       << escape(n.layer.size() > 30 ? n.layer.substr(0, 29) + "…" : n.layer) << "</text>"
       << "<text x=\"" << x(n) + 6 << "\" y=\"" << y(n) + 32 << "\">" << n.phase << " · "
       << escape(n.layout) << " · " << n.ops << " ops</text><title>" << escape(n.layer)
       << " (" << n.phase << "): " << n.ops << " ops, layout " << escape(n.layout) << ", "
       << escape(formatByteSize(double(n.bytes))) << " of results (global)</title></g>\n";
  }
  os << "</svg></div>\n";

  // Memory per device: one program for every device (SPMD), so the bars
  // are alike; a mesh's first 16 devices are drawn.
  struct Part {
    const char *name, *colour;
    int64_t bytes;
  };
  int64_t padding =
      std::max<int64_t>(0, use.stateAligned - use.params - use.optimizer - use.otherState);
  std::vector<Part> parts = {{"parameters", "#4e79a7", use.params},
                             {"optimizer state", "#f28e2b", use.optimizer},
                             {"other state", "#76b7b2", use.otherState},
                             {"state alignment", "#bab0ac", padding},
                             {"inputs and outputs", "#59a14f", use.io},
                             {"arena (activations, gradients)", "#b07aa1", use.arena}};
  double scale = double(std::max<int64_t>({use.total(), limit.bytes, 1}));
  os << "<h2>Memory per device: " << escape(formatByteSize(double(use.total())));
  if (limit.bytes > 0)
    os << " of " << escape(formatByteSize(double(limit.bytes))) << " ("
       << escape(limit.source) << ")";
  os << "</h2>\n<div class=\"legend\">";
  for (const Part &p : parts)
    os << "<span><i class=\"swatch\" style=\"background:" << p.colour << "\"></i>" << p.name
       << " " << escape(formatByteSize(double(p.bytes))) << "</span>";
  if (limit.bytes > 0)
    os << "<span><i class=\"swatch\" style=\"background:#d62728\"></i>limit</span>";
  os << "</div>\n";
  int64_t drawn = std::min<int64_t>(graph.devices, 16);
  for (int64_t d = 0; d < drawn; ++d) {
    os << "<div>device " << d << "<div class=\"membar\" title=\"device " << d << ": "
       << escape(formatByteSize(double(use.total()))) << "\">";
    for (const Part &p : parts)
      if (p.bytes > 0)
        os << "<div style=\"width:" << llvm::format("%.3f", 100.0 * double(p.bytes) / scale)
           << "%;background:" << p.colour << "\" title=\"" << p.name << " "
           << escape(formatByteSize(double(p.bytes))) << "\"></div>";
    if (limit.bytes > 0)
      os << "<span class=\"limit\" style=\"left:"
         << llvm::format("%.3f", 100.0 * double(limit.bytes) / scale) << "%\"></span>";
    os << "</div></div>\n";
  }
  if (graph.devices > drawn)
    os << "<p>... and " << graph.devices - drawn
       << " more devices with the same bytes (one program for all).</p>\n";

  os << "<h2>The plan's records (--emit=plan)</h2>\n<details><summary>"
     << std::count(planText.begin(), planText.end(), '\n')
     << " lines</summary><pre>" << escape(planText) << "</pre></details>\n";
  // What the headless-browser test reads: did the drawing lay out?
  os << "<p id=\"render-check\">not rendered (scripts off)</p>\n<script>\n"
     << "(function(){var nodes=document.querySelectorAll('svg g.node'),laid=0;\n"
     << "nodes.forEach(function(n){var b=n.getBBox();if(b.width>0&&b.height>0)laid++;});\n"
     << "document.getElementById('render-check').textContent='rendered '+laid+' of '+"
        "nodes.length+' layers, '+document.querySelectorAll('svg path.edge').length+"
        "' edges, '+document.querySelectorAll('svg path.collective').length+"
        "' with collectives, '+document.querySelectorAll('.membar').length+' memory bars';"
        "})();\n</script>\n</body></html>\n";
  return html;
}

} // namespace oflow
