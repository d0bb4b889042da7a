//===- IntegerFolding.cpp - compile-time shape arithmetic ------------------===//
//
// Exporters compute shapes at run time (Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape). With static input shapes all of it is known at compile
// time; folding it here leaves the oflow graph with static shapes and no
// shape ops. Only integer and boolean tensors fold, and only small ones.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

#include "mlir/Dialect/Traits.h"

using namespace mlir;

namespace oflow::import {
namespace {

constexpr int64_t kMaxFoldElements = 4096;

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

SmallVector<int64_t> strides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// The element of `t` read at the broadcast index `idx` of `outShape`.
int64_t broadcastRead(const IntTensor &t, ArrayRef<int64_t> outShape,
                      int64_t flat) {
  SmallVector<int64_t> outStrides = strides(outShape);
  SmallVector<int64_t> inStrides = strides(t.shape);
  int64_t offset = 0, lead = outShape.size() - t.shape.size();
  for (size_t d = 0; d < outShape.size(); ++d) {
    int64_t i = (flat / outStrides[d]) % outShape[d];
    if (static_cast<int64_t>(d) >= lead && t.shape[d - lead] != 1)
      offset += i * inStrides[d - lead];
  }
  return t.data[offset];
}

std::optional<IntTensor> binary(const IntTensor &a, const IntTensor &b,
                                Type resultType,
                                llvm::function_ref<int64_t(int64_t, int64_t)> f) {
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(a.shape, b.shape, shape) ||
      numElements(shape) > kMaxFoldElements)
    return std::nullopt;
  IntTensor out{shape, {}, resultType};
  for (int64_t i = 0, n = numElements(shape); i < n; ++i)
    out.data.push_back(f(broadcastRead(a, shape, i), broadcastRead(b, shape, i)));
  return out;
}

int64_t normalize(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

} // namespace

bool tryFoldIntegerNode(NodeContext &ctx) {
  const onnx::NodeProto &node = ctx.node();
  StringRef op = node.op_type();
  MLIRContext *mctx = ctx.ctx();
  Type i64 = IntegerType::get(mctx, 64), i1 = IntegerType::get(mctx, 1);
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return false;

  // Shape and Size read only the (static) input type.
  if (op == "Shape" || op == "Size") {
    RankedTensorType t = ctx.inputType(0);
    if (!t)
      return false;
    if (op == "Size") {
      ctx.setIntOutput(0, {{}, {t.getNumElements()}, i64});
      return true;
    }
    int64_t rank = t.getRank();
    int64_t start = std::clamp<int64_t>(normalize(ctx.intAttr("start", 0), rank), 0, rank);
    int64_t end = std::clamp<int64_t>(
        ctx.hasAttr("end") ? normalize(ctx.intAttr("end", rank), rank) : rank, 0, rank);
    IntTensor out{{std::max<int64_t>(0, end - start)}, {}, i64};
    for (int64_t d = start; d < end; ++d)
      out.data.push_back(t.getDimSize(d));
    ctx.setIntOutput(0, out);
    return true;
  }

  // Everything else folds only when every input is a known integer tensor.
  SmallVector<const IntTensor *> in;
  for (int i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i)) {
      in.push_back(nullptr);
      continue;
    }
    const IntTensor *t = ctx.constIntTensor(i);
    if (!t)
      return false;
    in.push_back(t);
  }
  if (in.empty() || !in[0])
    return false;
  const IntTensor &x = *in[0];

  auto setOut = [&](std::optional<IntTensor> t) {
    if (!t)
      return false;
    ctx.setIntOutput(0, std::move(*t));
    return true;
  };

  if (op == "Identity")
    return setOut(x);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
      op == "Max" || op == "Min") {
    if (in.size() != 2 || x.elementType != in[1]->elementType)
      return false;
    if (op == "Div" && llvm::is_contained(in[1]->data, 0))
      return false;
    return setOut(binary(x, *in[1], x.elementType, [&](int64_t a, int64_t b) {
      if (op == "Add") return a + b;
      if (op == "Sub") return a - b;
      if (op == "Mul") return a * b;
      if (op == "Max") return std::max(a, b);
      if (op == "Min") return std::min(a, b);
      // ONNX integer Div truncates toward zero, as C++ does.
      return a / b;
    }));
  }
  if (op == "Equal" || op == "Less" || op == "Greater" ||
      op == "LessOrEqual" || op == "GreaterOrEqual") {
    if (in.size() != 2)
      return false;
    return setOut(binary(x, *in[1], i1, [&](int64_t a, int64_t b) -> int64_t {
      if (op == "Equal") return a == b;
      if (op == "Less") return a < b;
      if (op == "Greater") return a > b;
      if (op == "LessOrEqual") return a <= b;
      return a >= b;
    }));
  }
  if (op == "Not") {
    IntTensor out = x;
    for (int64_t &v : out.data)
      v = !v;
    return setOut(out);
  }
  if (op == "Neg") {
    IntTensor out = x;
    for (int64_t &v : out.data)
      v = -v;
    return setOut(out);
  }
  if (op == "Where") {
    if (in.size() != 3 || in[1]->elementType != in[2]->elementType)
      return false;
    auto picked = binary(*in[1], *in[2], in[1]->elementType,
                         [](int64_t a, int64_t) { return a; });
    auto other = binary(*in[1], *in[2], in[1]->elementType,
                        [](int64_t, int64_t b) { return b; });
    if (!picked || !other)
      return false;
    auto cond = binary(x, *picked, i1, [](int64_t c, int64_t) { return c; });
    if (!cond || cond->shape != picked->shape)
      return false;
    for (size_t i = 0; i < picked->data.size(); ++i)
      if (!cond->data[i])
        picked->data[i] = other->data[i];
    return setOut(picked);
  }
  if (op == "Cast") {
    Type to = convertElementType(mctx, ctx.intAttr("to", 0));
    if (!to || !to.isInteger())
      return false;
    IntTensor out = x;
    out.elementType = to;
    unsigned width = to.getIntOrFloatBitWidth();
    for (int64_t &v : out.data) {
      if (width == 1)
        v = v != 0;
      else if (width < 64)
        v = to.isUnsignedInteger()
                ? static_cast<int64_t>(static_cast<uint64_t>(v) & ((1ull << width) - 1))
                : llvm::SignExtend64(static_cast<uint64_t>(v), width);
    }
    return setOut(out);
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    SmallVector<int64_t> axes = ctx.intsAttr("axes");
    if (ctx.opset() >= 13 && in.size() > 1 && in[1])
      axes.assign(in[1]->data.begin(), in[1]->data.end());
    IntTensor out = x;
    if (op == "Unsqueeze") {
      int64_t rank = x.shape.size() + axes.size();
      SmallVector<int64_t> norm;
      for (int64_t a : axes)
        norm.push_back(normalize(a, rank));
      out.shape.clear();
      auto next = x.shape.begin();
      for (int64_t d = 0; d < rank; ++d) {
        if (llvm::is_contained(norm, d))
          out.shape.push_back(1);
        else if (next != x.shape.end())
          out.shape.push_back(*next++);
        else
          return false;
      }
    } else {
      int64_t rank = x.shape.size();
      out.shape.clear();
      for (int64_t d = 0; d < rank; ++d) {
        bool squeeze =
            axes.empty() ? x.shape[d] == 1
                         : llvm::any_of(axes, [&](int64_t a) {
                             return normalize(a, rank) == d;
                           });
        if (!squeeze)
          out.shape.push_back(x.shape[d]);
        else if (x.shape[d] != 1)
          return false;
      }
    }
    return setOut(out);
  }
  if (op == "Concat") {
    int64_t rank = x.shape.size();
    int64_t axis = normalize(ctx.intAttr("axis", 0), rank);
    if (axis != 0 || rank != 1)
      return false; // shape vectors only
    IntTensor out{{0}, {}, x.elementType};
    for (const IntTensor *t : in) {
      if (!t || t->shape.size() != 1 || t->elementType != x.elementType)
        return false;
      llvm::append_range(out.data, t->data);
    }
    out.shape[0] = out.data.size();
    return setOut(out);
  }
  if (op == "Gather") {
    if (in.size() != 2 || x.shape.size() != 1 ||
        normalize(ctx.intAttr("axis", 0), 1) != 0)
      return false;
    IntTensor out{in[1]->shape, {}, x.elementType};
    int64_t n = x.shape[0];
    for (int64_t idx : in[1]->data) {
      int64_t i = idx < 0 ? idx + n : idx;
      if (i < 0 || i >= n)
        return false;
      out.data.push_back(x.data[i]);
    }
    return setOut(out);
  }
  if (op == "Reshape") {
    if (in.size() < 2 || !in[1])
      return false;
    SmallVector<int64_t> shape;
    int64_t known = 1, inferAt = -1;
    for (auto [i, entry] : llvm::enumerate(in[1]->data)) {
      int64_t d = entry;
      if (d == 0 && !ctx.intAttr("allowzero", 0))
        d = i < x.shape.size() ? x.shape[i] : -2;
      if (d == -1) {
        inferAt = i;
        shape.push_back(1);
        continue;
      }
      if (d < 0)
        return false;
      shape.push_back(d);
      known *= d;
    }
    int64_t total = numElements(x.shape);
    if (inferAt >= 0) {
      if (known == 0 || total % known)
        return false;
      shape[inferAt] = total / known;
    }
    if (numElements(shape) != total)
      return false;
    IntTensor out = x;
    out.shape = shape;
    return setOut(out);
  }
  if (op == "Slice" && ctx.opset() >= 10) {
    if (x.shape.size() != 1 || in.size() < 3)
      return false;
    int64_t n = x.shape[0];
    int64_t start = in[1]->data.empty() ? 0 : in[1]->data[0];
    int64_t end = in[2]->data.empty() ? n : in[2]->data[0];
    int64_t step = in.size() > 4 && in[4] ? in[4]->data[0] : 1;
    if (in.size() > 3 && in[3] && normalize(in[3]->data[0], 1) != 0)
      return false;
    if (step <= 0)
      return false;
    start = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
    end = std::clamp<int64_t>(end < 0 ? end + n : end, 0, n);
    IntTensor out{{0}, {}, x.elementType};
    for (int64_t i = start; i < end; i += step)
      out.data.push_back(x.data[i]);
    out.shape[0] = out.data.size();
    return setOut(out);
  }
  if (op == "Range") {
    // Any integer type (torch exports int32 ranges too); all three scalars.
    if (in.size() != 3 || !in[1] || !in[2] || x.elementType.isInteger(1) ||
        in[1]->elementType != x.elementType ||
        in[2]->elementType != x.elementType || x.data.size() != 1 ||
        in[1]->data.size() != 1 || in[2]->data.size() != 1)
      return false;
    int64_t start = x.data[0], limit = in[1]->data[0], delta = in[2]->data[0];
    if (delta == 0)
      return false;
    int64_t count = std::max<int64_t>(0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
    if (count > kMaxFoldElements)
      return false;
    IntTensor out{{count}, {}, x.elementType};
    for (int64_t i = 0; i < count; ++i)
      out.data.push_back(start + i * delta);
    return setOut(out);
  }
  if (op == "ConstantOfShape") {
    // Any element type: produce a splat constant.
    if (llvm::any_of(x.data, [](int64_t d) { return d < 0; }))
      return false;
    DenseElementsAttr value;
    const onnx::AttributeProto *attr = ctx.attr("value");
    std::string error;
    ElementsAttr scalar;
    if (attr) {
      scalar = readTensor(mctx, attr->t(), "", /*asResource=*/false, "", error);
      if (!scalar)
        return false;
    }
    auto shapedType = [&](Type element) {
      return RankedTensorType::get(x.data, element);
    };
    if (!scalar)
      value = DenseElementsAttr::get(shapedType(Float32Type::get(mctx)), 0.0f);
    else
      value = DenseElementsAttr::get(
          shapedType(cast<ShapedType>(scalar.getType()).getElementType()),
          cast<DenseElementsAttr>(scalar).getSplatValue<Attribute>());
    ctx.setConstOutput(0, value);
    return true;
  }
  return false;
}

} // namespace oflow::import
