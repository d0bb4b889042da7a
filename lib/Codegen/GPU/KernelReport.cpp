//===- KernelReport.cpp - per-kernel cost of a CUDA program ---------------===//
//
// Each outlined kernel is analysed by concrete evaluation: its index
// arithmetic is interpreted for chosen threads and loop iterations (thread
// and block ids, scf.for induction variables), so a global access's lane
// addresses, hence its sectors per warp access, come out of the very code
// that runs, whatever the delinearization (div/rem) looks like. Values loaded
// from memory (gathers) evaluate to a hash of the address they were loaded
// from: lanes reading the same token id agree, lanes reading different ones
// scatter.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/KernelReport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

using namespace mlir;

namespace oflow {
namespace {

constexpr int64_t kWarp = 32;
constexpr int64_t kSector = 32;

/// Which thread a warp lane is, and the values of the loops around an op.
struct Point {
  int64_t thread[3] = {0, 0, 0}, block[3] = {0, 0, 0};
};

/// Interprets a kernel's integer/index arithmetic for one thread and one
/// assignment of its loops' induction variables.
///
/// Every value is translated once into a node (its kind, its operands'
/// nodes, a constant) and evaluated from arrays: the analysis evaluates
/// each access for thousands of (lane, iteration) points, and looking ops
/// up, decoding attributes and hashing values at every point was most of
/// the analysis' time. A value's result is kept until the point changes or,
/// if it may read a loop variable, until one does (epochs, so forgetting
/// costs nothing): a lane's delinearisation is computed once for all of
/// its loops.
class Interpreter {
public:
  Interpreter(std::array<int64_t, 3> grid, std::array<int64_t, 3> block)
      : grid(grid), block(block) {}

  void setPoint(const Point &p) {
    point = p;
    ++epoch;
    ++pointEpoch;
  }
  void setIv(Value iv, int64_t v) {
    Node &n = nodes[nodeOf(iv)];
    n.ivValue = v;
    n.ivEpoch = ivEpoch;
    ++epoch;
  }
  void clearIvs() {
    ++ivEpoch;
    ++epoch;
  }
  /// A kernel parameter's value, for every point (a view's offset its
  /// launch passes). Bind before evaluating anything.
  void bind(Value arg, int64_t v) {
    assert(nodes.empty() && "bind before the first evaluation");
    bound[arg] = v;
  }

  std::optional<int64_t> eval(Value v) { return evalNode(nodeOf(v)); }

  /// The byte address of `indices` in `memref`, relative to its root buffer
  /// (a kernel argument or a global), or nullopt if not computable.
  std::optional<int64_t> address(Value memref, ArrayRef<int64_t> indices, Value &root) {
    auto type = dyn_cast<MemRefType>(memref.getType());
    if (!type)
      return std::nullopt;
    Operation *def = memref.getDefiningOp();
    if (auto sub = dyn_cast_or_null<memref::SubViewOp>(def)) {
      // Map into the source's indices (offsets + index * stride), which
      // also covers dynamic offsets the result type cannot state.
      SmallVector<int64_t> src;
      llvm::SmallBitVector dropped = sub.getDroppedDims();
      unsigned next = 0;
      for (unsigned d = 0; d < sub.getSourceType().getRank(); ++d) {
        std::optional<int64_t> off = evalFold(sub.getMixedOffsets()[d]);
        std::optional<int64_t> stride = evalFold(sub.getMixedStrides()[d]);
        if (!off || !stride)
          return std::nullopt;
        int64_t i = dropped.test(d) ? 0 : indices[next++];
        src.push_back(*off + i * *stride);
      }
      return address(sub.getSource(), src, root);
    }
    const std::optional<Layout> &layout = layoutOf(type);
    if (!layout)
      return std::nullopt;
    int64_t element = layout->offset;
    for (auto [i, s] : llvm::zip(indices, layout->strides))
      element += i * s;
    std::optional<int64_t> base = baseBytes(memref, root);
    if (!base)
      return std::nullopt;
    return *base + element * elementBytes(type.getElementType());
  }

  static int64_t elementBytes(Type t) {
    if (t.isIndex())
      return 8;
    if (auto v = dyn_cast<VectorType>(t))
      return elementBytes(v.getElementType()) * v.getNumElements();
    return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
  }

private:
  struct Layout {
    SmallVector<int64_t> strides;
    int64_t offset = 0;
  };
  enum class Kind : uint8_t {
    Unknown, Constant, ThreadId, BlockId, Load, Forward,
    Select, Add, Sub, Mul, Div, Rem, FloorDiv, CeilDiv, Min, Max, And, Or,
    Xor, Shl, Shr, Cmp,
  };
  /// One value, translated. `a`, `b`, `c` are operand nodes; `constant`
  /// also holds a dimension or a comparison predicate.
  struct Node {
    Kind kind = Kind::Unknown;
    unsigned a = 0, b = 0, c = 0;
    int64_t constant = 0;
    Operation *op = nullptr; ///< the load, for its address
    /// Whether the value cannot depend on a loop variable.
    bool ivFree = false;
    // Memo: the result (or its absence) computed in `epoch` (`pointEpoch`
    // when ivFree).
    uint64_t epoch = 0;
    std::optional<int64_t> value;
    // Induction variables: the value set in `ivEpoch`.
    uint64_t ivEpoch = 0;
    int64_t ivValue = 0;
  };

  /// Static strides and offset of `type` (cached: every lane asks).
  const std::optional<Layout> &layoutOf(MemRefType type) {
    auto [it, inserted] = layouts.try_emplace(type);
    if (inserted) {
      Layout l;
      if (succeeded(type.getStridesAndOffset(l.strides, l.offset)) &&
          !ShapedType::isDynamic(l.offset) &&
          !llvm::any_of(l.strides, ShapedType::isDynamic))
        it->second = std::move(l);
    }
    return it->second;
  }

  std::optional<int64_t> evalFold(OpFoldResult r) {
    if (auto a = dyn_cast<Attribute>(r))
      if (auto i = dyn_cast<IntegerAttr>(a))
        return i.getInt();
    if (auto v = dyn_cast<Value>(r))
      return eval(v);
    return std::nullopt;
  }

  /// Bytes from the root buffer to the aligned base of `memref` (views
  /// shift it; subview, reshapes and casts share it: their layout offset
  /// carries the position).
  std::optional<int64_t> baseBytes(Value memref, Value &root) {
    Operation *def = memref.getDefiningOp();
    if (!def || isa<memref::GetGlobalOp, memref::AllocOp, memref::AllocaOp>(def)) {
      root = memref;
      return 0;
    }
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> shift = eval(view.getByteShift());
      std::optional<int64_t> base = baseBytes(view.getSource(), root);
      if (!shift || !base)
        return std::nullopt;
      return *base + *shift;
    }
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp,
            memref::ReinterpretCastOp, memref::SubViewOp>(def))
      return baseBytes(def->getOperand(0), root);
    return std::nullopt;
  }

  /// The node of `v`, translating it (and what it reads) on first use.
  unsigned nodeOf(Value v) {
    if (auto it = ids.find(v); it != ids.end())
      return it->second;
    Node n = translate(v);
    n.ivFree = ivFree(n);
    unsigned id = nodes.size();
    nodes.push_back(n);
    ids[v] = id;
    return id;
  }

  Node translate(Value v) {
    Node n;
    if (auto it = bound.find(v); it != bound.end()) {
      n.kind = Kind::Constant;
      n.constant = it->second;
      return n;
    }
    Operation *def = v.getDefiningOp();
    if (!def)
      return n; // a loop's variable (setIv) or an unbound argument
    n.op = def;
    if (auto c = dyn_cast<arith::ConstantOp>(def)) {
      if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
        n.kind = Kind::Constant;
        n.constant = i.getType().isInteger(1) ? int64_t(i.getValue().getBoolValue())
                                              : i.getValue().getSExtValue();
      }
      return n;
    }
    if (auto t = dyn_cast<gpu::ThreadIdOp>(def)) {
      n.kind = Kind::ThreadId;
      n.constant = static_cast<int>(t.getDimension());
      return n;
    }
    if (auto b = dyn_cast<gpu::BlockIdOp>(def)) {
      n.kind = Kind::BlockId;
      n.constant = static_cast<int>(b.getDimension());
      return n;
    }
    if (auto b = dyn_cast<gpu::BlockDimOp>(def)) {
      n.kind = Kind::Constant;
      n.constant = block[static_cast<int>(b.getDimension())];
      return n;
    }
    if (auto g = dyn_cast<gpu::GridDimOp>(def)) {
      n.kind = Kind::Constant;
      n.constant = grid[static_cast<int>(g.getDimension())];
      return n;
    }
    if (isa<memref::LoadOp>(def)) {
      n.kind = Kind::Load;
      n.op = def;
      return n;
    }
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp, arith::TruncIOp>(def)) {
      n.kind = Kind::Forward;
      n.a = nodeOf(def->getOperand(0));
      return n;
    }
    if (auto sel = dyn_cast<arith::SelectOp>(def)) {
      n.kind = Kind::Select;
      n.a = nodeOf(sel.getCondition());
      n.b = nodeOf(sel.getTrueValue());
      n.c = nodeOf(sel.getFalseValue());
      return n;
    }
    if (def->getNumOperands() != 2 || def->getNumResults() != 1)
      return n;
    Kind kind = TypeSwitch<Operation *, Kind>(def)
                    .Case([](arith::AddIOp) { return Kind::Add; })
                    .Case([](arith::SubIOp) { return Kind::Sub; })
                    .Case([](arith::MulIOp) { return Kind::Mul; })
                    .Case<arith::DivUIOp, arith::DivSIOp>([](auto) { return Kind::Div; })
                    .Case<arith::RemUIOp, arith::RemSIOp>([](auto) { return Kind::Rem; })
                    .Case([](arith::FloorDivSIOp) { return Kind::FloorDiv; })
                    .Case([](arith::CeilDivSIOp) { return Kind::CeilDiv; })
                    .Case<arith::MinSIOp, arith::MinUIOp>([](auto) { return Kind::Min; })
                    .Case<arith::MaxSIOp, arith::MaxUIOp>([](auto) { return Kind::Max; })
                    .Case([](arith::AndIOp) { return Kind::And; })
                    .Case([](arith::OrIOp) { return Kind::Or; })
                    .Case([](arith::XOrIOp) { return Kind::Xor; })
                    .Case([](arith::ShLIOp) { return Kind::Shl; })
                    .Case<arith::ShRUIOp, arith::ShRSIOp>([](auto) { return Kind::Shr; })
                    .Case([&](arith::CmpIOp cmp) {
                      n.constant = static_cast<int64_t>(cmp.getPredicate());
                      return Kind::Cmp;
                    })
                    .Default([](Operation *) { return Kind::Unknown; });
    if (kind == Kind::Unknown)
      return n;
    n.kind = kind;
    n.a = nodeOf(def->getOperand(0));
    n.b = nodeOf(def->getOperand(1));
    return n;
  }

  /// Whether a translated value reads no loop variable: its operands do
  /// not (a load's address might, through views and subviews).
  bool ivFree(const Node &n) const {
    switch (n.kind) {
    case Kind::Unknown:
      return n.op != nullptr;
    case Kind::Constant:
    case Kind::ThreadId:
    case Kind::BlockId:
      return true;
    case Kind::Load:
      return false;
    case Kind::Forward:
      return nodes[n.a].ivFree;
    case Kind::Select:
      return nodes[n.a].ivFree && nodes[n.b].ivFree && nodes[n.c].ivFree;
    default:
      return nodes[n.a].ivFree && nodes[n.b].ivFree;
    }
  }

  std::optional<int64_t> evalNode(unsigned id) {
    {
      Node &n = nodes[id];
      if (n.ivEpoch == ivEpoch)
        return n.ivValue;
      if (n.epoch == (n.ivFree ? pointEpoch : epoch))
        return n.value;
    }
    std::optional<int64_t> r = compute(id);
    // `nodes` may have grown (a load's address translates new values).
    Node &n = nodes[id];
    n.epoch = n.ivFree ? pointEpoch : epoch;
    n.value = r;
    return r;
  }

  std::optional<int64_t> compute(unsigned id) {
    const Node n = nodes[id];
    switch (n.kind) {
    case Kind::Unknown:
      return std::nullopt;
    case Kind::Constant:
      return n.constant;
    case Kind::ThreadId:
      return point.thread[n.constant];
    case Kind::BlockId:
      return point.block[n.constant];
    case Kind::Load: {
      // Data: a hash of where it was read, in [0, 1024).
      auto load = cast<memref::LoadOp>(n.op);
      SmallVector<int64_t> idx;
      for (Value i : load.getIndices()) {
        std::optional<int64_t> x = eval(i);
        if (!x)
          return std::nullopt;
        idx.push_back(*x);
      }
      Value root;
      std::optional<int64_t> a = address(load.getMemRef(), idx, root);
      if (!a)
        return std::nullopt;
      uint64_t h = static_cast<uint64_t>(*a) * 0x9E3779B97F4A7C15ull;
      return static_cast<int64_t>((h >> 40) % 1024);
    }
    case Kind::Forward:
      return evalNode(n.a);
    case Kind::Select: {
      std::optional<int64_t> c = evalNode(n.a);
      if (!c)
        return std::nullopt;
      return evalNode(*c ? n.b : n.c);
    }
    default:
      break;
    }
    std::optional<int64_t> a = evalNode(n.a);
    std::optional<int64_t> b = evalNode(n.b);
    if (!a || !b)
      return std::nullopt;
    int64_t x = *a, y = *b;
    auto floorDiv = [](int64_t p, int64_t q) {
      int64_t d = p / q;
      return (p % q != 0 && ((p < 0) != (q < 0))) ? d - 1 : d;
    };
    switch (n.kind) {
    case Kind::Add: return x + y;
    case Kind::Sub: return x - y;
    case Kind::Mul: return x * y;
    case Kind::Div:
      if (y == 0)
        return std::nullopt;
      return x / y;
    case Kind::Rem:
      if (y == 0)
        return std::nullopt;
      return x % y;
    case Kind::FloorDiv:
      if (y == 0)
        return std::nullopt;
      return floorDiv(x, y);
    case Kind::CeilDiv:
      if (y == 0)
        return std::nullopt;
      return -floorDiv(-x, y);
    case Kind::Min: return std::min(x, y);
    case Kind::Max: return std::max(x, y);
    case Kind::And: return x & y;
    case Kind::Or: return x | y;
    case Kind::Xor: return x ^ y;
    case Kind::Shl: return x << y;
    case Kind::Shr: return x >> y;
    case Kind::Cmp: {
      using P = arith::CmpIPredicate;
      switch (static_cast<P>(n.constant)) {
      case P::eq: return x == y;
      case P::ne: return x != y;
      case P::slt: case P::ult: return x < y;
      case P::sle: case P::ule: return x <= y;
      case P::sgt: case P::ugt: return x > y;
      case P::sge: case P::uge: return x >= y;
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
    }
  }

  std::array<int64_t, 3> grid, block;
  Point point;
  // Epochs start at 1: a fresh node has neither a value nor a variable set.
  uint64_t epoch = 1, pointEpoch = 1, ivEpoch = 1;
  std::vector<Node> nodes;
  llvm::DenseMap<Value, unsigned> ids;
  llvm::DenseMap<Value, int64_t> bound;
  llvm::DenseMap<Type, std::optional<Layout>> layouts;
};

/// Where an op sits: its enclosing loops (outermost first) and the scf.if
/// branches it needs.
struct Context {
  SmallVector<scf::ForOp> loops;
  SmallVector<std::pair<Value, bool>> conditions;
};

struct Access {
  Operation *op;
  Value memref;
  SmallVector<Value> indices;
  bool write;
  int64_t width; ///< bytes one lane moves
  Context where;
};

struct Arith {
  Operation *op;
  double flops;
  Context where;
};

double flopsOf(Operation *op) {
  if (!llvm::any_of(op->getResultTypes(), [](Type t) {
        return isa<FloatType>(getElementTypeOrSelf(t));
      }))
    return 0;
  double lanes = 1;
  if (auto v = dyn_cast<VectorType>(op->getResult(0).getType()))
    lanes = v.getNumElements();
  if (isa<math::FmaOp>(op))
    return 2 * lanes;
  if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
          arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
          arith::MinNumFOp, arith::RemFOp, arith::NegFOp>(op) ||
      op->getDialect()->getNamespace() == "math")
    return lanes;
  return 0;
}

void collect(Region &region, Context &ctx, SmallVectorImpl<Access> &accesses,
             SmallVectorImpl<Arith> &arith) {
  for (Block &block : region)
    for (Operation &op : block) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        ctx.loops.push_back(loop);
        collect(loop.getRegion(), ctx, accesses, arith);
        ctx.loops.pop_back();
        continue;
      }
      if (auto branch = dyn_cast<scf::IfOp>(op)) {
        ctx.conditions.push_back({branch.getCondition(), true});
        collect(branch.getThenRegion(), ctx, accesses, arith);
        ctx.conditions.back().second = false;
        collect(branch.getElseRegion(), ctx, accesses, arith);
        ctx.conditions.pop_back();
        continue;
      }
      auto add = [&](Value memref, ValueRange indices, bool write, int64_t width) {
        // Shared (and private) memory is on the chip: no L2 or HBM traffic.
        auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
            cast<MemRefType>(memref.getType()).getMemorySpace());
        if (space && space.getValue() != gpu::AddressSpace::Global)
          return;
        accesses.push_back({&op, memref, SmallVector<Value>(indices), write, width, ctx});
      };
      if (auto load = dyn_cast<memref::LoadOp>(op))
        add(load.getMemRef(), load.getIndices(), false,
            Interpreter::elementBytes(load.getType()));
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        add(store.getMemRef(), store.getIndices(), true,
            Interpreter::elementBytes(store.getValueToStore().getType()));
      else if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
        int64_t w = Interpreter::elementBytes(atomic.getType());
        add(atomic.getMemref(), atomic.getIndices(), false, w);
        add(atomic.getMemref(), atomic.getIndices(), true, w);
      } else if (auto vload = dyn_cast<vector::LoadOp>(op))
        add(vload.getBase(), vload.getIndices(), false,
            Interpreter::elementBytes(vload.getVectorType()));
      else if (auto vstore = dyn_cast<vector::StoreOp>(op))
        add(vstore.getBase(), vstore.getIndices(), true,
            Interpreter::elementBytes(vstore.getVectorType()));
      if (double f = flopsOf(&op))
        arith.push_back({&op, f, ctx});
      for (Region &r : op.getRegions())
        collect(r, ctx, accesses, arith);
    }
}

/// Loads an access's indices need (through integer arithmetic): 0 for
/// affine-in-the-thread addresses, 1 for a gather, more for chains.
int loadDepth(Value v, llvm::DenseMap<Value, int> &memo) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  memo[v] = 0;
  Operation *def = v.getDefiningOp();
  int depth = 0;
  if (def) {
    for (Value operand : def->getOperands())
      depth = std::max(depth, loadDepth(operand, memo));
    if (isa<memref::LoadOp>(def))
      depth += 1;
  }
  return memo[v] = depth;
}

/// The sampling of one kernel's threads: warps of consecutive linear thread
/// ids within a block, as the hardware forms them.
class Warps {
public:
  /// The warps of blocks [firstBlock, firstBlock + blockCount) (all of the
  /// grid when blockCount < 0).
  Warps(std::array<int64_t, 3> grid, std::array<int64_t, 3> block,
        int64_t firstBlock = 0, int64_t blockCount = -1)
      : grid(grid), block(block), firstBlock(firstBlock) {
    blockThreads = block[0] * block[1] * block[2];
    warpsPerBlock = (blockThreads + kWarp - 1) / kWarp;
    blocks = blockCount < 0 ? grid[0] * grid[1] * grid[2] : blockCount;
  }
  int64_t count() const { return blocks * warpsPerBlock; }
  int64_t lanes(int64_t warp) const {
    return std::min(kWarp, blockThreads - (warp % warpsPerBlock) * kWarp);
  }
  Point lane(int64_t warp, int64_t laneId) const {
    int64_t b = firstBlock + warp / warpsPerBlock;
    int64_t t = (warp % warpsPerBlock) * kWarp + laneId;
    Point p;
    p.thread[0] = t % block[0];
    p.thread[1] = (t / block[0]) % block[1];
    p.thread[2] = t / (block[0] * block[1]);
    p.block[0] = b % grid[0];
    p.block[1] = (b / grid[0]) % grid[1];
    p.block[2] = b / (grid[0] * grid[1]);
    return p;
  }
  /// Up to `n` warps spread evenly, the first and the last included.
  SmallVector<int64_t> sample(int64_t n) const {
    SmallVector<int64_t> out;
    int64_t total = count();
    if (total <= n) {
      for (int64_t w = 0; w < total; ++w)
        out.push_back(w);
      return out;
    }
    for (int64_t i = 0; i < n; ++i)
      out.push_back(i * (total - 1) / (n - 1));
    return out;
  }

private:
  std::array<int64_t, 3> grid, block;
  int64_t firstBlock, blockThreads, warpsPerBlock, blocks;
};

/// Trip count of `loop` where the interpreter stands (outer IVs set).
std::optional<int64_t> tripCount(Interpreter &in, scf::ForOp loop) {
  std::optional<int64_t> lb = in.eval(loop.getLowerBound());
  std::optional<int64_t> ub = in.eval(loop.getUpperBound());
  std::optional<int64_t> step = in.eval(loop.getStep());
  if (!lb || !ub || !step || *step <= 0)
    return std::nullopt;
  return *ub > *lb ? (*ub - *lb + *step - 1) / *step : 0;
}

/// Per access or arithmetic op: active warps, lanes, loop trips.
struct Activity {
  double activeWarps = 0, activeLanes = 0; ///< lanes per active warp access
  double trips = 1;
  SmallVector<int64_t> activeSample;       ///< sampled warps with a lane on
};

/// Sets every loop of `where` to its first (or last) iteration; the trip
/// product through `trips`.
bool placeLoops(Interpreter &in, const Context &where, bool last, double *trips) {
  if (trips)
    *trips = 1;
  for (scf::ForOp loop : where.loops) {
    std::optional<int64_t> lb = in.eval(loop.getLowerBound());
    std::optional<int64_t> step = in.eval(loop.getStep());
    std::optional<int64_t> n = tripCount(in, loop);
    if (!lb || !step || !n)
      return false;
    if (trips)
      *trips *= static_cast<double>(*n);
    in.setIv(loop.getInductionVar(), last && *n > 0 ? *lb + (*n - 1) * *step : *lb);
  }
  return true;
}

/// Whether every scf.if around an op takes the op's branch at the current
/// point (a condition that cannot be evaluated counts as taken).
bool enabled(Interpreter &in, const Context &where) {
  for (auto [cond, branch] : where.conditions) {
    std::optional<int64_t> c = in.eval(cond);
    if (c && (*c != 0) != branch)
      return false;
  }
  return true;
}

Activity activity(Interpreter &in, const Warps &warps, const Context &where) {
  Activity a;
  SmallVector<int64_t> sample = warps.sample(64);
  int64_t on = 0;
  double lanesOn = 0;
  for (int64_t w : sample) {
    int64_t n = warps.lanes(w), laneCount = 0;
    for (int64_t l = 0; l < n; ++l) {
      in.clearIvs();
      in.setPoint(warps.lane(w, l));
      double trips = 1;
      if (!placeLoops(in, where, false, &trips))
        trips = 1;
      if (enabled(in, where)) {
        ++laneCount;
        a.trips = trips;
      }
    }
    if (laneCount) {
      ++on;
      lanesOn += laneCount;
      a.activeSample.push_back(w);
    }
  }
  if (on) {
    a.activeWarps = static_cast<double>(warps.count()) * on / sample.size();
    a.activeLanes = lanesOn / on;
  }
  return a;
}

struct AccessCost {
  Value root;
  bool write = false;
  double l2Sectors = 0, footprintSectors = 0;
  int64_t low = 0, high = 0; ///< byte span
  bool known = false;
};

/// The costs of `group`, accesses of one block (hence one set of loops and
/// conditions, and one activity). Each sampled lane is placed once for all
/// of them: their addresses share the lane's delinearisation.
std::vector<AccessCost> costAccesses(Interpreter &in, const Warps &warps,
                                     ArrayRef<const Access *> group, const Activity &act) {
  std::vector<AccessCost> costs(group.size());
  for (auto [c, acc] : llvm::zip(costs, group))
    c.write = acc->write;
  if (act.activeSample.empty() || group.empty())
    return costs;
  const Context &where = group.front()->where;
  // Sectors per warp access: up to 16 of the sampled active warps (the
  // first and the last, often a partial one, included), at the first and
  // (for the innermost loop) the second iteration.
  SmallVector<int64_t> picks;
  size_t n = act.activeSample.size(), want = std::min<size_t>(n, 16);
  for (size_t i = 0; i < want; ++i)
    picks.push_back(act.activeSample[want == 1 ? 0 : i * (n - 1) / (want - 1)]);
  struct Sums {
    double sectorSum = 0;
    int samples = 0;
    bool unknown = false;
    int64_t active = 0;
    SmallVector<int64_t, 64> sectors; ///< of the current warp access
  };
  std::vector<Sums> sums(group.size());
  // The address at the interpreter's current point (lane and loop IVs set).
  SmallVector<int64_t> idx;
  auto laneAddress = [&](const Access &acc, AccessCost &c) -> std::optional<int64_t> {
    idx.clear();
    for (Value i : acc.indices) {
      std::optional<int64_t> x = in.eval(i);
      if (!x)
        return std::nullopt;
      idx.push_back(*x);
    }
    Value root;
    std::optional<int64_t> a = in.address(acc.memref, idx, root);
    if (a)
      c.root = root;
    return a;
  };
  for (int second = 0; second < 2; ++second) {
    for (int64_t w : picks) {
      for (Sums &s : sums) {
        s.sectors.clear();
        s.active = 0;
      }
      for (int64_t l = 0; l < warps.lanes(w); ++l) {
        in.clearIvs();
        in.setPoint(warps.lane(w, l));
        if (!placeLoops(in, where, false, nullptr))
          continue;
        if (second && !where.loops.empty()) {
          scf::ForOp inner = where.loops.back();
          std::optional<int64_t> n = tripCount(in, inner);
          if (!n || *n < 2)
            continue;
          in.setIv(inner.getInductionVar(), *in.eval(inner.getLowerBound()) +
                                                *in.eval(inner.getStep()));
        }
        if (!enabled(in, where))
          continue;
        for (auto [s, acc, c] : llvm::zip(sums, group, costs)) {
          ++s.active;
          std::optional<int64_t> a = laneAddress(*acc, c);
          if (!a) {
            s.unknown = true;
            s.sectors.push_back(-1 - l); // a lane of its own
            continue;
          }
          for (int64_t sec = *a / kSector; sec <= (*a + acc->width - 1) / kSector; ++sec)
            s.sectors.push_back(sec);
        }
      }
      for (Sums &s : sums) {
        if (!s.active)
          continue;
        llvm::sort(s.sectors);
        s.sectorSum += std::unique(s.sectors.begin(), s.sectors.end()) - s.sectors.begin();
        ++s.samples;
      }
    }
    if (where.loops.empty())
      break;
  }
  for (auto [s, acc, c] : llvm::zip(sums, group, costs)) {
    double perWarp = s.samples ? s.sectorSum / s.samples : 0;
    c.l2Sectors = act.activeWarps * act.trips * perWarp;
    // The span: first and last active warps, every loop first and last.
    int64_t low = INT64_MAX, high = INT64_MIN;
    for (int64_t w : {act.activeSample.front(), act.activeSample.back()})
      for (bool last : {false, true})
        for (int64_t l : {int64_t(0), warps.lanes(w) - 1}) {
          in.clearIvs();
          in.setPoint(warps.lane(w, l));
          if (!placeLoops(in, where, last, nullptr))
            continue;
          if (std::optional<int64_t> a = laneAddress(*acc, c)) {
            low = std::min(low, *a);
            high = std::max(high, *a + acc->width);
          }
        }
    c.known = !s.unknown && low <= high;
    double spanSectors = c.known ? static_cast<double>((high - 1) / kSector - low / kSector + 1)
                                 : c.l2Sectors;
    c.low = c.known ? low : 0;
    c.high = c.known ? high : 0;
    c.footprintSectors = std::min(c.l2Sectors, spanSectors);
  }
  return costs;
}

/// Distinct sectors: accesses of one root and direction whose spans
/// overlap share their union span.
double distinctSectors(std::vector<AccessCost> costs) {
  std::sort(costs.begin(), costs.end(), [](const AccessCost &a, const AccessCost &b) {
    if (a.root != b.root)
      return a.root.getAsOpaquePointer() < b.root.getAsOpaquePointer();
    if (a.write != b.write)
      return a.write < b.write;
    return a.low < b.low;
  });
  double total = 0;
  for (size_t i = 0; i < costs.size();) {
    if (!costs[i].known) {
      total += costs[i++].footprintSectors;
      continue;
    }
    int64_t low = costs[i].low, high = costs[i].high;
    double sum = costs[i].footprintSectors;
    size_t j = i + 1;
    while (j < costs.size() && costs[j].known && costs[j].root == costs[i].root &&
           costs[j].write == costs[i].write && costs[j].low < high) {
      high = std::max(high, costs[j].high);
      sum += costs[j].footprintSectors;
      ++j;
    }
    total += std::min(sum, static_cast<double>((high - 1) / kSector - low / kSector + 1));
    i = j;
  }
  return total;
}


void predict(KernelCost &k, const DeviceProfile &d, double launch) {
  double threads = std::max<double>(1, k.threads());
  double resident = static_cast<double>(d.residentThreads());
  double inFlight = std::min(threads, resident);
  double waves = std::ceil(threads / resident);
  double chain = std::max(1.0, k.loadChain);
  // Rounds of dependent loads, each a memory latency: the chain times the
  // waves of resident threads. A fused launch's former kernels fill the
  // waves together, each its own blocks: a long chain costs rounds only for
  // the waves' share its blocks take, not for the whole grid.
  double rounds = k.loadChain * waves;
  if (!k.segments.empty()) {
    double weighted = 0, longest = 0;
    for (auto [segmentThreads, segmentChain] : k.segments) {
      weighted += segmentChain * segmentThreads;
      longest = std::max(longest, segmentChain);
    }
    chain = std::max(1.0, weighted / threads);
    rounds = std::max(longest, weighted / resident);
  }
  double perThreadRound = k.hbmBytes / (threads * chain);
  double needed = d.hbmBytesPerSecond * d.memoryLatencySeconds /
                  std::max(perThreadRound, 1e-9);
  double efficiency = std::min(1.0, inFlight / needed);
  double memory = k.hbmBytes / (d.hbmBytesPerSecond * efficiency);
  double compute = k.flops / d.fp32FlopsPerSecond;
  double latency = rounds * d.memoryLatencySeconds;
  double body = std::max({memory, compute, latency});
  k.bound = body < launch ? "launch"
            : body == latency ? "latency"
            : body == memory  ? "memory"
                              : "compute";
  k.seconds = body + launch;
}

std::array<int64_t, 3> attrDims(gpu::GPUFuncOp fn, StringRef name) {
  std::array<int64_t, 3> dims = {1, 1, 1};
  if (auto a = fn->getAttrOfType<DenseI32ArrayAttr>(name))
    for (auto [i, v] : llvm::enumerate(a.asArrayRef()))
      if (i < 3)
        dims[i] = v;
  return dims;
}

} // namespace

std::string kernelOrigins(Operation *root) {
  llvm::SetVector<StringRef> names;
  std::function<void(Location)> visit = [&](Location loc) {
    if (auto n = dyn_cast<NameLoc>(loc)) {
      names.insert(n.getName().getValue());
      return;
    }
    if (auto f = dyn_cast<FusedLoc>(loc))
      for (Location l : f.getLocations())
        visit(l);
    if (auto c = dyn_cast<CallSiteLoc>(loc))
      visit(c.getCallee());
  };
  root->walk([&](Operation *op) { visit(op->getLoc()); });
  std::string out;
  unsigned shown = 0;
  for (StringRef n : names) {
    if (shown == 3) {
      out += llvm::formatv(" +{0}", names.size() - 3).str();
      break;
    }
    out += (shown++ ? "," : "") + n.str();
  }
  return out;
}

KernelCost analyzeKernel(gpu::GPUFuncOp kernel, const DeviceProfile &device,
                         std::array<int64_t, 3> grid, std::array<int64_t, 3> block,
                         ArrayRef<std::optional<int64_t>> arguments) {
  KernelCost k;
  k.name = kernel.getName().str();
  k.grid = grid[0] ? grid : attrDims(kernel, "known_grid_size");
  k.block = block[0] ? block : attrDims(kernel, "known_block_size");
  if (auto s = kernel->getAttrOfType<StringAttr>("oflow.strategy"))
    k.strategy = s.getValue().str();
  else
    k.strategy = k.threads() == 1 ? "single-thread (fallback)" : "pointwise (fallback)";
  k.origins = kernelOrigins(kernel);

  Context ctx;
  SmallVector<Access> accesses;
  SmallVector<Arith> arith;
  collect(kernel.getBody(), ctx, accesses, arith);
  Interpreter in(k.grid, k.block);
  for (auto [arg, value] : llvm::zip(kernel.getArguments(), arguments))
    if (value)
      in.bind(arg, *value);
  std::vector<AccessCost> costs;
  llvm::DenseMap<Value, int> depthMemo;
  // The warps of blocks [first, first + count), sampled on their own; with
  // `only`, just the accesses and arithmetic nested in that op.
  auto analyzeBlocks = [&](int64_t first, int64_t count, Operation *only) {
    Warps warps(k.grid, k.block, first, count);
    // Ops of one block share their loops and conditions, hence activity.
    llvm::DenseMap<Block *, Activity> activities;
    auto activityOf = [&](Operation *op, const Context &where) -> const Activity & {
      auto [it, inserted] = activities.try_emplace(op->getBlock());
      if (inserted)
        it->second = activity(in, warps, where);
      return it->second;
    };
    // The accesses analysed, by block (in order of first appearance).
    SmallVector<const Access *> selected;
    llvm::MapVector<Block *, SmallVector<unsigned>> byBlock;
    for (const Access &acc : accesses) {
      if (only && !only->isProperAncestor(acc.op))
        continue;
      byBlock[acc.op->getBlock()].push_back(selected.size());
      selected.push_back(&acc);
    }
    std::vector<AccessCost> selectedCosts(selected.size());
    for (auto &[blockOf, members] : byBlock) {
      SmallVector<const Access *> group;
      for (unsigned i : members)
        group.push_back(selected[i]);
      const Activity &act = activityOf(group.front()->op, group.front()->where);
      std::vector<AccessCost> groupCosts = costAccesses(in, warps, group, act);
      for (auto [i, c] : llvm::zip(members, groupCosts))
        selectedCosts[i] = c;
    }
    for (auto [accPtr, c] : llvm::zip(selected, selectedCosts)) {
      const Access &acc = *accPtr;
      const Activity &act = activityOf(acc.op, acc.where);
      k.l2Bytes += c.l2Sectors * kSector;
      costs.push_back(c);
      if (!acc.write && !act.activeSample.empty()) {
        int depth = 0;
        for (Value i : acc.indices)
          depth = std::max(depth, loadDepth(i, depthMemo));
        k.loadChain = std::max(k.loadChain, act.trips + depth);
      }
    }
    for (const Arith &a : arith) {
      if (only && !only->isProperAncestor(a.op))
        continue;
      const Activity &act = activityOf(a.op, a.where);
      k.flops += a.flops * act.activeWarps * act.activeLanes * act.trips;
    }
  };
  // A fused launch (oflow-fuse-launches): each former kernel's blocks on
  // their own, or sampling would miss the small ones.
  auto segments = kernel->getAttrOfType<DenseI64ArrayAttr>("oflow.segments");
  if (segments && segments.size() >= 2 && segments.asArrayRef().back() <= k.grid[0] &&
      k.grid[1] == 1 && k.grid[2] == 1) {
    ArrayRef<int64_t> starts = segments.asArrayRef();
    // Member i's body is the i-th scf.if at the top of the kernel.
    SmallVector<Operation *> bodies;
    for (Operation &op : kernel.getBody().front())
      if (isa<scf::IfOp>(op))
        bodies.push_back(&op);
    bool matched = bodies.size() + 1 == starts.size();
    double blockThreads = static_cast<double>(k.block[0] * k.block[1] * k.block[2]);
    double longest = 0;
    for (size_t i = 0; i + 1 < starts.size(); ++i) {
      k.loadChain = 0;
      analyzeBlocks(starts[i], starts[i + 1] - starts[i], matched ? bodies[i] : nullptr);
      k.segments.push_back({blockThreads * (starts[i + 1] - starts[i]), k.loadChain});
      longest = std::max(longest, k.loadChain);
    }
    k.loadChain = longest;
  } else {
    analyzeBlocks(0, -1, nullptr);
  }
  k.hbmBytes = distinctSectors(costs) * kSector;
  predict(k, device, device.launchSeconds);
  return k;
}

namespace {

std::optional<int64_t> constantInt(Value v) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  return std::nullopt;
}

std::optional<double> constantFloat(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto f = dyn_cast<FloatAttr>(c.getValue()))
      return f.getValueAsDouble();
  return std::nullopt;
}

/// The smallest m n k whose odd extents the CUDA runtime pads (the default
/// GemmPadSettings::minMacs in runtime/lib/cuda/CudaContext.h).
constexpr int64_t kGemmPadMinMacs = int64_t(1) << 30;

/// A GEMM call's cost: operands read once, the result written (and read
/// when beta != 0), at the profile's rate for its precision or, where the
/// profile has measured this shape, at its measured time.
std::optional<KernelCost> gemmCost(func::CallOp call, const DeviceProfile &d) {
  StringRef callee = call.getCallee();
  bool lowp = callee.starts_with("oflow_rt_gemm_lowp");
  bool batched = callee.ends_with("_batched");
  if (!lowp && !callee.starts_with("oflow_rt_sgemm"))
    return std::nullopt;
  unsigned first = (lowp ? 1 : 0) + (batched ? 1 : 0); // trans_a
  auto arg = [&](unsigned i) { return constantInt(call.getOperand(i)); };
  std::optional<int64_t> m = arg(first + 2), n = arg(first + 3), kk = arg(first + 4);
  int64_t batch = batched ? arg(lowp ? 1 : 0).value_or(1) : 1;
  unsigned betaIndex = first + (batched ? 12 : 10);
  double beta = constantFloat(call.getOperand(betaIndex)).value_or(1.0);
  std::string precision = "fp32";
  double ab = 4;
  if (lowp) {
    precision = arg(0).value_or(5) == 6 ? "fp16" : "bf16";
    ab = 2;
  }
  KernelCost k;
  k.kind = "gemm";
  k.name = callee.str();
  if (!m || !n || !kk) {
    k.strategy = "gemm (shape unknown)";
    predict(k, d, d.launchSeconds);
    return k;
  }
  double M = *m, N = *n, K = *kk;
  k.strategy = llvm::formatv("{0} {1}{2}x{3}x{4}{5}", precision,
                             batch > 1 ? std::to_string(batch) + "x " : "", *m, *n,
                             *kk, beta != 0 ? " +C" : "")
                   .str();
  k.flops = 2 * M * N * K * batch;
  k.hbmBytes = batch * ((M * K + K * N) * ab + M * N * 4 * (beta != 0 ? 2 : 1));
  k.l2Bytes = k.hbmBytes;
  // The runtime runs a large unbatched tensor-core GEMM with an extent that
  // is not a multiple of 8 (16 bytes of bf16/fp16) on copies padded to a
  // multiple of 64 (CudaBlas.cpp): each operand with such an extent is read
  // and written once more (C twice when beta != 0), and the product takes
  // the padded shape's measured time where the profile has one (else the
  // rate over the unpadded FLOPs, which are within a percent). (f32 GEMMs are priced without TF32, which the
  // runtime's --allow-tf32 decides: never padded.)
  auto padded = [&](int64_t e) { return e % 8 ? (e + 63) / 64 * 64 : e; };
  double copyBytes = 0;
  int64_t pm = *m, pn = *n, pk = *kk;
  if (lowp && batch == 1 && *m * *n * *kk >= kGemmPadMinMacs) {
    pm = padded(*m), pn = padded(*n), pk = padded(*kk);
    // A copied operand is one memcpy, plus a memset for its padded columns
    // and one for its padded rows (as stored: transposed or not).
    auto copyIn = [&](bool rowsPadded, bool colsPadded) {
      k.nodes += 1 + (rowsPadded ? 1 : 0) + (colsPadded ? 1 : 0);
    };
    int64_t ta = arg(first).value_or(0), tb = arg(first + 1).value_or(0);
    if (pm != *m || pk != *kk) {
      copyBytes += 2 * M * K * ab;
      copyIn(ta ? pk != *kk : pm != *m, ta ? pm != *m : pk != *kk);
    }
    if (pk != *kk || pn != *n) {
      copyBytes += 2 * K * N * ab;
      copyIn(tb ? pn != *n : pk != *kk, tb ? pk != *kk : pn != *n);
    }
    if (pm != *m || pn != *n) {
      copyBytes += (beta != 0 ? 4 : 2) * M * N * 4;
      if (beta != 0)
        copyIn(pm != *m, pn != *n);
      k.nodes += 1; // C copied out
    }
  }
  if (copyBytes > 0) {
    k.strategy += " +pad";
    k.hbmBytes += copyBytes;
    k.l2Bytes = k.hbmBytes;
  }
  double memory = k.hbmBytes / d.hbmBytesPerSecond;
  double compute = k.flops / d.gemmFlopsPerSecond(precision) +
                   copyBytes / d.hbmBytesPerSecond;
  k.bound = compute >= memory ? "compute" : "memory";
  // A calibration's time for this very shape wins over the rate: it knows
  // the tile shapes, waves and alignment. It was measured without reading
  // C, so a beta != 0 call adds that read; a padded GEMM is looked up at its
  // padded shape, which the calibration also measures.
  if (std::optional<double> measured = d.measuredGemmSeconds(precision, pm, pn, pk, batch)) {
    compute = *measured + copyBytes / d.hbmBytesPerSecond +
              (beta != 0 ? batch * M * N * 4 / d.hbmBytesPerSecond : 0);
    k.bound = compute >= memory ? "measured" : "memory";
  }
  k.seconds = std::max(memory, compute) + d.launchSeconds;
  if (std::max(memory, compute) < d.launchSeconds)
    k.bound = "launch";
  return k;
}

/// The share of the profile's tensor-core GEMM rate that the runtime's
/// fused attention kernels reach: their products are mma.sync tiles with
/// the online softmax between them. Measured on an H200 (2026-12-04, GPT-2
/// small's 96 x 1024 x 1024 x 64 causal bf16): forward 96 us, backward 308
/// us, 0.21 and 0.23 of the 650 TFLOP/s of the built-in h200 profile with
/// the FLOPs counted below.
constexpr double kAttentionGemmShare = 0.21;

/// A fused attention call (oflow_rt_attention_fwd / _bwd): q, k, v (and
/// for the backward o, dO, and the gradients) read or written once, the
/// scores never; the products at a share of the GEMM rate, over the
/// (query, key) pairs that are not masked. FLOPs are those the kernels
/// execute: the forward's two products, the backward's five plus the two
/// its dQ kernel recomputes (S and dP) to need no atomics.
std::optional<KernelCost> attentionCost(func::CallOp call, const DeviceProfile &d) {
  StringRef callee = call.getCallee();
  bool forward = callee == "oflow_rt_attention_fwd";
  if (!forward && callee != "oflow_rt_attention_bwd")
    return std::nullopt;
  auto arg = [&](unsigned i) { return constantInt(call.getOperand(i)); };
  std::optional<int64_t> dtype = arg(0), causal = arg(1), bh = arg(2), tq = arg(3),
                         tk = arg(4), dim = arg(5);
  KernelCost k;
  k.kind = "gemm";
  k.name = callee.str();
  k.nodes = forward ? 1 : 3;
  if (!dtype || !causal || !bh || !tq || !tk || !dim) {
    k.strategy = "attention (shape unknown)";
    predict(k, d, d.launchSeconds);
    return k;
  }
  std::string precision = *dtype == 6 ? "fp16" : "bf16";
  double pairs = *causal ? double(*tq) * (*tq + 1) / 2 : double(*tq) * *tk;
  double rows = double(*bh), D = double(*dim);
  k.strategy = llvm::formatv("attention {0} {1} {2}x{3}x{4}x{5}{6}",
                             forward ? "fwd" : "bwd", precision, *bh, *tq, *tk,
                             *dim, *causal ? " causal" : "")
                   .str();
  double qBytes = rows * *tq * D * 4, kBytes = rows * *tk * D * 4,
         rowBytes = rows * *tq * 4;
  if (forward) {
    k.flops = 4 * rows * pairs * D;
    k.hbmBytes = 2 * qBytes + 2 * kBytes + rowBytes; // q, k, v in; o, lse out
  } else {
    k.flops = 14 * rows * pairs * D;
    // q, k, v, o, dO and lse in; dq, dk, dv out; the row sums of dO * O
    // written once and read by both kernels.
    k.hbmBytes = 4 * qBytes + 4 * kBytes + 4 * rowBytes;
  }
  k.l2Bytes = k.hbmBytes;
  double memory = k.hbmBytes / d.hbmBytesPerSecond;
  double compute = k.flops / (d.gemmFlopsPerSecond(precision) * kAttentionGemmShare);
  k.bound = compute >= memory ? "compute" : "memory";
  k.seconds = std::max(memory, compute) + k.nodes * d.launchSeconds;
  return k;
}

/// A convolution call (oflow_rt_conv2d_*: cuDNN, or its im2col fallback):
/// its operands read and its result written once, the products at the
/// profile's fp32 rate (the runtime's cuDNN math is FMA unless TF32 is
/// allowed). The bias of `_fwd_bias` is one more node (cudnnAddTensor),
/// which reads and writes the output once more.
std::optional<KernelCost> convCost(func::CallOp call, const DeviceProfile &d) {
  StringRef callee = call.getCallee();
  if (!callee.starts_with("oflow_rt_conv2d_"))
    return std::nullopt;
  StringRef kind = callee.drop_front(StringRef("oflow_rt_conv2d_").size());
  KernelCost k;
  k.kind = "gemm";
  k.name = callee.str();
  k.nodes = kind == "fwd_bias" ? 2 : 1;
  SmallVector<int64_t> g;
  for (unsigned i = 0; i < 18 && i < call.getNumOperands(); ++i)
    if (std::optional<int64_t> v = constantInt(call.getOperand(i)))
      g.push_back(*v);
  if (g.size() != 18 || g[17] <= 0) {
    k.strategy = "conv (shape unknown)";
    predict(k, d, k.nodes * d.launchSeconds);
    return k;
  }
  double n = g[0], c = g[1], h = g[2], w = g[3], m = g[4], kh = g[5], kw = g[6],
         oh = g[7], ow = g[8], groups = g[17];
  double xBytes = n * c * h * w * 4, wBytes = m * (c / groups) * kh * kw * 4,
         yBytes = n * m * oh * ow * 4;
  k.strategy = llvm::formatv("conv {0} fp32 {1}x{2}x{3}x{4} -> {5} k{6}x{7}{8}",
                             kind, g[0], g[1], g[2], g[3], g[4], g[5], g[6],
                             g[17] > 1 ? " g" + std::to_string(g[17]) : "")
                   .str();
  k.flops = 2 * n * m * oh * ow * (c / groups) * kh * kw;
  k.hbmBytes = xBytes + wBytes + yBytes;
  if (kind == "fwd_bias")
    k.hbmBytes += 2 * yBytes + m * 4;
  k.l2Bytes = k.hbmBytes;
  double memory = k.hbmBytes / d.hbmBytesPerSecond;
  double compute = k.flops / d.gemmFlopsPerSecond("fp32");
  k.bound = compute >= memory ? "compute" : "memory";
  k.seconds = std::max(memory, compute) + k.nodes * d.launchSeconds;
  if (std::max(memory, compute) < k.nodes * d.launchSeconds)
    k.bound = "launch";
  return k;
}

int64_t dtypeBytes(int64_t dtype) {
  switch (dtype) {
  case 1: case 3: return 8;
  case 4: return 1;
  case 5: case 6: return 2;
  default: return 4;
  }
}

/// A collective's local traffic (one device: read and write its buffer;
/// the links are the planner's business, #15).
std::optional<KernelCost> collectiveCost(func::CallOp call, const DeviceProfile &d) {
  StringRef callee = call.getCallee();
  if (!callee.starts_with("oflow_rt_all_") && callee != "oflow_rt_reduce_scatter")
    return std::nullopt;
  std::optional<int64_t> elements;
  int64_t dtype = constantInt(call.getOperand(0)).value_or(0);
  if (callee == "oflow_rt_all_reduce")
    elements = constantInt(call.getOperand(4));
  else if (callee == "oflow_rt_all_gather" || callee == "oflow_rt_reduce_scatter") {
    unsigned o = callee == "oflow_rt_all_gather" ? 3 : 4;
    auto outer = constantInt(call.getOperand(o)), chunk = constantInt(call.getOperand(o + 1));
    if (outer && chunk)
      elements = *outer * *chunk;
  } else if (callee == "oflow_rt_all_to_all") {
    int64_t n = 1;
    for (unsigned i = 3; i < 8; ++i)
      n *= constantInt(call.getOperand(i)).value_or(1);
    elements = n;
  } else {
    return std::nullopt;
  }
  KernelCost k;
  k.kind = "collective";
  k.name = callee.str();
  k.strategy = "local traffic only (links: #15)";
  k.hbmBytes = k.l2Bytes = 2.0 * elements.value_or(0) * dtypeBytes(dtype);
  k.seconds = k.hbmBytes / d.hbmBytesPerSecond + d.launchSeconds;
  k.bound = k.seconds < 2 * d.launchSeconds ? "launch" : "memory";
  return k;
}

std::array<int64_t, 3> launchDims(gpu::KernelDim3 dims) {
  return {constantInt(dims.x).value_or(0), constantInt(dims.y).value_or(0),
          constantInt(dims.z).value_or(0)};
}

} // namespace

namespace {
/// Which arguments of a kernel only shift views of a buffer (the arena
/// offsets its launches pass), and the largest such view in bytes (0 when a
/// view's size is not static: then no argument is treated as a shift).
struct ShiftArguments {
  llvm::SmallBitVector shifts;
  int64_t largestView = 0;
};

ShiftArguments shiftArguments(gpu::GPUFuncOp kernel) {
  ShiftArguments out;
  out.shifts.resize(kernel.getNumArguments());
  for (BlockArgument arg : kernel.getArguments()) {
    if (!arg.getType().isIndex() || arg.use_empty())
      continue;
    bool onlyShifts = true;
    for (OpOperand &use : arg.getUses()) {
      auto view = dyn_cast<memref::ViewOp>(use.getOwner());
      MemRefType type = view ? view.getType() : MemRefType();
      if (!view || use.get() != view.getByteShift() || !type.hasStaticShape()) {
        onlyShifts = false;
        break;
      }
      int64_t bytes = type.getNumElements() *
                      std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      out.largestView = std::max(out.largestView, bytes);
    }
    if (onlyShifts)
      out.shifts.set(arg.getArgNumber());
  }
  // A view shifted by anything else (a constant, arithmetic) keeps its
  // distance to the others only if no shift moves: then none does.
  kernel.walk([&](memref::ViewOp view) {
    auto arg = dyn_cast<BlockArgument>(view.getByteShift());
    if (!arg || arg.getOwner() != &kernel.getBody().front() ||
        !out.shifts.test(arg.getArgNumber()))
      out.largestView = 0;
  });
  return out;
}

/// The launch's constant arguments with its view shifts made canonical:
/// the cost depends on shifts only through each address's place in its
/// 32-byte sector and through which views' spans can overlap, so the
/// smallest shift is kept modulo 128 bytes and a gap between consecutive
/// shifts wider than any view is narrowed to just wider than every view,
/// keeping its remainder modulo 128. Two launches with equal keys cost the
/// same: a model's repeated layers launch the same kernels at different
/// arena offsets.
std::vector<std::optional<int64_t>>
canonicalArguments(ArrayRef<std::optional<int64_t>> arguments, const ShiftArguments &shifts) {
  std::vector<std::optional<int64_t>> out(arguments.begin(), arguments.end());
  constexpr int64_t kAlign = 128;
  std::vector<int64_t> values;
  for (auto [i, v] : llvm::enumerate(arguments))
    if (v && i < shifts.shifts.size() && shifts.shifts.test(i))
      values.push_back(*v);
  if (values.empty() || shifts.largestView <= 0)
    return out;
  llvm::sort(values);
  values.erase(std::unique(values.begin(), values.end()), values.end());
  int64_t wide = llvm::alignTo(shifts.largestView, kAlign) + kAlign;
  std::map<int64_t, int64_t> canonical;
  int64_t at = ((values.front() % kAlign) + kAlign) % kAlign;
  canonical[values.front()] = at;
  for (size_t i = 1; i < values.size(); ++i) {
    int64_t gap = values[i] - values[i - 1];
    at += gap < wide ? gap : wide + gap % kAlign;
    canonical[values[i]] = at;
  }
  for (auto [i, v] : llvm::enumerate(out))
    if (v && i < shifts.shifts.size() && shifts.shifts.test(i))
      v = canonical[*v];
  return out;
}
} // namespace

/// Whether `op` runs only in checking mode: under an scf.if on the
/// runtime's `oflow_rt_check_memory()`.
static bool checkingModeOnly(Operation *op) {
  for (auto ifOp = op->getParentOfType<scf::IfOp>(); ifOp;
       ifOp = ifOp->getParentOfType<scf::IfOp>()) {
    SmallVector<Value> work = {ifOp.getCondition()};
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (auto call = dyn_cast_or_null<func::CallOp>(def);
          call && call.getCallee() == "oflow_rt_check_memory")
        return true;
      if (isa_and_nonnull<arith::CmpIOp, arith::ExtUIOp, arith::TruncIOp>(def))
        llvm::append_range(work, def->getOperands());
    }
  }
  return false;
}

std::vector<EntryReport> analyzeProgram(ModuleOp module, const DeviceProfile &device) {
  std::vector<EntryReport> entries;
  SymbolTableCollection symbols;
  // Launches that cost the same are analysed once (canonicalArguments).
  using LaunchKey = std::tuple<Operation *, bool, std::array<int64_t, 3>, std::array<int64_t, 3>,
                               std::vector<std::optional<int64_t>>>;
  std::map<LaunchKey, KernelCost> analyzed;
  llvm::DenseMap<Operation *, ShiftArguments> shiftsOf;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    EntryReport e;
    e.entry = fn.getName().str();
    // What keeps the runtime from replaying the entry from a CUDA graph.
    fn.walk([&](Operation *op) {
      auto call = dyn_cast<func::CallOp>(op);
      if (call && (call.getCallee().starts_with("oflow_rt_all_") ||
                   call.getCallee() == "oflow_rt_reduce_scatter"))
        e.eagerReason = "collectives";
      else if (isa<gpu::AllocOp, gpu::DeallocOp>(op))
        e.eagerReason = "device allocations";
      return e.eagerReason.empty() ? WalkResult::advance() : WalkResult::interrupt();
    });
    e.cudaGraph = e.eagerReason.empty();
    DeviceProfile d = device;
    if (e.cudaGraph)
      d.launchSeconds = device.graphLaunchSeconds;
    fn.walk([&](Operation *op) {
      std::optional<KernelCost> cost;
      if (isa<gpu::MemsetOp>(op) && checkingModeOnly(op)) {
        ++e.checkingOnly;
        return;
      }
      if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
        if (checkingModeOnly(launch)) {
          ++e.checkingOnly;
          return;
        }
        auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
            launch, launch.getKernel());
        if (!kernel)
          return;
        std::array<int64_t, 3> grid = launchDims(launch.getGridSizeOperandValues());
        std::array<int64_t, 3> block = launchDims(launch.getBlockSizeOperandValues());
        if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2])
          grid = block = {0, 0, 0};
        SmallVector<std::optional<int64_t>> arguments = llvm::map_to_vector(
            launch.getKernelOperands(), [](Value v) { return constantInt(v); });
        auto [shifts, fresh] = shiftsOf.try_emplace(kernel);
        if (fresh)
          shifts->second = shiftArguments(kernel);
        LaunchKey key{kernel, e.cudaGraph, grid, block,
                      canonicalArguments(arguments, shifts->second)};
        auto [it, inserted] = analyzed.try_emplace(std::move(key));
        if (inserted)
          it->second = analyzeKernel(kernel, d, grid, block, arguments);
        cost = it->second;
        if (auto origins = launch->getAttrOfType<StringAttr>("oflow.origins"))
          cost->origins = origins.getValue().str();
        ++e.generated;
      } else if (auto call = dyn_cast<func::CallOp>(op)) {
        cost = gemmCost(call, d);
        if (!cost)
          cost = attentionCost(call, d);
        if (!cost)
          cost = convCost(call, d);
        if (!cost)
          cost = collectiveCost(call, d);
        if (cost)
          ++e.library;
      }
      if (!cost)
        return;
      e.hbmBytes += cost->hbmBytes;
      e.flops += cost->flops;
      e.seconds += cost->seconds;
      e.nodes += cost->nodes;
      e.launches.push_back(std::move(*cost));
    });
    if (!e.launches.empty())
      entries.push_back(std::move(e));
  }
  return entries;
}

namespace {
std::string human(double v, StringRef unit) {
  const char *prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  return llvm::formatv("{0:f1} {1}{2}", v, prefixes[i], unit).str();
}

std::string microseconds(double s) { return llvm::formatv("{0:f1}", s * 1e6).str(); }
} // namespace

std::string formatKernelReport(const std::vector<EntryReport> &entries,
                               const DeviceProfile &device) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("device {0}: {1}/s HBM, {2}/s fp32 ({3}/s bf16 GEMM), "
                      "{4} us latency, {5} us per launch\n",
                      device.name, human(device.hbmBytesPerSecond, "B"),
                      human(device.fp32FlopsPerSecond, "FLOP"),
                      human(device.bf16FlopsPerSecond, "FLOP"),
                      microseconds(device.memoryLatencySeconds),
                      microseconds(device.launchSeconds));
  for (const EntryReport &e : entries) {
    os << llvm::formatv("\nentry {0}: {1} launches ({2} generated kernels, {3} "
                        "library calls",
                        e.entry, e.nodes, e.generated, e.library);
    if (int64_t copies = e.nodes - static_cast<int64_t>(e.launches.size()))
      os << llvm::formatv(", {0} more launches inside library calls: padded "
                          "GEMMs' copies and memsets, attention's backward "
                          "kernels, convolutions' bias additions",
                          copies);
    os << llvm::formatv("), {0} HBM, {1}, predicted {2} us", human(e.hbmBytes, "B"),
                        human(e.flops, "FLOP"), microseconds(e.seconds));
    os << (e.cudaGraph ? llvm::formatv(", replayed from a CUDA graph ({0} us per launch)",
                                       microseconds(device.graphLaunchSeconds))
                             .str()
                       : ", launched one by one (" + e.eagerReason + ")");
    if (e.checkingOnly)
      os << llvm::formatv(" (+{0} poisoning launches with --check-memory)",
                          e.checkingOnly);
    os << "\n";
    os << llvm::formatv("{0,5} {1,-28} {2,-26} {3,9} {4,5} {5,10} {6,10} {7,10} "
                        "{8,7} {9,-8} {10,9}  {11}\n",
                        "#", "kernel", "strategy", "grid", "block", "FLOPs", "L2",
                        "HBM", "chain", "bound", "pred us", "from");
    for (auto [i, k] : llvm::enumerate(e.launches)) {
      std::string grid = k.kind == "kernel"
                             ? llvm::formatv("{0}", k.grid[0] * k.grid[1] * k.grid[2]).str()
                             : "-";
      std::string block = k.kind == "kernel"
                              ? llvm::formatv("{0}", k.block[0] * k.block[1] * k.block[2]).str()
                              : "-";
      os << llvm::formatv("{0,5} {1,-28} {2,-26} {3,9} {4,5} {5,10} {6,10} {7,10} "
                          "{8,7} {9,-8} {10,9}  {11}\n",
                          i, k.name, k.strategy, grid, block, human(k.flops, ""),
                          human(k.l2Bytes, "B"), human(k.hbmBytes, "B"),
                          static_cast<int64_t>(k.loadChain), k.bound,
                          microseconds(k.seconds), k.origins);
    }
  }
  return out;
}

std::string kernelReportJson(const std::vector<EntryReport> &entries,
                             const DeviceProfile &device) {
  llvm::json::Array list;
  for (const EntryReport &e : entries) {
    llvm::json::Array launches;
    for (const KernelCost &k : e.launches)
      launches.push_back(llvm::json::Object{
          {"name", k.name},
          {"kind", k.kind},
          {"strategy", k.strategy},
          {"origins", k.origins},
          {"grid", llvm::json::Array{k.grid[0], k.grid[1], k.grid[2]}},
          {"block", llvm::json::Array{k.block[0], k.block[1], k.block[2]}},
          {"flops", k.flops},
          {"l2_bytes", k.l2Bytes},
          {"hbm_bytes", k.hbmBytes},
          {"load_chain", k.loadChain},
          {"bound", k.bound},
          {"nodes", k.nodes},
          {"predicted_s", k.seconds}});
    list.push_back(llvm::json::Object{{"entry", e.entry},
                                      {"generated_kernels", e.generated},
                                      {"checking_mode_kernels", e.checkingOnly},
                                      {"library_calls", e.library},
                                      {"nodes", e.nodes},
                                      {"cuda_graph", e.cudaGraph},
                                      {"hbm_bytes", e.hbmBytes},
                                      {"flops", e.flops},
                                      {"predicted_s", e.seconds},
                                      {"launches", std::move(launches)}});
  }
  llvm::json::Value device_ = llvm::json::parse(deviceProfileJson(device)).get();
  llvm::json::Value v =
      llvm::json::Object{{"device", std::move(device_)}, {"entries", std::move(list)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", v) << "\n";
  return text;
}

} // namespace oflow
