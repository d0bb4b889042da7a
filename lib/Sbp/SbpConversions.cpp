//===- SbpConversions.cpp - IR attributes <-> the planner's value types ---===//
#include "oflow/Sbp/SbpConversions.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
namespace of = mlir::oflow;

namespace oflow::sbp {

Sbp toPlanner(of::SbpAttr attr) {
  switch (attr.getKind()) {
  case of::SbpKind::Split:
    return Sbp::split(attr.getAxis());
  case of::SbpKind::Broadcast:
    return Sbp::broadcast();
  case of::SbpKind::PartialSum:
    return Sbp::partialSum();
  case of::SbpKind::PartialMax:
    return Sbp::partialMax();
  }
  llvm_unreachable("unknown SBP kind");
}

NdSbp toPlanner(of::NdSbpAttr attr) {
  NdSbp nd;
  for (of::SbpAttr entry : attr.getEntries())
    nd.push_back(toPlanner(entry));
  return nd;
}

Mesh toPlanner(of::MeshAttr mesh) {
  Mesh m;
  m.shape.assign(mesh.getShape().begin(), mesh.getShape().end());
  for (StringAttr link : mesh.getLinks())
    m.links.push_back(linkByName(link.getValue()).value_or(defaultLink()));
  return m;
}

of::SbpAttr toAttr(MLIRContext *ctx, const Sbp &sbp) {
  switch (sbp.kind) {
  case SbpKind::Split:
    return of::SbpAttr::getSplit(ctx, sbp.axis);
  case SbpKind::Broadcast:
    return of::SbpAttr::getBroadcast(ctx);
  case SbpKind::PartialSum:
    return of::SbpAttr::getPartialSum(ctx);
  case SbpKind::PartialMax:
    return of::SbpAttr::getPartialMax(ctx);
  }
  llvm_unreachable("unknown SBP kind");
}

of::NdSbpAttr toAttr(MLIRContext *ctx, const NdSbp &nd) {
  SmallVector<of::SbpAttr> entries;
  for (const Sbp &sbp : nd)
    entries.push_back(toAttr(ctx, sbp));
  return of::NdSbpAttr::get(ctx, entries);
}

of::NdSbpAttr broadcastNdSbp(MLIRContext *ctx, int64_t numAxes) {
  return of::NdSbpAttr::get(
      ctx, SmallVector<of::SbpAttr>(numAxes, of::SbpAttr::getBroadcast(ctx)));
}

int64_t elementBytes(Type tensorType) {
  Type element = cast<ShapedType>(tensorType).getElementType();
  return std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
}

of::NdSbpAttr getValueSbp(Value value) {
  StringRef name = of::OFlowDialect::kSbpAttrName;
  if (auto result = dyn_cast<OpResult>(value)) {
    auto list = result.getOwner()->getAttrOfType<ArrayAttr>(name);
    return list ? dyn_cast<of::NdSbpAttr>(list[result.getResultNumber()])
                : of::NdSbpAttr();
  }
  auto arg = cast<BlockArgument>(value);
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!fn || !arg.getOwner()->isEntryBlock())
    return {};
  return fn.getArgAttrOfType<of::NdSbpAttr>(arg.getArgNumber(), name);
}

} // namespace oflow::sbp
