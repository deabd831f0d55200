//===- CheckpointPlanTest.cpp - Checkpoint plan and -remat-checkpoint -----===//
//
// Tests the checkpoint plan on hand-written steps and on random forward
// graphs with random segment marks: the planned saved set must match a
// brute-force reference, and applying it (-remat-checkpoint) must give IR
// that verifies, passes -remat-verify and uses exactly the planned values.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/CheckpointPlan.h"
#include "remat/Analysis/CostModel.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
#include <sstream>

using namespace mlir;
using remat::CheckpointOptions;
using remat::CheckpointPlan;
using remat::PlannedValue;

namespace {

class CheckpointTest : public ::testing::Test {
public:
  CheckpointTest() {
    DialectRegistry registry;
    remat::registerCostModelExternalModels(registry);
    context.appendDialectRegistry(registry);
    context
        .loadDialect<remat::RematDialect, func::FuncDialect,
                     arith::ArithDialect, math::MathDialect, scf::SCFDialect>();
    context.allowUnregisteredDialects();
  }

  OwningOpRef<ModuleOp> parse(StringRef source) {
    return parseSourceString<ModuleOp>(source, &context);
  }

  static func::FuncOp getFunction(ModuleOp module) {
    return *module.getOps<func::FuncOp>().begin();
  }

  /// Returns the top-level op of `function` defining the value named by
  /// `remat.name = name`.
  static Operation *findNamed(func::FuncOp function, StringRef name) {
    for (Operation &op : function.getBody().front())
      if (auto attr = op.getAttrOfType<StringAttr>("remat.name"))
        if (attr.getValue() == name)
          return &op;
    return nullptr;
  }

  /// Runs `passes` on `module` and verifies it, returning false on failure;
  /// remarks are swallowed and errors appended to `errors`.
  bool run(ModuleOp module, function_ref<void(OpPassManager &)> passes,
           std::string *errors = nullptr) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error && errors)
        *errors += diag.str() + "\n";
      return success();
    });
    PassManager pm(&context);
    passes(pm);
    return succeeded(pm.run(module)) && succeeded(verify(module));
  }

  /// Runs -remat-checkpoint, then -remat-verify.
  bool runCheckpoint(ModuleOp module, bool earlyStop,
                     std::string *errors = nullptr) {
    return run(
        module,
        [&](OpPassManager &pm) {
          remat::RematCheckpointPassOptions options;
          options.earlyStop = earlyStop;
          pm.addNestedPass<func::FuncOp>(
              remat::createRematCheckpointPass(options));
          pm.addNestedPass<func::FuncOp>(remat::createRematVerifyPass());
        },
        errors);
  }

  /// Runs CSE, then -remat-verify: clones must survive CSE.
  bool runCseAndVerify(ModuleOp module, std::string *errors = nullptr) {
    return run(
        module,
        [&](OpPassManager &pm) {
          pm.addPass(createCSEPass());
          pm.addNestedPass<func::FuncOp>(remat::createRematVerifyPass());
        },
        errors);
  }

  static std::string print(Operation *op) {
    std::string text;
    llvm::raw_string_ostream os(text);
    op->print(os);
    return text;
  }

  MLIRContext context;
};

/// Forward values the backward region of `function` uses, as a set.
std::set<const void *> getUsedForwardValues(func::FuncOp function) {
  std::set<const void *> used;
  Block &body = function.getBody().front();
  remat::getBackwardOp(function.getBody())->walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (operand.getParentBlock() == &body)
        used.insert(operand.getAsOpaquePointer());
  });
  return used;
}

std::set<const void *> toSet(ArrayRef<Value> values) {
  std::set<const void *> set;
  for (Value value : values)
    set.insert(value.getAsOpaquePointer());
  return set;
}

//===----------------------------------------------------------------------===//
// Hand-written steps
//===----------------------------------------------------------------------===//

constexpr StringLiteral kTwoLayers = R"mlir(
  func.func @step(%x: tensor<4xf32>, %w: tensor<4xf32>, %seed: i64)
      -> (tensor<4xf32>, tensor<4xf32>) {
    %off = arith.constant 0 : i64
    %z = arith.mulf %x, %w {remat.segment = 0 : i64, remat.name = "z"} : tensor<4xf32>
    %a = math.tanh %z {remat.segment = 0 : i64, remat.name = "a"} : tensor<4xf32>
    %u = remat.philox_uniform %seed, %off {remat.segment = 0 : i64, remat.name = "u"} : tensor<4xf32>
    %h = arith.mulf %a, %u {remat.segment = 0 : i64, remat.name = "h"} : tensor<4xf32>
    %t = math.exp %h {remat.segment = 0 : i64, remat.name = "t"} : tensor<4xf32>
    %s = math.sin %h {remat.segment = 1 : i64, remat.policy = "save", remat.name = "s"} : tensor<4xf32>
    %o = "test.opaque"(%s) {remat.segment = 1 : i64, remat.name = "o"} : (tensor<4xf32>) -> tensor<4xf32>
    %c = math.cos %o {remat.segment = 1 : i64, remat.name = "c"} : tensor<4xf32>
    %g = remat.backward {
      %d0 = arith.mulf %c, %s : tensor<4xf32>
      %d1 = arith.mulf %d0, %h : tensor<4xf32>
      %d2 = arith.mulf %d1, %a : tensor<4xf32>
      remat.yield %d2 : tensor<4xf32>
    } : tensor<4xf32>
    return %t, %g : tensor<4xf32>, tensor<4xf32>
  }
)mlir";

TEST_F(CheckpointTest, PlansWithoutTouchingTheIr) {
  OwningOpRef<ModuleOp> module = parse(kTwoLayers);
  ASSERT_TRUE(module);
  func::FuncOp function = getFunction(*module);
  std::string before = print(*module);
  CheckpointPlan plan = CheckpointPlan::compute(function);
  EXPECT_EQ(print(*module), before);

  Operation *z = findNamed(function, "z"), *a = findNamed(function, "a"),
            *u = findNamed(function, "u"), *h = findNamed(function, "h"),
            *s = findNamed(function, "s"), *o = findNamed(function, "o"),
            *c = findNamed(function, "c");
  ASSERT_TRUE(z && a && u && h && s && o && c);
  Block &backward = remat::getBackwardOp(function.getBody()).getBody().front();
  Operation *d0 = &backward.front();
  Operation *d1 = d0->getNextNode();

  // %c is recomputed from the unclonable %o before %d0; %h (and its slice
  // %z, %a, %u) before %d1, where %a's clone is made too and reused by %d2.
  ASSERT_EQ(plan.getClones().size(), 5u);
  EXPECT_EQ(plan.getClones()[0].original, c);
  EXPECT_EQ(plan.getClones()[0].insertBefore, d0);
  SmallVector<Operation *> rest;
  for (const remat::PlannedClone &clone : plan.getClones().drop_front()) {
    EXPECT_EQ(clone.insertBefore, d1);
    EXPECT_EQ(clone.level, 0u);
    rest.push_back(clone.original);
  }
  EXPECT_EQ(rest, SmallVector<Operation *>({z, a, u, h}));
  EXPECT_EQ(plan.getRecomputedOps(), ArrayRef<Operation *>({z, a, u, h, c}));

  // One barrier per insertion point: {%o} before %d0, {%x, %w, %seed, %off}
  // before %d1.
  ASSERT_EQ(plan.getBarriers().size(), 2u);
  EXPECT_EQ(plan.getBarriers()[0].insertBefore, d0);
  ASSERT_EQ(plan.getBarriers()[0].inputs.size(), 1u);
  EXPECT_EQ(plan.getBarriers()[0].inputs[0],
            PlannedValue::forward(o->getResult(0)));
  EXPECT_EQ(plan.getBarriers()[1].insertBefore, d1);
  EXPECT_EQ(plan.getBarriers()[1].inputs.size(), 4u);

  // %c, %h and %a uses are redirected; %s (save) is read directly.
  ASSERT_EQ(plan.getUses().size(), 3u);
  EXPECT_EQ(plan.getUses()[0].value, PlannedValue::clone(0, 0));
  EXPECT_EQ(plan.getUses()[1].value, PlannedValue::clone(4, 0));
  EXPECT_EQ(plan.getUses()[2].value, PlannedValue::clone(2, 0));

  Value off = function.getBody().front().front().getResult(0);
  SmallVector<Value> expectedSaved = {
      function.getArgument(0), function.getArgument(1),
      function.getArgument(2), off,
      s->getResult(0),         o->getResult(0)};
  EXPECT_EQ(plan.getSavedValues(), ArrayRef<Value>(expectedSaved));

  ASSERT_EQ(plan.getUnclonableOps().size(), 1u);
  EXPECT_EQ(plan.getUnclonableOps()[0].op, o);
  EXPECT_EQ(plan.getUnclonableOps()[0].reason,
            "it is unregistered, so its side effects are unknown");
  EXPECT_TRUE(plan.getStatefulRandomOps().empty());

  // The pass does what the plan says.
  ASSERT_TRUE(runCheckpoint(*module, /*earlyStop=*/true));
  EXPECT_EQ(getUsedForwardValues(function), toSet(expectedSaved));
  EXPECT_TRUE(CheckpointPlan::compute(function).empty());
}

TEST_F(CheckpointTest, ReentrantPlanClonesWholeSegments) {
  OwningOpRef<ModuleOp> module = parse(kTwoLayers);
  ASSERT_TRUE(module);
  func::FuncOp function = getFunction(*module);
  CheckpointOptions options;
  options.earlyStop = false;
  CheckpointPlan plan = CheckpointPlan::compute(function, options);
  // Segment 1: %c (the only clonable op besides the saved %s and the
  // unclonable %o); segment 0: all five ops, %t included.
  ASSERT_EQ(plan.getClones().size(), 6u);
  EXPECT_EQ(plan.getClones()[5].original, findNamed(function, "t"));
}

TEST_F(CheckpointTest, ReportsStatefulRandomOps) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
      %u = remat.rng_uniform {remat.segment = 0 : i64} : tensor<4xf32>
      %v = remat.rng_uniform {remat.segment = 0 : i64, remat.policy = "save"} : tensor<4xf32>
      %s = remat.rng_seed {remat.segment = 0 : i64}
      %g = remat.backward {
        %d = arith.mulf %u, %v : tensor<4xf32>
        remat.yield %d : tensor<4xf32>
      } : tensor<4xf32>
      return %g : tensor<4xf32>
    }
  )mlir");
  ASSERT_TRUE(module);
  func::FuncOp function = getFunction(*module);
  CheckpointPlan plan = CheckpointPlan::compute(function);
  ASSERT_EQ(plan.getStatefulRandomOps().size(), 1u);
  EXPECT_EQ(plan.getStatefulRandomOps()[0],
            &function.getBody().front().front());
  ASSERT_EQ(plan.getUnclonableOps().size(), 1u);
  EXPECT_EQ(plan.getUnclonableOps()[0].reason,
            "it has a read effect on 'remat::RngState'");
  EXPECT_TRUE(plan.empty());

  std::string errors;
  EXPECT_FALSE(runCheckpoint(*module, /*earlyStop=*/true, &errors));
  EXPECT_NE(errors.find("run -remat-thread-rng first"), std::string::npos)
      << errors;
}

TEST_F(CheckpointTest, NestedSegmentsRecomputeInnerValuesPerUse) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @step(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %s = math.sin %x {remat.segment = 0 : i64, remat.name = "s"} : tensor<4xf32>
      %a = math.tanh %s {remat.segment = [0, 1], remat.name = "a"} : tensor<4xf32>
      %b = math.exp %a {remat.segment = [0, 1], remat.name = "b"} : tensor<4xf32>
      %c = math.cos %b {remat.segment = 0 : i64, remat.name = "c"} : tensor<4xf32>
      %g = remat.backward {
        %d0 = arith.mulf %c, %c : tensor<4xf32>
        %d1 = arith.mulf %d0, %b : tensor<4xf32>
        remat.yield %d1 : tensor<4xf32>
      } : tensor<4xf32>
      return %c, %g : tensor<4xf32>, tensor<4xf32>
    }
  )mlir");
  ASSERT_TRUE(module);
  func::FuncOp function = getFunction(*module);
  CheckpointPlan plan = CheckpointPlan::compute(function);
  // Level 0 before %d0: %s, %a, %b, %c; level 1 before %d1: %a, %b from a
  // barrier on the level-0 clone of %s.
  ASSERT_EQ(plan.getClones().size(), 6u);
  EXPECT_EQ(plan.getClones()[4].level, 1u);
  EXPECT_EQ(plan.getClones()[4].original, findNamed(function, "a"));
  EXPECT_EQ(plan.getClones()[5].original, findNamed(function, "b"));
  ASSERT_EQ(plan.getBarriers().size(), 2u);
  EXPECT_EQ(plan.getBarriers()[1].level, 1u);
  ASSERT_EQ(plan.getBarriers()[1].inputs.size(), 1u);
  EXPECT_EQ(plan.getBarriers()[1].inputs[0], PlannedValue::clone(0, 0));
  EXPECT_EQ(plan.getUses()[2].value, PlannedValue::clone(5, 0));
  EXPECT_EQ(plan.getSavedValues(), ArrayRef<Value>({function.getArgument(0)}));
  ASSERT_TRUE(runCheckpoint(*module, /*earlyStop=*/true));
}

//===----------------------------------------------------------------------===//
// Random steps
//===----------------------------------------------------------------------===//

/// Generates a random training step: elementwise forward ops on tensor<4xf32>
/// (some in regions, some random, some opaque), random nested segment marks
/// and policies, and backward ops using random forward values, some of them
/// from inside a region.
std::string generateStep(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };

  size_t numArgs = 1 + pick(3);
  size_t numForward = 2 + pick(24);
  size_t numBackward = 1 + pick(10);
  size_t numSegments = 1 + pick(3);

  std::ostringstream os;
  std::vector<std::string> forward;
  os << "func.func @step(";
  for (size_t i = 0; i < numArgs; ++i) {
    forward.push_back("%arg" + std::to_string(i));
    os << forward.back() << ": tensor<4xf32>, ";
  }
  os << "%seed: i64) -> (";
  std::vector<std::string> results;

  std::ostringstream body;
  auto anyForward = [&] { return forward[pick(forward.size())]; };
  auto attrs = [&]() -> std::string {
    if (!chance(0.7))
      return "";
    std::string path = std::to_string(pick(numSegments));
    double nest = std::uniform_real_distribution<double>(0, 1)(rng);
    if (nest < 0.3)
      path = "[" + path + ", " + std::to_string(pick(2)) +
             (nest < 0.1 ? ", " + std::to_string(pick(2)) : "") + "]";
    else
      path += " : i64";
    std::string text = "remat.segment = " + path;
    if (chance(0.1))
      text += ", remat.policy = \"save\"";
    return text;
  };
  static const char *unary[] = {"math.tanh", "math.exp", "math.sin"};
  static const char *binary[] = {"arith.addf", "arith.mulf", "arith.subf"};
  for (size_t i = 0; i < numForward; ++i) {
    std::string name = "%v" + std::to_string(i);
    std::string attr = attrs();
    std::string attrDict = attr.empty() ? "" : " {" + attr + "}";
    size_t kind = pick(100);
    if (kind < 30) {
      body << name << " = " << unary[pick(3)] << " " << anyForward() << attrDict
           << " : tensor<4xf32>\n";
    } else if (kind < 75) {
      body << name << " = " << binary[pick(3)] << " " << anyForward() << ", "
           << anyForward() << attrDict << " : tensor<4xf32>\n";
    } else if (kind < 81) {
      body << name << " = arith.constant" << attrDict << " dense<1.5> "
           << ": tensor<4xf32>\n";
    } else if (kind < 88) {
      std::string offsetAttr = chance(0.5) ? attrDict : "";
      body << name << "_off = arith.constant" << offsetAttr << " " << 4 * i
           << " : i64\n";
      body << name << " = remat.philox_uniform %seed, " << name << "_off"
           << attrDict << " : tensor<4xf32>\n";
    } else if (kind < 93) {
      body << name << " = \"test.opaque\"(" << anyForward() << ")" << attrDict
           << " : (tensor<4xf32>) -> tensor<4xf32>\n";
    } else {
      // A region that captures forward values.
      body << name << " = scf.execute_region -> tensor<4xf32> {\n"
           << "  " << name << "_in = arith.mulf " << anyForward() << ", "
           << anyForward() << " : tensor<4xf32>\n"
           << "  scf.yield " << name << "_in : tensor<4xf32>\n}" << attrDict
           << "\n";
    }
    forward.push_back(name);
    results.push_back(name);
  }

  std::vector<std::string> backward;
  body << "%g = remat.backward {\n";
  auto anyValue = [&] {
    if (!backward.empty() && chance(0.4))
      return backward[pick(backward.size())];
    return anyForward();
  };
  for (size_t i = 0; i < numBackward; ++i) {
    std::string name = "%b" + std::to_string(i);
    if (chance(0.15)) {
      body << name << " = scf.execute_region -> tensor<4xf32> {\n"
           << "  " << name << "_in = arith.mulf " << anyValue() << ", "
           << anyValue() << " : tensor<4xf32>\n"
           << "  scf.yield " << name << "_in : tensor<4xf32>\n}\n";
    } else {
      body << name << " = " << binary[pick(3)] << " " << anyValue() << ", "
           << anyValue() << " : tensor<4xf32>\n";
    }
    backward.push_back(name);
  }
  body << "remat.yield " << (chance(0.2) ? anyForward() : backward.back())
       << " : tensor<4xf32>\n} : tensor<4xf32>\n";
  results.push_back("%g");

  for (size_t i = 0; i < results.size(); ++i)
    os << (i ? ", " : "") << "tensor<4xf32>";
  os << ") {\n" << body.str() << "return ";
  for (size_t i = 0; i < results.size(); ++i)
    os << (i ? ", " : "") << results[i];
  os << " : ";
  for (size_t i = 0; i < results.size(); ++i)
    os << (i ? ", " : "") << "tensor<4xf32>";
  os << "\n}\n";
  return os.str();
}

/// The reference notion of a recomputable op: a segment op of the function
/// body that is neither saved by policy nor opaque.
bool isRecomputable(Operation *op, Block &body) {
  return op && op->getBlock() == &body && op->hasAttr("remat.segment") &&
         remat::getPolicy(op) != remat::Policy::Save &&
         op->getName().getStringRef() != "test.opaque";
}

/// The reference definition, independent of the planner: every forward value
/// a backward op uses is saved unless recomputable, and a recomputed value
/// saves the values its recomputation reads from outside its outermost
/// segment: the slice that computes it (early stop) or the whole segment.
/// Nesting does not change the saved set, only what stays live inside the
/// backward region.
std::set<const void *> referenceSaved(func::FuncOp function, bool earlyStop) {
  Block &body = function.getBody().front();
  auto recomputable = [&](Operation *op) { return isRecomputable(op, body); };
  auto segment = [](Operation *op) { return remat::getSegmentPath(op)[0]; };
  auto externalValues = [&](Operation *op) {
    std::vector<Value> values;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (operand.getParentBlock() == &body)
          values.push_back(operand);
    });
    return values;
  };

  std::set<const void *> saved;
  std::set<int64_t> usedSegments;
  remat::getBackwardOp(function.getBody())->walk([&](Operation *user) {
    for (Value value : user->getOperands()) {
      if (value.getParentBlock() != &body)
        continue;
      Operation *def = value.getDefiningOp();
      if (!recomputable(def)) {
        saved.insert(value.getAsOpaquePointer());
        continue;
      }
      usedSegments.insert(segment(def));
      if (!earlyStop)
        continue;
      std::vector<Operation *> slice = {def};
      for (size_t i = 0; i < slice.size(); ++i) {
        for (Value input : externalValues(slice[i])) {
          Operation *producer = input.getDefiningOp();
          if (recomputable(producer) && segment(producer) == segment(def)) {
            if (std::find(slice.begin(), slice.end(), producer) == slice.end())
              slice.push_back(producer);
          } else {
            saved.insert(input.getAsOpaquePointer());
          }
        }
      }
    }
  });
  if (!earlyStop) {
    for (Operation &op : body) {
      if (!recomputable(&op) || !usedSegments.count(segment(&op)))
        continue;
      for (Value input : externalValues(&op)) {
        Operation *producer = input.getDefiningOp();
        if (!recomputable(producer) || segment(producer) != segment(&op))
          saved.insert(input.getAsOpaquePointer());
      }
    }
  }
  return saved;
}

/// Checks invariants of a plan that do not depend on the reference: clones
/// only read earlier clones and barriers of their own point, at most one
/// clone per op and level, and no backward op reads a clone made at an
/// earlier point of an op nested deeper than that clone's level + 1.
void checkPlanInvariants(func::FuncOp function, const CheckpointPlan &plan) {
  Block &backward = remat::getBackwardOp(function.getBody()).getBody().front();
  DenseMap<Operation *, unsigned> point;
  for (auto [index, op] : llvm::enumerate(backward))
    point[&op] = index;

  std::set<std::pair<Operation *, unsigned>> seen;
  for (auto [index, clone] : llvm::enumerate(plan.getClones())) {
    EXPECT_TRUE(seen.insert({clone.original, clone.level}).second)
        << "two clones of one op at level " << clone.level;
    EXPECT_LT(clone.level, remat::getSegmentPath(clone.original).size());
    ASSERT_EQ(clone.sources.size(),
              plan.getExternalValues(clone.original).size());
    for (const PlannedValue &source : clone.sources) {
      if (source.kind == PlannedValue::Kind::Clone) {
        EXPECT_LT(source.index, index);
        EXPECT_EQ(plan.getClones()[source.index].level, clone.level);
      } else {
        ASSERT_EQ(source.kind, PlannedValue::Kind::Barrier);
        const remat::PlannedBarrier &barrier = plan.getBarriers()[source.index];
        EXPECT_EQ(barrier.insertBefore, clone.insertBefore);
        EXPECT_EQ(barrier.level, clone.level);
      }
    }
  }
  for (const remat::PlannedUse &use : plan.getUses()) {
    ASSERT_EQ(use.value.kind, PlannedValue::Kind::Clone);
    const remat::PlannedClone &clone = plan.getClones()[use.value.index];
    EXPECT_LE(point[clone.insertBefore], point[use.consumer]);
    if (point[clone.insertBefore] < point[use.consumer])
      EXPECT_LE(remat::getSegmentPath(clone.original).size(), clone.level + 1)
          << "an inner value stays live past its point";
  }
}

void checkRandomSteps(CheckpointTest &test, MLIRContext &context,
                      bool earlyStop, unsigned numSeeds) {
  auto print = [](Operation *op) { return CheckpointTest::print(op); };
  unsigned numWithClones = 0, numNested = 0, numWithFlops = 0;
  for (unsigned seed = 0; seed < numSeeds; ++seed) {
    std::string source = generateStep(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + source);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    ASSERT_TRUE(module);
    func::FuncOp function = *module->getOps<func::FuncOp>().begin();

    CheckpointOptions options;
    options.earlyStop = earlyStop;
    CheckpointPlan plan = CheckpointPlan::compute(function, options);
    std::set<const void *> planned = toSet(plan.getSavedValues());
    EXPECT_EQ(planned.size(), plan.getSavedValues().size());
    EXPECT_EQ(planned, referenceSaved(function, earlyStop));
    checkPlanInvariants(function, plan);
    numWithClones += !plan.empty();
    numNested += llvm::any_of(
        plan.getClones(), [](const auto &clone) { return clone.level > 0; });

    std::string errors;
    ASSERT_TRUE(test.runCheckpoint(*module, earlyStop, &errors)) << errors;
    // The pass applied the plan: the backward region reads exactly the
    // planned saved values, and a recomputable value only as a segment
    // input, through a barrier.
    EXPECT_EQ(getUsedForwardValues(function), planned);
    // The planners' recompute FLOPs (countRecomputeFlops, the
    // recomputations' cost model alone) are -remat-report's.
    Operation *backward = remat::getBackwardOp(function.getBody());
    int64_t recompute = remat::countStepFlops(backward).recompute;
    EXPECT_EQ(remat::countRecomputeFlops(backward), recompute);
    numWithFlops += recompute > 0;
    Block &body = function.getBody().front();
    auto checkNoDirectReads = [&] {
      remat::getBackwardOp(function.getBody())->walk([&](Operation *user) {
        if (isa<remat::BarrierOp>(user))
          return;
        for (Value operand : user->getOperands())
          if (operand.getParentBlock() == &body)
            EXPECT_FALSE(isRecomputable(operand.getDefiningOp(), body))
                << "a recomputable value is read directly by " << print(user);
      });
    };
    checkNoDirectReads();

    // A second run changes nothing.
    std::string once = print(*module);
    ASSERT_TRUE(test.runCheckpoint(*module, earlyStop));
    EXPECT_EQ(print(*module), once);

    // Clones survive CSE: none is merged into its original, which would
    // make the backward region read a recomputable value directly.
    EXPECT_TRUE(test.runCseAndVerify(*module, &errors)) << errors;
    checkNoDirectReads();
  }
  // The generator exercises what it should.
  std::printf("%u of %u steps recompute values, %u at nested levels\n",
              numWithClones, numSeeds, numNested);
  EXPECT_GT(numWithClones, numSeeds / 2);
  EXPECT_GT(numWithFlops, numSeeds / 2);
  EXPECT_GT(numNested, numSeeds / 20);
}

TEST_F(CheckpointTest, RandomStepsEarlyStop) {
  checkRandomSteps(*this, context, /*earlyStop=*/true, 1000);
}

TEST_F(CheckpointTest, RandomStepsReentrant) {
  checkRandomSteps(*this, context, /*earlyStop=*/false, 1000);
}

} // namespace
