//===- remat-gen.cpp - Random training steps for testing
//-------------------===//
//
// remat-gen builds random, valid training steps in remat's IR contract with
// OpBuilder and prints them: a random forward DAG over the op set the CPU
// lowering supports (linalg.matmul, linalg.transpose, linalg.broadcast,
// linalg.reduce, elementwise arith/math, tensor.concat, dropout through
// remat.rng_uniform), a `remat.backward` region derived by the chain rule
// (reverse mode over the forward nodes; the gradients of every input and
// parameter are its results), and random segment marks (flat, nested, with
// `remat.policy = "save"` overrides). With `--loops`, scans too: an scf.for
// over a stack of layers (h <- tanh(h W[i]), with dropout and a residual
// now and then) that stacks what its backward needs into tensor iter_args,
// and in the backward region an scf.for that walks the layers in reverse
// (docs/Loops.md). Marks go on the loop, never on the ops of its body.
//
//   remat-gen --seed N [--size tiny|small|large] [--max-nodes K] [--loops]
//             [-o FILE]
//   remat-gen --ops N [--shape S] [-o FILE]     (compile-time benchmarks)
//
// The same seed gives the same step; `--max-nodes K` keeps the first K
// forward nodes of that seed's step (same shapes, ops and marks), which is
// how the differential tester minimizes a failing case.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematDialect.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace mlir;

namespace {

llvm::cl::opt<uint64_t> seedOpt("seed", llvm::cl::desc("Random seed"),
                                llvm::cl::init(1));
llvm::cl::opt<std::string>
    sizeOpt("size", llvm::cl::desc("Tensor sizes: tiny, small or large"),
            llvm::cl::init("tiny"));
llvm::cl::opt<unsigned>
    maxNodesOpt("max-nodes",
                llvm::cl::desc("Keep only the first K forward nodes of the "
                               "seed's step (for minimizing)"),
                llvm::cl::init(0));
llvm::cl::opt<unsigned>
    opsOpt("ops",
           llvm::cl::desc("Generate a step of about N ops (nested ops "
                          "included) for compile-time benchmarks"),
           llvm::cl::init(0));
llvm::cl::opt<int64_t> shapeOpt("shape",
                                llvm::cl::desc("With --ops: every dimension "
                                               "is S"),
                                llvm::cl::init(16));
llvm::cl::opt<bool>
    loopsOpt("loops",
             llvm::cl::desc("Also generate scans: scf.for loops over a stack "
                            "of layers, with a reverse scf.for in the "
                            "backward region"),
             llvm::cl::init(false));
llvm::cl::opt<std::string> outputOpt("o", llvm::cl::desc("Output file"),
                                     llvm::cl::init("-"));

/// splitmix64: a tiny generator whose sequence is the same everywhere.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n).
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool chance(unsigned percent) { return below(100) < percent; }
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[below(v.size())];
  }
};

enum class Kind {
  Matmul,      // x (m,k) @ w (k,n); w a parameter or a value
  Transpose,   // (m,n) -> (n,m)
  Bias,        // x (m,n) + broadcast(b (n)) with a new parameter b
  ReduceBcast, // broadcast(reduce_sum(x, dim 1)) to (m, n')
  Binary,      // addf / subf / mulf of two values of one shape
  Tanh,
  Neg,
  Relu,
  Scale,  // x * constant
  Concat, // concat of two values along dim 0 or 1
  Dropout,
  Scan, // scf.for over a stack of layers h <- [h +] dropout(tanh(h W[i]))
};

/// What a forward node computed; the backward needs it for the chain rule.
struct Node {
  Kind kind;
  SmallVector<Value> inputs;
  Value output;
  // Per kind: the binary op's name, the scale, the dropout mask and scale,
  // the reduced value, the concat dim.
  StringRef binary;
  double constant = 0;
  Value mask;
  Value reduced;
  int64_t dim = 0;
  // A scan's layer count, whether its layers are residual, and the stacks
  // its loop returns besides h: every layer's input, its tanh and, with
  // dropout, its mask scale.
  int64_t layers = 0;
  bool residual = false;
  SmallVector<Value> stacks;
};

class Generator {
public:
  Generator(MLIRContext *ctx, uint64_t seed, ArrayRef<int64_t> dims,
            unsigned numNodes, unsigned maxNodes, bool marks, bool loops)
      : ctx(ctx), b(ctx), rng{seed}, dims(dims), numNodes(numNodes),
        maxNodes(maxNodes), marks(marks), loops(loops) {
    f32 = b.getF32Type();
    loc = b.getUnknownLoc();
  }

  OwningOpRef<ModuleOp> run();

private:
  RankedTensorType type(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, f32);
  }
  Value arg(Type t) {
    argTypes.push_back(t);
    return body->addArgument(t, loc);
  }
  Value param(ArrayRef<int64_t> shape) {
    Value v = arg(type(shape));
    diffArgs.push_back(v);
    return v;
  }
  /// Writes the current segment mark on `op` (forward ops directly in the
  /// function body only).
  Operation *mark(Operation *op) {
    if (!inBackward && !inLoopBody && currentMark)
      op->setAttr(remat::RematDialect::kSegmentAttrName, currentMark);
    return op;
  }
  template <typename OpTy, typename... Args> Value make(Args &&...args) {
    auto op = OpTy::create(b, loc, std::forward<Args>(args)...);
    mark(op.getOperation());
    return op->getResult(0);
  }
  Value splat(double c, ArrayRef<int64_t> shape) {
    auto t = type(shape);
    return make<arith::ConstantOp>(
        DenseElementsAttr::get(t, b.getFloatAttr(f32, c)));
  }
  Value empty(ArrayRef<int64_t> shape) {
    return make<tensor::EmptyOp>(shape, f32);
  }
  Value zeros(ArrayRef<int64_t> shape) {
    Value zero = make<arith::ConstantOp>(b.getFloatAttr(f32, 0.0));
    return make<linalg::FillOp>(ValueRange{zero}, ValueRange{empty(shape)});
  }
  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  Value matmul(Value x, Value w) {
    SmallVector<int64_t> shape{shapeOf(x)[0], shapeOf(w)[1]};
    Value init = zeros(shape);
    auto op =
        linalg::MatmulOp::create(b, loc, ValueRange{x, w}, ValueRange{init});
    mark(op);
    return op->getResult(0);
  }
  Value transpose(Value x) {
    SmallVector<int64_t> shape{shapeOf(x)[1], shapeOf(x)[0]};
    auto op = linalg::TransposeOp::create(b, loc, x, empty(shape),
                                          ArrayRef<int64_t>{1, 0});
    mark(op);
    return op->getResult(0);
  }
  /// Broadcasts `x` to `shape`, adding dimension `dim`.
  Value broadcast(Value x, ArrayRef<int64_t> shape, int64_t dim) {
    auto op = linalg::BroadcastOp::create(b, loc, x, empty(shape),
                                          ArrayRef<int64_t>{dim});
    mark(op);
    return op->getResult(0);
  }
  /// Sums `x` (rank 2) over `dim`.
  Value reduce(Value x, int64_t dim) {
    SmallVector<int64_t> shape{shapeOf(x)[1 - dim]};
    Value init = zeros(shape);
    auto op = linalg::ReduceOp::create(
        b, loc, ValueRange{x}, ValueRange{init}, ArrayRef<int64_t>{dim},
        [](OpBuilder &nb, Location l, ValueRange args) {
          Value s = arith::AddFOp::create(nb, l, args[0], args[1]);
          linalg::YieldOp::create(nb, l, s);
        });
    mark(op);
    return op->getResult(0);
  }
  Value binary(StringRef name, Value x, Value y) {
    if (name == "addf")
      return make<arith::AddFOp>(x, y);
    if (name == "subf")
      return make<arith::SubFOp>(x, y);
    return make<arith::MulFOp>(x, y);
  }
  Value add(Value x, Value y) { return make<arith::AddFOp>(x, y); }
  Value mul(Value x, Value y) { return make<arith::MulFOp>(x, y); }
  Value scale(Value x, double c) { return mul(x, splat(c, shapeOf(x))); }
  Value slice(Value x, int64_t dim, int64_t start, int64_t size) {
    SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0)),
        strides(2, b.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes;
    for (int64_t d : shapeOf(x))
      sizes.push_back(b.getIndexAttr(d));
    offsets[dim] = b.getIndexAttr(start);
    sizes[dim] = b.getIndexAttr(size);
    auto op =
        tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, strides);
    mark(op);
    return op->getResult(0);
  }

  Value index(int64_t value) { return make<arith::ConstantIndexOp>(value); }
  /// Slot `i` of `stack` (rank 3), of rank 2.
  Value sliceAt(Value stack, Value i) {
    ArrayRef<int64_t> shape = shapeOf(stack);
    SmallVector<OpFoldResult> offsets{i, b.getIndexAttr(0), b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(shape[1]),
                                    b.getIndexAttr(shape[2])};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    auto op = tensor::ExtractSliceOp::create(b, loc, type(shape.drop_front()),
                                             stack, offsets, sizes, strides);
    mark(op);
    return op->getResult(0);
  }
  /// `stack` (rank 3) with `x` (rank 2) written into slot `i`.
  Value insertAt(Value x, Value stack, Value i) {
    SmallVector<OpFoldResult> offsets{i, b.getIndexAttr(0), b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1),
                                    b.getIndexAttr(shapeOf(x)[0]),
                                    b.getIndexAttr(shapeOf(x)[1])};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    auto op = tensor::InsertSliceOp::create(b, loc, x, stack, offsets, sizes,
                                            strides);
    mark(op);
    return op->getResult(0);
  }
  /// An scf.for from 0 to `trips` over `inits` whose body `body` builds
  /// with this generator's helpers, returning the values to yield.
  scf::ForOp loop(int64_t trips, ValueRange inits,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    Value lb = index(0), ub = index(trips), step = index(1);
    auto op = scf::ForOp::create(
        b, loc, lb, ub, step, inits,
        [&](OpBuilder &nested, Location, Value iv, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          bool wasInBody = inLoopBody;
          inLoopBody = true;
          SmallVector<Value> yielded = body(iv, carried);
          scf::YieldOp::create(b, loc, yielded);
          inLoopBody = wasInBody;
        });
    mark(op);
    return op;
  }
  Value scanForward(Node &node, Value x);
  void scanBackward(const Node &node, Value g);

  /// Picks a forward value, preferring recent ones (deep graphs, with skip
  /// connections now and then).
  Value pickValue() {
    size_t n = pool.size();
    if (chain)
      return pool[n - 1];
    unsigned r = rng.below(100);
    if (r < 55)
      return pool[n - 1];
    if (r < 80)
      return pool[n - 1 - rng.below(std::min<size_t>(n, 4))];
    return pool[rng.below(n)];
  }
  /// A forward value of `shape` other than `avoid`, uniformly among them
  /// in pool order; O(1) through the pool's index by shape.
  Value pickWithShape(ArrayRef<int64_t> shape, Value avoid) {
    auto it = byShape.find(SmallVector<int64_t, 2>(shape));
    if (it == byShape.end())
      return {};
    const SmallVector<Value, 0> &same = it->second;
    auto at = poolIndex.find(avoid);
    bool skip = avoid && shapeOf(avoid) == shape && at != poolIndex.end();
    size_t count = same.size() - skip;
    if (count == 0)
      return {};
    size_t k = rng.below(count);
    // `same` without `avoid`: the k-th value, one further from `avoid` on.
    return same[skip && k >= at->second ? k + 1 : k];
  }
  /// Adds a forward value to the pool and to its indexes.
  void addToPool(Value v) {
    ArrayRef<int64_t> shape = shapeOf(v);
    SmallVector<Value, 0> &same = byShape[SmallVector<int64_t, 2>(shape)];
    poolIndex[v] = same.size();
    same.push_back(v);
    for (int64_t dim = 0; dim < 2; ++dim)
      byExtent[{dim, shape[dim]}].push_back(v);
    pool.push_back(v);
  }
  void nextMark();
  bool forwardNode();
  bool buildForward(Node &node, Value x);
  Value dropoutForward(Node &node, Value x);
  void buildForwardNodes();
  void addSinks();
  remat::BackwardOp buildBackward(Value y, Value dy);
  void backwardNode(const Node &node, Value g);
  void accumulate(Value v, Value g) {
    auto [it, inserted] = grads.try_emplace(v, g);
    if (!inserted)
      it->second = add(it->second, g);
  }

  MLIRContext *ctx;
  OpBuilder b;
  Rng rng;
  ArrayRef<int64_t> dims;
  unsigned numNodes, maxNodes;
  bool marks, loops;
  Type f32;
  Location loc = UnknownLoc::get(ctx);
  Block *body = nullptr;
  SmallVector<Type> argTypes;
  SmallVector<Value> diffArgs; // inputs and parameters, in argument order
  SmallVector<Value> pool;     // forward values
  // The pool by shape (with each value's index there) and by the extent of
  // each dimension, in pool order: picks with a condition on the shape cost
  // O(1), not a scan of the pool.
  std::map<SmallVector<int64_t, 2>, SmallVector<Value, 0>> byShape;
  llvm::DenseMap<Value, size_t> poolIndex;
  std::map<std::pair<int64_t, int64_t>, SmallVector<Value, 0>> byExtent;
  std::vector<Node> nodes;
  llvm::DenseMap<Value, Value> grads;
  Value seed;
  Attribute currentMark;
  int64_t nextSegment = 0;
  bool inBackward = false;
  bool inLoopBody = false;

public:
  /// Stop adding forward nodes once the forward part has this many ops.
  size_t forwardOpLimit = SIZE_MAX;
  size_t forwardOps = 0;
  /// Every node takes the previous node's output as its first operand, so
  /// the whole forward part has gradients and the op count is predictable.
  bool chain = false;
};

/// Moves between unmarked runs, flat segments and nested segments, and
/// sometimes stays.
void Generator::nextMark() {
  if (!marks || (currentMark && rng.chance(70)) ||
      (!currentMark && rng.chance(50)))
    return;
  unsigned r = rng.below(100);
  if (r < 25) {
    currentMark = {};
  } else if (r < 70 || !currentMark) {
    currentMark = b.getI64IntegerAttr(nextSegment++);
  } else {
    // A segment nested in the current outer one.
    Attribute outer = currentMark;
    if (auto array = dyn_cast<ArrayAttr>(currentMark))
      outer = array[0];
    currentMark = b.getArrayAttr({outer, b.getI64IntegerAttr(nextSegment++)});
  }
}

/// Emits one random forward node; false if the chosen kind did not fit.
bool Generator::forwardNode() {
  static const Kind kinds[] = {
      Kind::Matmul, Kind::Matmul,      Kind::Matmul, Kind::Transpose,
      Kind::Bias,   Kind::ReduceBcast, Kind::Binary, Kind::Binary,
      Kind::Tanh,   Kind::Neg,         Kind::Relu,   Kind::Scale,
      Kind::Concat, Kind::Dropout,     Kind::Dropout};
  // Without --loops, no draw: a seed's step stays what it was.
  Kind kind =
      loops && rng.chance(15) ? Kind::Scan : kinds[rng.below(std::size(kinds))];
  Node node{kind, {}, {}, {}, 0, {}, {}, 0, 0, false, {}};
  if (!buildForward(node, pickValue()))
    return false;
  Operation *last = node.output.getDefiningOp();
  if (marks && currentMark && rng.chance(8))
    last->setAttr(remat::RematDialect::kPolicyAttrName,
                  b.getStringAttr("save"));
  addToPool(node.output);
  nodes.push_back(std::move(node));
  return true;
}

/// Emits the ops of `node`, of its kind, on the forward value `x`, and sets
/// its inputs and output; false, having drawn but emitted nothing, if the
/// kind does not fit.
bool Generator::buildForward(Node &node, Value x) {
  ArrayRef<int64_t> xs = shapeOf(x);
  node.inputs = {x};
  switch (node.kind) {
  case Kind::Matmul: {
    int64_t n = rng.pick(std::vector<int64_t>(dims.begin(), dims.end()));
    SmallVector<int64_t> wshape{xs[1], n};
    Value w = rng.chance(25) ? pickWithShape(wshape, {}) : Value();
    if (!w)
      w = param(wshape);
    node.inputs = {x, w};
    node.output = matmul(x, w);
    return true;
  }
  case Kind::Transpose:
    node.output = transpose(x);
    return true;
  case Kind::Bias: {
    Value bias = param({xs[1]});
    node.inputs = {x, bias};
    node.output = add(x, broadcast(bias, xs, 0));
    return true;
  }
  case Kind::ReduceBcast: {
    int64_t n = rng.pick(std::vector<int64_t>(dims.begin(), dims.end()));
    node.reduced = reduce(x, 1);
    node.output = broadcast(node.reduced, {xs[0], n}, 1);
    return true;
  }
  case Kind::Binary: {
    Value y = pickWithShape(xs, x);
    if (!y)
      return false;
    static const char *ops[] = {"addf", "subf", "mulf"};
    node.binary = ops[rng.below(3)];
    node.inputs = {x, y};
    node.output = binary(node.binary, x, y);
    return true;
  }
  case Kind::Tanh:
    node.output = make<math::TanhOp>(x);
    return true;
  case Kind::Neg:
    node.output = make<arith::NegFOp>(x);
    return true;
  case Kind::Relu:
    node.output = make<arith::MaximumFOp>(x, splat(0.0, xs));
    return true;
  case Kind::Scale:
    node.constant = rng.chance(50) ? 0.5 : 0.25 * (1 + rng.below(7));
    node.output = scale(x, node.constant);
    return true;
  case Kind::Concat: {
    // Another value with the same extent in the other dimension.
    node.dim = rng.below(2);
    const SmallVector<Value, 0> &fits =
        byExtent[{1 - node.dim, xs[1 - node.dim]}];
    Value y = fits[rng.below(fits.size())];
    node.inputs = {x, y};
    node.output = make<tensor::ConcatOp>(node.dim, ValueRange{x, y});
    return true;
  }
  case Kind::Dropout:
    node.output = dropoutForward(node, x);
    return true;
  case Kind::Scan:
    node.output = scanForward(node, x);
    return true;
  }
  llvm_unreachable("unknown node kind");
}

/// Dropout of `x` with a random keep probability: `x` scaled where a
/// uniform draw (remat.rng_uniform) keeps it, else zero.
Value Generator::dropoutForward(Node &node, Value x) {
  ArrayRef<int64_t> xs = shapeOf(x);
  if (!seed)
    seed = arg(b.getI64Type());
  double p = rng.chance(50) ? 0.5 : 0.125;
  node.constant = 1.0 / (1.0 - p);
  Value u = make<remat::RngUniformOp>(type(xs));
  node.mask = make<arith::CmpFOp>(arith::CmpFPredicate::OGE, u, splat(p, xs));
  Value scaled = scale(x, node.constant);
  return make<arith::SelectOp>(node.mask, scaled, splat(0.0, xs));
}

/// The vector-Jacobian product of one node: adds the gradients of its
/// inputs given `g`, the gradient of its output.
void Generator::backwardNode(const Node &node, Value g) {
  Value x = node.inputs[0];
  ArrayRef<int64_t> xs = shapeOf(x);
  switch (node.kind) {
  case Kind::Matmul: {
    Value w = node.inputs[1];
    accumulate(x, matmul(g, transpose(w)));
    accumulate(w, matmul(transpose(x), g));
    break;
  }
  case Kind::Transpose:
    accumulate(x, transpose(g));
    break;
  case Kind::Bias:
    accumulate(x, g);
    accumulate(node.inputs[1], reduce(g, 0));
    break;
  case Kind::ReduceBcast:
    accumulate(x, broadcast(reduce(g, 1), xs, 1));
    break;
  case Kind::Binary: {
    Value y = node.inputs[1];
    if (node.binary == "addf") {
      accumulate(x, g);
      accumulate(y, g);
    } else if (node.binary == "subf") {
      accumulate(x, g);
      accumulate(y, make<arith::NegFOp>(g));
    } else {
      accumulate(x, mul(g, y));
      accumulate(y, mul(g, x));
    }
    break;
  }
  case Kind::Tanh: {
    Value y = node.output;
    Value d = make<arith::SubFOp>(splat(1.0, xs), mul(y, y));
    accumulate(x, mul(g, d));
    break;
  }
  case Kind::Neg:
    accumulate(x, make<arith::NegFOp>(g));
    break;
  case Kind::Relu: {
    Value z = splat(0.0, xs);
    Value positive = make<arith::CmpFOp>(arith::CmpFPredicate::OGT, x, z);
    accumulate(x, make<arith::SelectOp>(positive, g, z));
    break;
  }
  case Kind::Scale:
    accumulate(x, scale(g, node.constant));
    break;
  case Kind::Concat: {
    Value y = node.inputs[1];
    int64_t split = xs[node.dim];
    accumulate(x, slice(g, node.dim, 0, split));
    accumulate(y, slice(g, node.dim, split, shapeOf(y)[node.dim]));
    break;
  }
  case Kind::Dropout:
    accumulate(x, make<arith::SelectOp>(node.mask, scale(g, node.constant),
                                        splat(0.0, xs)));
    break;
  case Kind::Scan:
    scanBackward(node, g);
    break;
  }
}

/// A scan over a new stack W of 2 to 4 layers: layer i maps h (m, k) to
/// tanh(h W[i]), dropped out (scale stacked) and added to h now and then.
/// The loop carries h and stacks each layer's input and tanh.
Value Generator::scanForward(Node &node, Value x) {
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t m = xs[0], k = xs[1];
  node.layers = 2 + rng.below(3);
  node.residual = rng.chance(50);
  bool dropout = rng.chance(50);
  double p = rng.chance(50) ? 0.5 : 0.125;
  if (dropout && !seed)
    seed = arg(b.getI64Type());
  node.constant = 1.0 / (1.0 - p);
  Value w = param({node.layers, k, k});
  node.inputs = {x, w};
  SmallVector<Value> inits{x, zeros({node.layers, m, k}),
                           zeros({node.layers, m, k})};
  if (dropout)
    inits.push_back(zeros({node.layers, m, k}));
  // Half the scans stay out of the current segment, for
  // -remat-checkpoint-loops, which leaves a marked loop to -remat-checkpoint.
  Attribute segment = currentMark;
  if (rng.chance(50))
    currentMark = {};
  scf::ForOp scan = loop(node.layers, inits, [&](Value i, ValueRange carried) {
    Value h = carried[0];
    Value a = make<math::TanhOp>(matmul(h, sliceAt(w, i)));
    Value out = a;
    SmallVector<Value> yielded{
        {}, insertAt(h, carried[1], i), insertAt(a, carried[2], i)};
    if (dropout) {
      Value u = make<remat::RngUniformOp>(type(xs));
      Value keep =
          make<arith::CmpFOp>(arith::CmpFPredicate::OGE, u, splat(p, xs));
      Value s =
          make<arith::SelectOp>(keep, splat(node.constant, xs), splat(0.0, xs));
      out = mul(a, s);
      yielded.push_back(insertAt(s, carried[3], i));
    }
    yielded[0] = node.residual ? add(h, out) : out;
    return yielded;
  });
  currentMark = segment;
  node.stacks.assign(scan.getResults().begin() + 1, scan.getResults().end());
  return scan.getResult(0);
}

/// The scan's backward: an scf.for over the layers in reverse (i = n-1-j)
/// carrying the gradient of h and the stacked gradient of W.
void Generator::scanBackward(const Node &node, Value g) {
  Value x = node.inputs[0], w = node.inputs[1];
  ArrayRef<int64_t> xs = shapeOf(x);
  Value lastLayer = index(node.layers - 1);
  Value one = splat(1.0, xs);
  SmallVector<Value> inits{g, zeros(shapeOf(w))};
  scf::ForOp scan = loop(node.layers, inits, [&](Value j, ValueRange carried) {
    Value i = make<arith::SubIOp>(lastLayer, j);
    Value gout = carried[0];
    Value h = sliceAt(node.stacks[0], i);
    Value a = sliceAt(node.stacks[1], i);
    Value ga =
        node.stacks.size() > 2 ? mul(gout, sliceAt(node.stacks[2], i)) : gout;
    Value dz = mul(ga, make<arith::SubFOp>(one, mul(a, a)));
    Value dwi = matmul(transpose(h), dz);
    Value gh = matmul(dz, transpose(sliceAt(w, i)));
    if (node.residual)
      gh = add(gh, gout);
    return SmallVector<Value>{gh, insertAt(dwi, carried[1], i)};
  });
  accumulate(x, scan.getResult(0));
  accumulate(w, scan.getResult(1));
}

OwningOpRef<ModuleOp> Generator::run() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, "step", b.getFunctionType({}, {}));
  body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);

  // One or two inputs of shape (batch, d).
  int64_t batch = rng.pick(std::vector<int64_t>(dims.begin(), dims.end()));
  unsigned numInputs = 1 + rng.below(2);
  for (unsigned i = 0; i < numInputs; ++i)
    addToPool(param(
        {batch, rng.pick(std::vector<int64_t>(dims.begin(), dims.end()))}));
  buildForwardNodes();
  addSinks();
  currentMark = {};

  // The step returns the last value y and the gradients of every input and
  // parameter for the cotangent dy of y.
  Value y = pool.back();
  Value dy = arg(y.getType());
  auto backward = buildBackward(y, dy);
  b.setInsertionPointAfter(backward);
  SmallVector<Value> returned{y};
  llvm::append_range(returned, backward.getResults());
  func::ReturnOp::create(b, loc, returned);

  SmallVector<Type> resultTypes;
  for (Value v : returned)
    resultTypes.push_back(v.getType());
  func.setFunctionType(b.getFunctionType(argTypes, resultTypes));
  if (seed)
    func.setArgAttr(cast<BlockArgument>(seed).getArgNumber(),
                    remat::RematDialect::kRngSeedAttrName, b.getUnitAttr());
  return module;
}

/// Adds forward nodes, each under the next mark, up to the node limit and
/// the forward op limit (which counts nested ops).
void Generator::buildForwardNodes() {
  unsigned limit = maxNodes ? std::min(maxNodes, numNodes) : numNodes;
  Operation *counted = nullptr; // the last forward op counted
  for (unsigned made = 0; made < limit && forwardOps < forwardOpLimit;) {
    nextMark();
    if (!forwardNode())
      continue;
    ++made;
    auto it = counted ? std::next(Block::iterator(counted)) : body->begin();
    for (; it != body->end(); ++it)
      it->walk([&](Operation *) { ++forwardOps; });
    counted = &body->back();
  }
}

/// Dead ends of the DAG of the last value's shape flow into it, so that more
/// of the forward graph has gradients.
void Generator::addSinks() {
  llvm::DenseSet<Value> used;
  for (const Node &node : nodes)
    used.insert(node.inputs.begin(), node.inputs.end());
  SmallVector<Value> sinks;
  for (const Node &node : nodes)
    if (!used.contains(node.output) && node.output != pool.back() &&
        shapeOf(node.output) == shapeOf(pool.back()))
      sinks.push_back(node.output);
  for (Value sink : sinks) {
    Node node{};
    node.kind = Kind::Binary;
    node.inputs = {pool.back(), sink};
    node.binary = "addf";
    node.output = add(pool.back(), sink);
    addToPool(node.output);
    nodes.push_back(std::move(node));
  }
}

/// The remat.backward region of the step that returns `y`, given the
/// cotangent `dy`: the chain rule over the forward nodes in reverse, yielding
/// the gradient of every input and parameter (zero where none flows).
remat::BackwardOp Generator::buildBackward(Value y, Value dy) {
  SmallVector<Type> gradTypes;
  for (Value v : diffArgs)
    gradTypes.push_back(v.getType());
  auto backward = remat::BackwardOp::create(b, loc, gradTypes);
  b.createBlock(&backward.getBody());
  inBackward = true;
  grads[y] = dy;
  for (const Node &node : llvm::reverse(nodes)) {
    auto it = grads.find(node.output);
    if (it != grads.end())
      backwardNode(node, it->second);
  }
  SmallVector<Value> results;
  for (Value v : diffArgs) {
    auto it = grads.find(v);
    results.push_back(it != grads.end() ? it->second : splat(0.0, shapeOf(v)));
  }
  remat::YieldOp::create(b, loc, results);
  return backward;
}

size_t countOps(ModuleOp module) {
  size_t n = 0;
  module->walk([&](Operation *) { ++n; });
  return n - 1; // the module itself
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "remat-gen: random training steps in remat's IR contract\n");

  MLIRContext ctx;
  ctx.loadDialect<remat::RematDialect, arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect, scf::SCFDialect,
                  tensor::TensorDialect>();

  OwningOpRef<ModuleOp> module;
  if (opsOpt) {
    // Unmarked-or-marked steps of about N ops: measure ops per node on a
    // probe, then generate the right number of nodes.
    if (shapeOpt < 1 || shapeOpt > (1 << 20)) {
      llvm::errs() << "remat-gen: --shape must be in [1, 2^20]\n";
      return 2;
    }
    SmallVector<int64_t> dims{shapeOpt};
    // The forward part grows until it holds N / r ops, r being the ratio of
    // all ops to forward ops (about 2.74 with every node on the chain); one
    // more build corrects r when the count is off by more than 5%.
    double ratio = 2.74;
    for (int attempt = 0; attempt < 3; ++attempt) {
      Generator gen(&ctx, seedOpt, dims, UINT_MAX, 0, true, false);
      gen.forwardOpLimit = std::max<size_t>(1, size_t(opsOpt / ratio));
      gen.chain = true;
      module = gen.run();
      double count = countOps(*module);
      if (std::abs(count - double(opsOpt)) <= 0.05 * opsOpt)
        break;
      ratio = count / (gen.forwardOps + 1);
    }
  } else {
    SmallVector<int64_t> dims;
    unsigned minNodes, maxNodes;
    if (sizeOpt == "tiny") {
      dims = {2, 3, 4};
      minNodes = 3, maxNodes = 12;
    } else if (sizeOpt == "small") {
      dims = {4, 8, 12, 16};
      minNodes = 8, maxNodes = 40;
    } else if (sizeOpt == "large") {
      dims = {64, 96, 128, 256};
      minNodes = 16, maxNodes = 64;
    } else {
      llvm::errs() << "remat-gen: --size must be tiny, small or large, got '"
                   << sizeOpt << "'\n";
      return 2;
    }
    Rng sizer{seedOpt ^ 0x5eed};
    unsigned nodes = minNodes + sizer.below(maxNodes - minNodes + 1);
    module = Generator(&ctx, seedOpt, dims, nodes, maxNodesOpt, true, loopsOpt)
                 .run();
  }

  if (failed(verify(*module))) {
    llvm::errs() << "remat-gen: internal error: the generated step does not "
                    "verify (seed "
                 << seedOpt << ")\n";
    return 1;
  }
  std::string error;
  auto output = openOutputFile(outputOpt, &error);
  if (!output) {
    llvm::errs() << "remat-gen: " << error << "\n";
    return 2;
  }
  // Verified above: the printer need not verify it again.
  module->print(output->os(), OpPrintingFlags().assumeVerified());
  output->keep();
  return 0;
}
