//===- OFlowAttrs.cpp - mesh and SBP attributes ---------------------------===//
//
// Parsing, printing, verification and helpers of #oflow.mesh, #oflow.sbp and
// #oflow.nd_sbp.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowAttrs.h"
#include "OFlow/OFlowDialect.h"
#include "oflow/Support/SbpRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::oflow;

#include "OFlow/OFlowEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "OFlow/OFlowAttrs.cpp.inc"

void OFlowDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "OFlow/OFlowAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Mesh specs from the command line
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> mlir::oflow::parseMeshSpec(StringRef spec,
                                                           std::string &error) {
  SmallVector<int64_t> shape;
  if (spec.empty()) {
    error = "empty mesh; expected axis sizes such as '8' or '8x4'";
    return failure();
  }
  SmallVector<StringRef> parts;
  spec.split(parts, 'x', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  for (StringRef part : parts) {
    uint64_t size = 0;
    if (part.empty() || !llvm::all_of(part, llvm::isDigit) ||
        part.getAsInteger(10, size)) {
      error = ("invalid mesh '" + spec +
               "': expected positive axis sizes separated by 'x', such as "
               "'8' or '8x4'")
                  .str();
      return failure();
    }
    if (size == 0 || size > (1u << 20)) {
      error = ("invalid mesh '" + spec + "': axis " + Twine(shape.size()) +
               " has size " + part + "; sizes must be between 1 and 1048576")
                  .str();
      return failure();
    }
    shape.push_back(static_cast<int64_t>(size));
  }
  int64_t devices = 1;
  for (int64_t size : shape) {
    devices *= size;
    if (devices > (1 << 20)) {
      error = ("invalid mesh '" + spec +
               "': more than 1048576 devices in all")
                  .str();
      return failure();
    }
  }
  return shape;
}

//===----------------------------------------------------------------------===//
// MeshAttr
//===----------------------------------------------------------------------===//

ArrayRef<StringLiteral> MeshAttr::getKnownLinkKinds() {
  // `sequential`: the axis's "devices" are one device taking turns
  // (--micro-batches' axis; oflow-unroll-micro-batches turns it into time).
  static constexpr StringLiteral kinds[] = {"local", "nvlink", "pcie", "ib",
                                            "ethernet", "sequential"};
  return kinds;
}

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape,
                               ArrayRef<StringAttr> axisNames,
                               ArrayRef<StringAttr> links) {
  if (shape.empty())
    return emitError() << "mesh needs at least one axis";
  int64_t devices = 1;
  for (auto [i, size] : llvm::enumerate(shape)) {
    if (size <= 0)
      return emitError() << "mesh axis " << i << " has size " << size
                         << "; sizes must be positive";
    if (size > (1 << 20) || (devices *= size) > (1 << 20))
      return emitError() << "mesh has more than 1048576 devices";
  }
  if (!axisNames.empty() && axisNames.size() != shape.size())
    return emitError() << "mesh has " << shape.size() << " axes but "
                       << axisNames.size() << " names";
  llvm::StringSet<> seen;
  for (StringAttr name : axisNames)
    if (!seen.insert(name.getValue()).second)
      return emitError() << "mesh axis name '" << name.getValue()
                         << "' is used twice";
  if (!links.empty() && links.size() != shape.size())
    return emitError() << "mesh has " << shape.size() << " axes but "
                       << links.size() << " link kinds";
  for (auto [i, link] : llvm::enumerate(links))
    if (!llvm::is_contained(getKnownLinkKinds(), link.getValue()))
      return emitError() << "mesh axis " << i << " has unknown link kind '"
                         << link.getValue()
                         << "'; expected local, nvlink, pcie, ib, ethernet or sequential";
  return success();
}

int64_t MeshAttr::getNumDevices() const {
  int64_t n = 1;
  for (int64_t size : getShape())
    n *= size;
  return n;
}

SmallVector<int64_t> MeshAttr::getCoordinates(int64_t rank) const {
  ArrayRef<int64_t> shape = getShape();
  SmallVector<int64_t> coords(shape.size());
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    coords[i] = rank % shape[i];
    rank /= shape[i];
  }
  return coords;
}

int64_t MeshAttr::getRank(ArrayRef<int64_t> coords) const {
  int64_t rank = 0;
  for (auto [c, size] : llvm::zip_equal(coords, getShape()))
    rank = rank * size + c;
  return rank;
}

std::string MeshAttr::getAxisDisplayName(unsigned axis) const {
  if (!getAxisNames().empty())
    return std::to_string(axis) + " (" + getAxisNames()[axis].getValue().str() + ")";
  return std::to_string(axis);
}

static ParseResult parseKeywordList(AsmParser &parser,
                                    SmallVectorImpl<StringAttr> &out) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        std::string word;
        if (parser.parseKeywordOrString(&word))
          return failure();
        out.push_back(parser.getBuilder().getStringAttr(word));
        return success();
      });
}

Attribute MeshAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> shape;
  SmallVector<StringAttr> names, links;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "names") {
      if (parseKeywordList(parser, names))
        return {};
    } else if (key == "links") {
      if (parseKeywordList(parser, links))
        return {};
    } else {
      parser.emitError(parser.getCurrentLocation())
          << "unknown mesh parameter '" << key << "'; expected names or links";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), shape, names, links);
}

void MeshAttr::print(AsmPrinter &printer) const {
  printer << "<";
  llvm::interleave(getShape(), printer.getStream(), "x");
  auto printList = [&](StringRef key, ArrayRef<StringAttr> list) {
    if (list.empty())
      return;
    printer << ", " << key << " = [";
    llvm::interleaveComma(list, printer, [&](StringAttr s) {
      printer.printKeywordOrString(s.getValue());
    });
    printer << "]";
  };
  printList("names", getAxisNames());
  printList("links", getLinks());
  printer << ">";
}

//===----------------------------------------------------------------------===//
// SbpAttr
//===----------------------------------------------------------------------===//

LogicalResult SbpAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              SbpKind kind, int64_t axis) {
  if (kind == SbpKind::Split && axis < 0)
    return emitError() << "S(" << axis << "): split axis must be non-negative";
  if (kind != SbpKind::Split && axis != -1)
    return emitError() << "only S(i) has an axis";
  return success();
}

SbpAttr SbpAttr::getSplit(MLIRContext *ctx, int64_t axis) {
  return get(ctx, SbpKind::Split, axis);
}
SbpAttr SbpAttr::getBroadcast(MLIRContext *ctx) {
  return get(ctx, SbpKind::Broadcast, -1);
}
SbpAttr SbpAttr::getPartialSum(MLIRContext *ctx) {
  return get(ctx, SbpKind::PartialSum, -1);
}
SbpAttr SbpAttr::getPartialMax(MLIRContext *ctx) {
  return get(ctx, SbpKind::PartialMax, -1);
}

std::string SbpAttr::str() const {
  switch (getKind()) {
  case SbpKind::Split:
    return "S(" + std::to_string(getAxis()) + ")";
  case SbpKind::Broadcast:
    return "B";
  case SbpKind::PartialSum:
    return "P(sum)";
  case SbpKind::PartialMax:
    return "P(max)";
  }
  llvm_unreachable("unknown SBP kind");
}

void SbpAttr::printBare(AsmPrinter &printer) const { printer << str(); }

SbpAttr SbpAttr::parseBare(AsmParser &parser) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return {};
  if (word == "B")
    return getBroadcast(ctx);
  if (word == "S") {
    int64_t axis = 0;
    if (parser.parseLParen() || parser.parseInteger(axis) ||
        parser.parseRParen())
      return {};
    return getChecked([&] { return parser.emitError(loc); }, ctx,
                      SbpKind::Split, axis);
  }
  if (word == "P") {
    if (failed(parser.parseOptionalLParen()))
      return getPartialSum(ctx);
    StringRef reduce;
    if (parser.parseKeyword(&reduce) || parser.parseRParen())
      return {};
    if (reduce == "sum")
      return getPartialSum(ctx);
    if (reduce == "max")
      return getPartialMax(ctx);
    parser.emitError(loc) << "unknown partial reduction '" << reduce
                          << "'; expected P(sum) or P(max)";
    return {};
  }
  parser.emitError(loc) << "unknown SBP '" << word
                        << "'; expected S(i), B, P(sum) or P(max)";
  return {};
}

Attribute SbpAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  SbpAttr sbp = parseBare(parser);
  if (!sbp || parser.parseGreater())
    return {};
  return sbp;
}

void SbpAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBare(printer);
  printer << ">";
}

//===----------------------------------------------------------------------===//
// NdSbpAttr
//===----------------------------------------------------------------------===//

Attribute NdSbpAttr::parse(AsmParser &parser, Type) {
  SmallVector<SbpAttr> entries;
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       SbpAttr sbp = SbpAttr::parseBare(parser);
                                       if (!sbp)
                                         return failure();
                                       entries.push_back(sbp);
                                       return success();
                                     }) ||
      parser.parseGreater())
    return {};
  if (entries.empty()) {
    parser.emitError(parser.getNameLoc())
        << "nd-SBP needs one entry per mesh axis";
    return {};
  }
  return get(parser.getContext(), entries);
}

void NdSbpAttr::print(AsmPrinter &printer) const {
  printer << "<" << str() << ">";
}

std::string NdSbpAttr::str() const {
  std::string out = "[";
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(getEntries(), os,
                        [&](SbpAttr sbp) { os << sbp.str(); });
  os << "]";
  return out;
}

/// The entries in the terms of the rules both SBP models share.
static SmallVector<::oflow::sbp_rules::Entry> ruleEntries(ArrayRef<SbpAttr> entries) {
  using ::oflow::sbp_rules::EntryKind;
  SmallVector<::oflow::sbp_rules::Entry> out;
  for (SbpAttr sbp : entries) {
    EntryKind kind = sbp.isSplit()                          ? EntryKind::Split
                     : sbp.isBroadcast()                    ? EntryKind::Broadcast
                     : sbp.getKind() == SbpKind::PartialSum ? EntryKind::PartialSum
                                                            : EntryKind::PartialMax;
    out.push_back({kind, sbp.isSplit() ? sbp.getAxis() : -1});
  }
  return out;
}

LogicalResult
NdSbpAttr::verifyFor(MeshAttr mesh, ArrayRef<int64_t> shape,
                     function_ref<InFlightDiagnostic()> emitError) const {
  using ::oflow::sbp_rules::Problem;
  ::oflow::sbp_rules::Finding found =
      ::oflow::sbp_rules::checkLayout(mesh.getShape(), shape, ruleEntries(getEntries()));
  switch (found.problem) {
  case Problem::None:
    return success();
  case Problem::EntryCount:
    return emitError() << "nd-SBP " << str() << " has " << getEntries().size()
                       << " entries but the mesh " << mesh << " has "
                       << mesh.getNumAxes() << " axes";
  case Problem::SplitAxisOutOfRange:
    return emitError() << "nd-SBP " << str() << " on mesh axis "
                       << mesh.getAxisDisplayName(found.meshAxis) << " splits axis "
                       << found.tensorAxis << " of a rank-" << shape.size() << " tensor";
  case Problem::MixedPartials:
    return emitError() << "nd-SBP " << str() << " is partial with sum and with max (mesh axis "
                       << mesh.getAxisDisplayName(found.meshAxis)
                       << "): no reduction undoes both";
  case Problem::NotDivisible: {
    int64_t meshSize = mesh.getShape()[found.meshAxis];
    InFlightDiagnostic diag = emitError();
    diag << "nd-SBP " << str() << ": tensor axis " << found.tensorAxis << " (size "
         << shape[found.tensorAxis] << ") is not divisible by ";
    if (found.factor == meshSize)
      diag << "the size " << meshSize << " of mesh axis "
           << mesh.getAxisDisplayName(found.meshAxis);
    else
      diag << found.factor
           << ", the product of the mesh axes that split it (up to mesh axis "
           << mesh.getAxisDisplayName(found.meshAxis) << ")";
    return diag;
  }
  }
  llvm_unreachable("unknown layout problem");
}

SmallVector<int64_t> NdSbpAttr::getLocalShape(MeshAttr mesh,
                                              ArrayRef<int64_t> shape) const {
  return ::oflow::sbp_rules::localShape(mesh.getShape(), shape, ruleEntries(getEntries()));
}

//===----------------------------------------------------------------------===//
// InitAttr
//===----------------------------------------------------------------------===//

int InitAttr::getNumArgs(StringRef kind) {
  return llvm::StringSwitch<int>(kind)
      .Cases({"zeros", "ones"}, 0)
      .Case("constant", 1)
      .Cases({"normal", "uniform", "truncated_normal"}, 2)
      .Default(-1);
}

/// 0.02, not 2.000000e-02.
static std::string shortText(double v) {
  char text[40];
  for (int digits = 6; digits < 18; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v)
      break;
  }
  return text;
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               StringRef kind, APFloat aValue, APFloat bValue,
                               uint64_t seed, Type type) {
  double a = aValue.convertToDouble(), b = bValue.convertToDouble();
  if (getNumArgs(kind) < 0)
    return emitError() << "unknown initializer '" << kind
                       << "' (zeros, ones, constant, normal, uniform, "
                          "truncated_normal)";
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !(tensor.getElementType().isF32() || tensor.getElementType().isF64()))
    return emitError() << "an initializer needs a static tensor type of f32 or f64, got "
                       << type;
  if ((kind == "normal" || kind == "truncated_normal") && !(b > 0))
    return emitError() << kind << "(" << shortText(a) << ", " << shortText(b)
                       << "): the standard deviation must be positive";
  if (kind == "uniform" && !(a < b))
    return emitError() << "uniform(" << shortText(a) << ", " << shortText(b)
                       << "): low must be below high";
  if (!std::isfinite(a) || !std::isfinite(b))
    return emitError() << kind << ": arguments must be finite";
  if (seed > 0xffffffffu)
    return emitError() << "seed " << seed << " does not fit 32 bits";
  return success();
}

Attribute InitAttr::parse(AsmParser &parser, Type type) {
  std::string kind;
  double args[2] = {0, 0};
  uint64_t seed = 0;
  if (parser.parseLess() || parser.parseKeywordOrString(&kind))
    return {};
  int n = getNumArgs(kind);
  if (n > 0) {
    if (parser.parseLParen())
      return {};
    for (int i = 0; i < n; ++i)
      if ((i && parser.parseComma()) || parser.parseFloat(args[i]))
        return {};
    if (parser.parseRParen())
      return {};
  }
  if (succeeded(parser.parseOptionalComma()))
    if (parser.parseKeyword("seed") || parser.parseEqual() || parser.parseInteger(seed))
      return {};
  if (parser.parseGreater())
    return {};
  if (!type) {
    parser.emitError(parser.getNameLoc(), "#oflow.init needs its tensor type: "
                                          "#oflow.init<...> : tensor<...>");
    return {};
  }
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), kind, APFloat(args[0]), APFloat(args[1]),
                    seed, type);
}

void InitAttr::print(AsmPrinter &printer) const {
  printer << "<" << getKind();
  int n = getNumArgs(getKind());
  if (n > 0) {
    printer << "(";
    printer.printFloat(getA());
    if (n > 1) {
      printer << ", ";
      printer.printFloat(getB());
    }
    printer << ")";
  }
  if (getSeed())
    printer << ", seed = " << getSeed();
  printer << ">";
}

std::string InitAttr::manifestText() const {
  return getKind().str() + ":" + shortText(getA().convertToDouble()) + ":" +
         shortText(getB().convertToDouble()) + ":" + std::to_string(getSeed());
}
