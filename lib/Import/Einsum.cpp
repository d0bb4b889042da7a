//===- Einsum.cpp - ONNX Einsum as transposes, reshapes and matmuls -------===//
//
// An Einsum is a sequence of pairwise contractions, each one batched matrix
// product: for operands A and B, the labels both share and still need are
// the batch, those both share and no later term needs are contracted (K),
// the rest are kept (M from A, N from B). A is transposed to
// [batch, M labels, K labels] and reshaped to [batch, M, K], B likewise to
// [batch, K, N], and the product reshaped back to [batch, M labels,
// N labels]. Labels only one operand has and nobody needs are summed first.
// The importer emits only existing ops, so gradients, SBP signatures and
// kernels are theirs (the GEMMs run in BLAS / cuBLAS). Operands fold left to
// right, as ONNX's reference does. A label twice in one term (a diagonal or
// a trace) is taken once first, through an identity mask.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

#include "OFlow/OFlowOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::oflow;

namespace oflow::import {
namespace {

/// A label: a letter's character code, or 256 + k for the k-th dim the
/// ellipsis stands for (aligned from the right across operands).
using Label = int;
constexpr Label kEllipsisBase = 256;

std::string labelName(Label l) {
  if (l < kEllipsisBase)
    return std::string(1, static_cast<char>(l));
  return "...[" + std::to_string(l - kEllipsisBase) + "]";
}

/// One term's letters with `...` as a marker (-1).
FailureOr<SmallVector<Label>> parseTerm(NodeContext &c, StringRef term) {
  SmallVector<Label> out;
  for (size_t i = 0; i < term.size(); ++i) {
    char ch = term[i];
    if (ch == '.') {
      if (!term.substr(i).starts_with("...") ||
          llvm::is_contained(out, -1))
        return c.unsupported("equation term '" + term +
                             "' has a malformed or second ellipsis");
      out.push_back(-1);
      i += 2;
    } else if (llvm::isAlpha(ch)) {
      out.push_back(static_cast<unsigned char>(ch));
    } else {
      return c.unsupported("equation term '" + term +
                           "' has the character '" + Twine(ch) + "'");
    }
  }
  return out;
}

/// A value with one label per axis.
struct Labeled {
  Value value;
  SmallVector<Label> labels;

  ArrayRef<int64_t> shape() const {
    return cast<RankedTensorType>(value.getType()).getShape();
  }
  int64_t size(Label l) const {
    return shape()[llvm::find(labels, l) - labels.begin()];
  }
};

class EinsumBuilder {
public:
  explicit EinsumBuilder(NodeContext &c) : c(c) {}

  /// Sums `x` over the labels `keep` rejects.
  FailureOr<Labeled> sumOut(Labeled x, function_ref<bool(Label)> keep) {
    SmallVector<int64_t> axes;
    Labeled out{x.value, {}};
    for (auto [axis, l] : llvm::enumerate(x.labels)) {
      if (keep(l))
        out.labels.push_back(l);
      else
        axes.push_back(static_cast<int64_t>(axis));
    }
    if (axes.empty())
      return x;
    out.value = c.create<ReduceSumOp>(
        x.value, {c.named("axes", c.builder().getDenseI64ArrayAttr(axes)),
                  c.named("keepdims", c.builder().getBoolAttr(false))});
    if (!out.value)
      return failure();
    return out;
  }

  /// `x` with its axes in the order of `labels`.
  FailureOr<Value> permute(const Labeled &x, ArrayRef<Label> labels) {
    SmallVector<int64_t> perm;
    for (Label l : labels)
      perm.push_back(llvm::find(x.labels, l) - x.labels.begin());
    if (llvm::equal(perm, llvm::seq<int64_t>(0, static_cast<int64_t>(perm.size()))))
      return x.value;
    Value v = c.create<TransposeOp>(
        x.value, {c.named("perm", c.builder().getDenseI64ArrayAttr(perm))});
    if (!v)
      return failure();
    return v;
  }

  FailureOr<Value> reshape(Value v, ArrayRef<int64_t> shape) {
    if (cast<RankedTensorType>(v.getType()).getShape() == shape)
      return v;
    Value r = c.create<ReshapeOp>(
        v, {c.named("shape", c.builder().getDenseI64ArrayAttr(shape))});
    if (!r)
      return failure();
    return r;
  }

  /// The pairwise contraction of `a` and `b`, keeping the labels `needed`.
  FailureOr<Labeled> contract(const Labeled &a, const Labeled &b,
                              function_ref<bool(Label)> needed) {
    SmallVector<Label> batch, kept_a, contracted, kept_b;
    for (Label l : a.labels) {
      bool inB = llvm::is_contained(b.labels, l);
      if (inB && needed(l))
        batch.push_back(l);
      else if (inB)
        contracted.push_back(l);
      else
        kept_a.push_back(l);
    }
    for (Label l : b.labels)
      if (!llvm::is_contained(a.labels, l))
        kept_b.push_back(l);
    int64_t m = 1, k = 1, n = 1;
    for (Label l : kept_a)
      m *= a.size(l);
    for (Label l : kept_b)
      n *= b.size(l);
    for (Label l : contracted) {
      if (a.size(l) != b.size(l))
        return c.unsupported("label '" + labelName(l) + "' is summed over " +
                             Twine(a.size(l)) + " and " + Twine(b.size(l)) +
                             " elements in two operands (a broadcast "
                             "summed label is not supported)");
      k *= a.size(l);
    }
    // [batch..., M, K] x [batch..., K, N]: matmul broadcasts the batch. An
    // operand whose axes already lie as [batch, K, M] (or [batch, N, K]) is
    // read through the matmul's transpose flag instead of a transpose.
    struct Side {
      Value value;
      bool transposed = false;
    };
    auto side = [&](const Labeled &x, ArrayRef<Label> first,
                    ArrayRef<Label> second, int64_t rows,
                    int64_t cols) -> FailureOr<Side> {
      auto orderOf = [&](ArrayRef<Label> lo, ArrayRef<Label> hi) {
        SmallVector<Label> order(batch);
        order.append(lo.begin(), lo.end());
        order.append(hi.begin(), hi.end());
        return order;
      };
      SmallVector<Label> swapped = orderOf(second, first);
      bool transposed = swapped == ArrayRef<Label>(x.labels) &&
                        orderOf(first, second) != ArrayRef<Label>(x.labels);
      FailureOr<Value> t =
          transposed ? FailureOr<Value>(x.value)
                     : permute(x, orderOf(first, second));
      if (failed(t))
        return failure();
      SmallVector<int64_t> shape;
      for (Label l : batch)
        shape.push_back(x.size(l));
      if (transposed)
        shape.append({cols, rows});
      else
        shape.append({rows, cols});
      FailureOr<Value> r = reshape(*t, shape);
      if (failed(r))
        return failure();
      return Side{*r, transposed};
    };
    FailureOr<Side> lhs = side(a, kept_a, contracted, m, k);
    FailureOr<Side> rhs = side(b, contracted, kept_b, k, n);
    if (failed(lhs) || failed(rhs))
      return failure();
    SmallVector<NamedAttribute> flags;
    if (lhs->transposed)
      flags.push_back(c.named("transpose_a", c.builder().getUnitAttr()));
    if (rhs->transposed)
      flags.push_back(c.named("transpose_b", c.builder().getUnitAttr()));
    Value product = c.create<MatmulOp>({lhs->value, rhs->value}, flags);
    if (!product)
      return failure();
    Labeled out{product, batch};
    llvm::append_range(out.labels, kept_a);
    llvm::append_range(out.labels, kept_b);
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(product.getType()).getShape().drop_back(2));
    for (Label l : kept_a)
      shape.push_back(a.size(l));
    for (Label l : kept_b)
      shape.push_back(b.size(l));
    FailureOr<Value> r = reshape(product, shape);
    if (failed(r))
      return failure();
    out.value = *r;
    return out;
  }

private:
  NodeContext &c;
};

/// `x` with each label that repeats in its term taken once: the diagonal
/// over the two axes (x times an identity mask, summed over the second),
/// so that the gradient is the mask's (a diagonal scatter) with no new op.
FailureOr<Labeled> takeDiagonals(NodeContext &c, Labeled x, StringRef term) {
  for (size_t q = 0; q < x.labels.size(); ++q) {
    size_t p = llvm::find(x.labels, x.labels[q]) - x.labels.begin();
    if (p == q)
      continue;
    int64_t n = x.shape()[p];
    if (x.shape()[q] != n)
      return c.unsupported("label '" + labelName(x.labels[q]) +
                           "' repeats in term '" + term +
                           "' over axes of sizes " + Twine(n) + " and " +
                           Twine(x.shape()[q]));
    SmallVector<int64_t> maskShape(x.labels.size(), 1);
    maskShape[p] = maskShape[q] = n;
    std::vector<float> eye(static_cast<size_t>(n * n), 0.0f);
    for (int64_t i = 0; i < n; ++i)
      eye[static_cast<size_t>(i * n + i)] = 1.0f;
    auto type = RankedTensorType::get(maskShape, c.builder().getF32Type());
    Value mask = ConstantOp::create(c.builder(), c.loc(),
                                    DenseElementsAttr::get(type, ArrayRef<float>(eye)));
    Type elt = cast<RankedTensorType>(x.value.getType()).getElementType();
    if (!elt.isF32())
      mask = c.create<CastOp>(mask, {c.named("to", TypeAttr::get(elt))});
    Value masked = mask ? c.create<MulOp>({x.value, mask}) : Value();
    if (!masked)
      return failure();
    x.value = c.create<ReduceSumOp>(
        masked,
        {c.named("axes", c.builder().getDenseI64ArrayAttr({static_cast<int64_t>(q)})),
         c.named("keepdims", c.builder().getBoolAttr(false))});
    if (!x.value)
      return failure();
    x.labels.erase(x.labels.begin() + q);
    --q;
  }
  return x;
}

} // namespace

LogicalResult convertEinsum(NodeContext &c) {
  std::string equation = c.stringAttr("equation", "");
  llvm::erase_if(equation, [](char ch) { return ch == ' '; });
  StringRef eq(equation);
  auto [lhs, rhs] = eq.split("->");
  bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (static_cast<int>(terms.size()) != c.numInputs())
    return c.unsupported("equation '" + eq + "' has " + Twine(terms.size()) +
                         " input terms for " + Twine(c.numInputs()) +
                         " inputs");
  // Its inputs are variadic, so ONNX's checker lets one be "" (absent);
  // every term needs a tensor (a fuzzed model crashed here).
  for (int i = 0; i < c.numInputs(); ++i)
    if (!c.hasInput(i))
      return c.unsupported("input " + Twine(i) + " is empty; every term of the "
                           "equation needs a tensor");

  // Labels per operand, the ellipsis expanded (aligned from the right).
  SmallVector<SmallVector<Label>> parsed;
  int64_t ellipsisRank = 0;
  for (auto [i, term] : llvm::enumerate(terms)) {
    FailureOr<SmallVector<Label>> t = parseTerm(c, term);
    if (failed(t))
      return failure();
    int64_t rank = c.inputType(i).getRank();
    int64_t letters = static_cast<int64_t>(t->size()) -
                      (llvm::is_contained(*t, -1) ? 1 : 0);
    if (letters > rank || (!llvm::is_contained(*t, -1) && letters != rank))
      return c.unsupported("equation term '" + term + "' has " +
                           Twine(letters) + " labels for input " + Twine(i) +
                           " of rank " + Twine(rank));
    if (llvm::is_contained(*t, -1))
      ellipsisRank = std::max(ellipsisRank, rank - letters);
    parsed.push_back(std::move(*t));
  }
  SmallVector<Labeled> operands;
  for (auto [i, term] : llvm::enumerate(parsed)) {
    int64_t rank = c.inputType(i).getRank();
    Labeled x{c.input(i), {}};
    for (Label l : term) {
      if (l != -1) {
        x.labels.push_back(l);
        continue;
      }
      int64_t dims = rank - (static_cast<int64_t>(term.size()) - 1);
      for (int64_t d = ellipsisRank - dims; d < ellipsisRank; ++d)
        x.labels.push_back(kEllipsisBase + static_cast<Label>(d));
    }
    FailureOr<Labeled> single = takeDiagonals(c, std::move(x), terms[i]);
    if (failed(single))
      return failure();
    operands.push_back(std::move(*single));
  }

  // Every label's size: letters must agree, ellipsis dims broadcast.
  llvm::DenseMap<Label, int64_t> sizes;
  for (const Labeled &x : operands)
    for (Label l : x.labels) {
      int64_t s = x.size(l);
      auto [it, inserted] = sizes.try_emplace(l, s);
      if (inserted || it->second == s)
        continue;
      if (l >= kEllipsisBase && (s == 1 || it->second == 1)) {
        it->second = std::max(it->second, s);
        continue;
      }
      return c.unsupported("label '" + labelName(l) + "' has sizes " +
                           Twine(it->second) + " and " + Twine(s));
    }

  // The output's labels: given, or numpy's implicit mode (the ellipsis, then
  // the letters that appear once, in alphabetical order).
  SmallVector<Label> output;
  if (explicitOutput) {
    FailureOr<SmallVector<Label>> t = parseTerm(c, rhs);
    if (failed(t))
      return failure();
    for (Label l : *t) {
      if (l == -1) {
        for (int64_t d = 0; d < ellipsisRank; ++d)
          output.push_back(kEllipsisBase + static_cast<Label>(d));
        continue;
      }
      if (!sizes.count(l) || llvm::is_contained(output, l))
        return c.unsupported("output label '" + labelName(l) + "' is " +
                             (sizes.count(l) ? "repeated" : "in no input"));
      output.push_back(l);
    }
  } else {
    for (int64_t d = 0; d < ellipsisRank; ++d)
      output.push_back(kEllipsisBase + static_cast<Label>(d));
    std::map<Label, int> counts; // in the terms as written: "ii" is a trace
    for (const SmallVector<Label> &term : parsed)
      for (Label l : term)
        if (l != -1)
          ++counts[l];
    for (auto [l, n] : counts)
      if (n == 1)
        output.push_back(l);
  }

  // Needed after operand i: the output's labels and those of later operands.
  auto neededAfter = [&](size_t i) {
    return [&, i](Label l) {
      if (llvm::is_contained(output, l))
        return true;
      for (size_t j = i + 1; j < operands.size(); ++j)
        if (llvm::is_contained(operands[j].labels, l))
          return true;
      return false;
    };
  };
  EinsumBuilder b(c);
  auto neededWith = [&](size_t i, const Labeled &other) {
    return [&, i](Label l) {
      return llvm::is_contained(other.labels, l) || neededAfter(i)(l);
    };
  };
  // Fold left to right, summing each operand's private labels first.
  FailureOr<Labeled> acc = b.sumOut(operands[0], neededAfter(0));
  if (failed(acc))
    return failure();
  for (size_t i = 1; i < operands.size(); ++i) {
    FailureOr<Labeled> next = b.sumOut(operands[i], neededWith(i, *acc));
    if (failed(next))
      return failure();
    acc = b.contract(*acc, *next, neededAfter(i));
    if (failed(acc))
      return failure();
  }
  FailureOr<Value> result = b.permute(*acc, output);
  if (failed(result))
    return failure();
  c.setOutput(0, *result);
  return success();
}

} // namespace oflow::import
