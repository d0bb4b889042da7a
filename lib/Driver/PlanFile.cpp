//===- PlanFile.cpp - plans as files: --emit=plan-json, --plan ------------===//
//
// A plan is the nd-SBP of every variable (parameters, optimizer slots,
// buffers) and graph input; everything else follows from them through the
// planner. Written as JSON so that hand plans (ZeRO-1, Megatron, ...) can be
// kept, compared and fed back: --plan turns each entry into an exact hint.
//
//===----------------------------------------------------------------------===//
#include "PlanFile.h"

#include "OFlow/OFlowOps.h"
#include "oflow/Sbp/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

namespace oflow {

std::string planJson(llvm::json::Object layouts, llvm::StringRef shardState,
                     llvm::StringRef recompute, bool reshardAfterForward,
                     llvm::StringRef tensorParallel, const MemoryUse &use,
                     const MemoryLimit &limit) {
  llvm::json::Object plan = std::move(layouts);
  plan["format"] = "oflow-plan";
  plan["version"] = 1;
  plan["shard_state"] = shardState;
  plan["recompute"] = recompute;
  plan["reshard_after_forward"] = reshardAfterForward;
  plan["tensor_parallel"] = tensorParallel;
  llvm::json::Object memory{{"peak_bytes_per_device", use.total()}};
  if (limit.bytes > 0) {
    memory["limit_bytes"] = limit.bytes;
    memory["fits"] = use.total() <= limit.bytes;
  }
  plan["memory"] = std::move(memory);
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(plan))).str() + "\n";
}

/// `name` as a glob that matches only itself.
static std::string literalPattern(llvm::StringRef name) {
  std::string out;
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

llvm::Expected<PlanFile> readPlanFile(llvm::StringRef path,
                                                      llvm::ArrayRef<int64_t> mesh,
                                                      mlir::ModuleOp module) {
  // What the plan may name: variables (symbol or model name) and the entry
  // functions' named inputs.
  llvm::StringSet<> known;
  for (auto var : module.getOps<mlir::oflow::VariableOp>()) {
    known.insert(var.getSymName());
    if (var.getModelName())
      known.insert(*var.getModelName());
  }
  module.walk([&](mlir::func::FuncOp fn) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (auto name = fn.getArgAttrOfType<mlir::StringAttr>(
              i, mlir::oflow::OFlowDialect::kNameAttrName))
        known.insert(name.getValue());
  });
  auto fail = [&](const llvm::Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--plan " + path + ": " + what);
  };
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail("cannot read: " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail("invalid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root || root->getString("format") != llvm::StringRef("oflow-plan"))
    return fail("not an oflow plan (expected \"format\": \"oflow-plan\", as "
                "--emit=plan-json writes)");
  if (root->getInteger("version") != 1)
    return fail("unsupported version (this oflow reads version 1)");
  const llvm::json::Array *planMesh = root->getArray("mesh");
  std::vector<int64_t> sizes;
  for (const llvm::json::Value &v : planMesh ? *planMesh : llvm::json::Array{})
    sizes.push_back(v.getAsInteger().value_or(-1));
  auto meshText = [](llvm::ArrayRef<int64_t> s) {
    std::string t;
    for (int64_t d : s)
      t += (t.empty() ? "" : "x") + std::to_string(d);
    return t;
  };
  if (!planMesh || llvm::ArrayRef<int64_t>(sizes) != mesh)
    return fail("a plan for mesh " + (planMesh ? meshText(sizes) : std::string("?")) +
                ", but this compile's mesh is " + meshText(mesh) + " (--mesh)");
  PlanFile plan;
  if (const llvm::json::Value *recompute = root->get("recompute")) {
    std::optional<llvm::StringRef> text = recompute->getAsString();
    if (!text || text->empty() || *text == "auto")
      return fail("\"recompute\" must be none, selective, all or a node-name expression");
    plan.recompute = text->str();
  }
  if (const llvm::json::Value *count = root->get("micro_batches")) {
    std::optional<int64_t> k = count->getAsInteger();
    if (!k || *k < 1 || *k > (int64_t(1) << 20))
      return fail("\"micro_batches\" must be a positive count");
    plan.microBatches = *k;
  }
  if (const llvm::json::Value *gradients = root->get("micro_batch_gradients")) {
    std::optional<llvm::StringRef> text = gradients->getAsString();
    if (!text || (*text != "sharded" && *text != "whole"))
      return fail("\"micro_batch_gradients\" must be \"sharded\" or \"whole\"");
    plan.microBatchGradients = text->str();
  }
  if (const llvm::json::Value *reshard = root->get("reshard_after_forward")) {
    std::optional<bool> yes = reshard->getAsBoolean();
    if (!yes)
      return fail("\"reshard_after_forward\" must be true or false");
    plan.reshardAfterForward = *yes;
  }
  if (const llvm::json::Value *tp = root->get("tensor_parallel")) {
    std::optional<llvm::StringRef> text = tp->getAsString();
    if (!text || (*text != "none" && *text != "cost"))
      return fail("\"tensor_parallel\" must be \"none\" or \"cost\"");
    plan.tensorParallel = text->str();
  }
  if (const llvm::json::Value *flat = root->get("stored_flat")) {
    const llvm::json::Array *names = flat->getAsArray();
    if (!names)
      return fail("\"stored_flat\" must be an array of variable names");
    for (const llvm::json::Value &name : *names) {
      std::optional<llvm::StringRef> text = name.getAsString();
      if (!text || !known.contains(text->str()))
        return fail("\"stored_flat\": the model has no variable '" +
                    (text ? text->str() : std::string("?")) + "'");
      plan.flat.push_back(text->str());
    }
  }
  std::vector<std::string> &hints = plan.hints;
  for (const char *section : {"variables", "inputs"}) {
    const llvm::json::Object *entries = root->getObject(section);
    if (!entries)
      return fail(llvm::Twine("missing object \"") + section + "\"");
    for (const auto &[name, layout] : *entries) {
      if (!known.contains(name.str()))
        return fail(llvm::Twine(section) + " '" + name.str() +
                    "': the model has no such " +
                    (llvm::StringRef(section) == "inputs" ? "input" : "variable"));
      std::optional<llvm::StringRef> text = layout.getAsString();
      std::optional<sbp::NdSbp> nd = text ? sbp::parseNdSbp(*text) : std::nullopt;
      if (!nd || nd->size() != mesh.size())
        return fail(llvm::Twine(section) + " '" + name.str() +
                    "': expected a layout with one entry per mesh axis, e.g. \"[S(0)]\"");
      std::string entriesText;
      for (const sbp::Sbp &e : *nd)
        entriesText += (entriesText.empty() ? "" : ",") + e.str();
      hints.push_back(literalPattern(name.str()) + "=" + entriesText);
    }
  }
  return plan;
}

} // namespace oflow
