//===- CostModel.cpp - SBP layouts, meshes and the time model -------------===//
#include "oflow/Sbp/CostModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cassert>

namespace oflow::sbp {

std::string Sbp::str() const {
  switch (kind) {
  case SbpKind::Split:
    return "S(" + std::to_string(axis) + ")";
  case SbpKind::Broadcast:
    return "B";
  case SbpKind::PartialSum:
    return "P(sum)";
  case SbpKind::PartialMax:
    return "P(max)";
  }
  return "?";
}

std::string str(const NdSbp &nd) {
  std::string out = "[";
  for (size_t i = 0; i < nd.size(); ++i)
    out += (i ? ", " : "") + nd[i].str();
  return out + "]";
}

std::optional<Sbp> parseSbp(llvm::StringRef text) {
  text = text.trim();
  if (text == "B")
    return Sbp::broadcast();
  if (text == "P" || text == "P(sum)")
    return Sbp::partialSum();
  if (text == "P(max)")
    return Sbp::partialMax();
  int64_t axis;
  if (text.consume_front("S(") && text.consume_back(")") &&
      !text.trim().getAsInteger(10, axis) && axis >= 0)
    return Sbp::split(axis);
  return std::nullopt;
}

std::optional<NdSbp> parseNdSbp(llvm::StringRef text) {
  text = text.trim();
  if (text.consume_front("[") && !text.consume_back("]"))
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',');
  NdSbp nd;
  for (llvm::StringRef part : parts) {
    std::optional<Sbp> sbp = parseSbp(part);
    if (!sbp)
      return std::nullopt;
    nd.push_back(*sbp);
  }
  return nd;
}

std::optional<Link> linkByName(llvm::StringRef kind) {
  std::string name = kind.trim().lower();
  if (name == "nvlink")
    return Link{10e-6, 370e9};
  if (name == "pcie")
    return Link{10e-6, 16e9};
  if (name == "ib" || name == "infiniband")
    return Link{46e-6, 46e9};
  if (name == "ethernet" || name == "eth")
    return Link{30e-6, 3e9};
  if (name == "local")
    return Link{2e-6, 10e9};
  if (name == "sequential")
    return Link{1e-6, 1e12, /*sequential=*/true};
  return std::nullopt;
}

Link defaultLink() { return *linkByName("local"); }

int64_t Mesh::numDevices() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

Link Mesh::link(int64_t meshAxis) const {
  if (meshAxis >= 0 && meshAxis < static_cast<int64_t>(links.size()))
    return links[meshAxis];
  return defaultLink();
}

Device deviceFor(const oflow::DeviceProfile &profile, llvm::StringRef precision) {
  return {profile.gemmFlopsPerSecond(precision), profile.hbmBytesPerSecond};
}

double computeSeconds(const Device &device, double flops, double bytes) {
  return std::max(flops / device.flopsPerSecond, bytes / device.bytesPerSecond);
}

int64_t splitFactor(const Mesh &mesh, const NdSbp &nd, int64_t axis) {
  int64_t factor = 1;
  for (size_t a = 0; a < nd.size() && a < mesh.shape.size(); ++a)
    if (nd[a].isSplit() && nd[a].axis == axis)
      factor *= mesh.shape[a];
  return factor;
}

bool isValidLayout(const Mesh &mesh, llvm::ArrayRef<int64_t> shape,
                   const NdSbp &nd) {
  // Dynamic dimensions (negative) cannot be priced or checked.
  if (nd.size() != mesh.shape.size() ||
      llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return false;
  bool sum = false, max = false;
  for (const Sbp &s : nd) {
    if (s.isSplit() &&
        (s.axis < 0 || s.axis >= static_cast<int64_t>(shape.size())))
      return false;
    sum |= s.kind == SbpKind::PartialSum;
    max |= s.kind == SbpKind::PartialMax;
  }
  if (sum && max)
    return false;
  for (int64_t i = 0, e = shape.size(); i < e; ++i)
    if (shape[i] % splitFactor(mesh, nd, i) != 0)
      return false;
  return true;
}

llvm::SmallVector<int64_t> localShape(const Mesh &mesh,
                                      llvm::ArrayRef<int64_t> shape,
                                      const NdSbp &nd) {
  assert(isValidLayout(mesh, shape, nd) && "localShape of an invalid layout");
  llvm::SmallVector<int64_t> local(shape.begin(), shape.end());
  for (int64_t i = 0, e = shape.size(); i < e; ++i)
    local[i] /= splitFactor(mesh, nd, i);
  return local;
}

} // namespace oflow::sbp
