//===- CostModel.cpp - SBP layouts, meshes and the time model -------------===//
#include "oflow/Sbp/CostModel.h"
#include "oflow/Support/SbpRules.h"

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
  return {profile.gemmFlopsPerSecond(precision), profile.hbmBytesPerSecond,
          profile.gemmFlopsPerSecond("fp32")};
}

double computeSeconds(const Device &device, double flops, double bytes) {
  return std::max(flops / device.flopsPerSecond, bytes / device.bytesPerSecond);
}

/// The entries in the terms of the rules both SBP models share.
static llvm::SmallVector<sbp_rules::Entry> ruleEntries(const NdSbp &nd) {
  llvm::SmallVector<sbp_rules::Entry> out;
  for (const Sbp &s : nd) {
    sbp_rules::EntryKind kind =
        s.kind == SbpKind::Split       ? sbp_rules::EntryKind::Split
        : s.kind == SbpKind::Broadcast ? sbp_rules::EntryKind::Broadcast
        : s.kind == SbpKind::PartialSum ? sbp_rules::EntryKind::PartialSum
                                        : sbp_rules::EntryKind::PartialMax;
    out.push_back({kind, s.axis});
  }
  return out;
}

int64_t splitFactor(const Mesh &mesh, const NdSbp &nd, int64_t axis) {
  return sbp_rules::splitFactor(mesh.shape, ruleEntries(nd), axis);
}

bool isValidLayout(const Mesh &mesh, llvm::ArrayRef<int64_t> shape,
                   const NdSbp &nd) {
  // The dialect's rules, on static shapes only: dynamic dimensions
  // (negative) cannot be priced.
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return false;
  return !sbp_rules::checkLayout(mesh.shape, shape, ruleEntries(nd));
}

llvm::SmallVector<int64_t> localShape(const Mesh &mesh,
                                      llvm::ArrayRef<int64_t> shape,
                                      const NdSbp &nd) {
  return sbp_rules::localShape(mesh.shape, shape, ruleEntries(nd));
}

} // namespace oflow::sbp
