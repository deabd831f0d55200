//===- PlannerTest.cpp - Budget planner against brute force ---------------===//
//
// Checks the budget planner of -remat-mark on random chains and DAGs of up
// to 12 forward ops against a brute force that runs the real
// -remat-checkpoint pass on every subset of recomputed ops and measures the
// memory profile: same optimum at every budget, peaks within budget, more
// budget never more recompute. The ILP (without the heuristic pool) must
// reach the same optimum and prove it; the heuristic mode (forced on the
// same graphs) must stay feasible and monotone, and its lower bound never
// exceed the optimum; its gap is measured and printed. Up to 6 ops the
// brute force also runs every nested plan through the pass; on chains the
// chain dynamic program alone must be exact, its model the measurement.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/Planner.h"
#include "remat/Analysis/CostModel.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"
#include "remat/Planning/MemoryProfile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

#include "TestTrials.h"

#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace mlir;
using namespace remat;

namespace {

/// A random step of `n` forward ops: elementwise ops (1 FLOP per element)
/// on tensors of 4 to 32 elements, slices (0 FLOPs, fewer bytes) and
/// concatenations (more bytes). In a chain each op reads the op before it;
/// in a DAG any earlier value. A `strict` chain's binary ops read the op
/// before twice, and some of its ops change precision (f32 to f16 and
/// back), which elementwise fusion crosses but in-place writes do not. The
/// backward region reads a random nonempty subset of the forward values, in
/// reverse order, as a backward pass does.
std::string randomStep(std::mt19937 &rng, int n, bool chain,
                       bool strict = false) {
  auto pick = [&](int bound) {
    return std::uniform_int_distribution<int>(0, bound - 1)(rng);
  };
  auto type = [](int w, bool half = false) {
    return "tensor<" + std::to_string(w) + (half ? "xf16>" : "xf32>");
  };
  struct Value {
    std::string name;
    int width;
    bool half = false;
  };
  std::vector<Value> values = {{"%x", 16}};
  std::ostringstream os;
  os << "func.func @step(%x: tensor<16xf32>) -> tensor<16xf32> {\n";
  for (int i = 0; i < n; ++i) {
    std::string name = "%v" + std::to_string(i);
    auto [x, w, half] = chain ? values.back() : values[pick(values.size())];
    int kind = pick(6);
    if (kind == 4 && w > 4) {
      int slice = w / 2;
      os << "  " << name << " = tensor.extract_slice " << x << "[0] [" << slice
         << "] [1] : " << type(w, half) << " to " << type(slice, half) << "\n";
      values.push_back({name, slice, half});
    } else if (kind == 5 && w < 32) {
      os << "  " << name << " = tensor.concat dim(0) " << x << ", " << x
         << " : (" << type(w, half) << ", " << type(w, half) << ") -> "
         << type(2 * w, half) << "\n";
      values.push_back({name, 2 * w, half});
    } else if (strict && kind == 3 && pick(2) == 0) {
      os << "  " << name << " = " << (half ? "arith.extf " : "arith.truncf ")
         << x << " : " << type(w, half) << " to " << type(w, !half) << "\n";
      values.push_back({name, w, !half});
    } else {
      static const char *unary[] = {"math.tanh", "math.exp"};
      static const char *binary[] = {"arith.mulf", "arith.addf"};
      kind %= 4;
      std::vector<std::string> same;
      for (const Value &other : values)
        if (other.width == w && other.half == half &&
            (!strict || other.name == x))
          same.push_back(other.name);
      if (kind < 2)
        os << "  " << name << " = " << unary[kind] << " " << x << " : "
           << type(w, half) << "\n";
      else
        os << "  " << name << " = " << binary[kind - 2] << " " << x << ", "
           << same[pick(same.size())] << " : " << type(w, half) << "\n";
      values.push_back({name, w, half});
    }
  }
  os << "  %g = remat.backward {\n";
  std::vector<int> used;
  for (int i = 1; i <= n; ++i)
    if (pick(3) != 0)
      used.push_back(i);
  if (used.empty())
    used.push_back(n);
  std::string acc = "%x";
  for (auto it = used.rbegin(); it != used.rend(); ++it) {
    auto [v, w, half] = values[*it];
    std::string square = "%s" + std::to_string(*it);
    os << "    " << square << " = arith.mulf " << v << ", " << v << " : "
       << type(w, half) << "\n";
    if (half) {
      std::string wide = "%e" + std::to_string(*it);
      os << "    " << wide << " = arith.extf " << square << " : "
         << type(w, true) << " to " << type(w) << "\n";
      square = wide;
    }
    std::string reduced = square;
    if (w != 16) {
      // Any 16 elements of it, so every use is consumed the same way.
      reduced = "%r" + std::to_string(*it);
      if (w > 16)
        os << "    " << reduced << " = tensor.extract_slice " << square
           << "[0] [16] [1] : " << type(w) << " to " << type(16) << "\n";
      else {
        std::string operands = square, types = type(w);
        for (int k = 1; k < 16 / w; ++k) {
          operands += ", " + square;
          types += ", " + type(w);
        }
        os << "    " << reduced << " = tensor.concat dim(0) " << operands
           << " : (" << types << ") -> " << type(16) << "\n";
      }
    }
    std::string next = "%a" + std::to_string(*it);
    os << "    " << next << " = arith.addf " << acc << ", " << reduced << " : "
       << type(16) << "\n";
    acc = next;
  }
  os << "    remat.yield " << acc << " : tensor<16xf32>\n";
  os << "  } : tensor<16xf32>\n  return %g : tensor<16xf32>\n}\n";
  return os.str();
}

/// A plan's segment paths, for failure messages.
std::string describe(ArrayRef<SegmentPath> paths) {
  std::string text;
  for (const SegmentPath &path : paths) {
    text += "[";
    for (auto [index, id] : llvm::enumerate(path))
      text += (index ? ", " : "") + std::to_string(id);
    text += "] ";
  }
  return text;
}

/// A chain model's stages, for failure messages.
std::string describe(ArrayRef<ChainStage> stages) {
  std::ostringstream os;
  for (const ChainStage &stage : stages)
    os << "  stage: " << stage.flops << " FLOPs, out " << stage.outBytes
       << (stage.outRead ? " read" : "") << (stage.fusedOut ? " fused" : "")
       << (stage.inPlace ? ", in place" : "") << ", kept " << stage.keptBytes
       << ", transient " << stage.transientBytes << ", backward "
       << stage.backwardBytes << ", after " << stage.afterBytes << "\n";
  return os.str();
}

/// The fewest recompute FLOPs seen at each exact peak.
using BestByPeak = std::map<int64_t, int64_t>;

void record(BestByPeak &best, StepCost cost) {
  auto [it, inserted] = best.try_emplace(cost.peakBytes, cost.recomputeFlops);
  if (!inserted)
    it->second = std::min(it->second, cost.recomputeFlops);
}

/// The budget planner with the chain dynamic program's plans alone: no
/// enumeration, no heuristic pool, no ILP.
BudgetOptions chainProgramOnly() {
  BudgetOptions options;
  options.exactLimit = 0;
  options.nestedLimit = 0;
  options.heuristicPool = false;
  options.ilpLimit = 0;
  return options;
}

/// Empty if the chain model's cost of `paths` is `measured`; else what
/// differs, with the plan and the model.
std::string modelMismatch(ArrayRef<ChainStage> stages,
                          ArrayRef<SegmentPath> paths, StepCost measured) {
  std::optional<ChainPlan> model = evaluateChainPlan(stages, paths);
  if (model && model->peakBytes == measured.peakBytes &&
      model->recomputeFlops == measured.recomputeFlops)
    return "";
  std::ostringstream os;
  os << "plan " << describe(paths) << ": model ";
  if (model)
    os << model->peakBytes << " bytes, " << model->recomputeFlops << " FLOPs";
  else
    os << "none";
  os << "; measured " << measured.peakBytes << " bytes, "
     << measured.recomputeFlops << " FLOPs\n"
     << describe(stages);
  return os.str();
}

class PlannerTest : public ::testing::Test {
protected:
  PlannerTest() {
    DialectRegistry registry;
    registry.insert<RematDialect, arith::ArithDialect, func::FuncDialect,
                    linalg::LinalgDialect, math::MathDialect,
                    tensor::TensorDialect>();
    registerCostModelExternalModels(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `source` into `module` and builds the marking problem of its
  /// function; fails if either fails.
  FailureOr<MarkingProblem> parseProblem(StringRef source,
                                         OwningOpRef<ModuleOp> &module) {
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return failure();
    return MarkingProblem::build(*module->getOps<func::FuncOp>().begin());
  }

  /// A random chain of `n` ops whose every op reads only the op before
  /// (randomStep, strict), its marking problem and its stages.
  struct Chain {
    std::string source;
    OwningOpRef<ModuleOp> module;
    FailureOr<MarkingProblem> problem = failure();
    std::vector<ChainStage> stages;
  };
  Chain makeChain(std::mt19937 &rng, int n) {
    Chain chain;
    chain.source = randomStep(rng, n, /*chain=*/true, /*strict=*/true);
    chain.problem = parseProblem(chain.source, chain.module);
    SmallVector<size_t> firstOp;
    if (succeeded(chain.problem))
      chain.stages = chain.problem->getChain(64, firstOp);
    return chain;
  }

  /// The reference cost of recomputing the forward ops in `mask` (one
  /// segment): the real -remat-checkpoint pass on a copy, then the profile.
  StepCost reference(ModuleOp module, uint64_t mask) {
    Marking marking;
    auto function = *module.getOps<func::FuncOp>().begin();
    for (Operation &op : function.getBody().front()) {
      if (isa<BackwardOp>(op))
        break;
      marking.push_back(mask >> marking.size() & 1 ? SegmentPath{0}
                                                   : SegmentPath{});
    }
    return reference(module, marking);
  }

  /// The same for a segment path per forward op (empty: saved).
  StepCost reference(ModuleOp module, ArrayRef<SegmentPath> marking) {
    OwningOpRef<ModuleOp> copy = module.clone();
    auto function = *copy->getOps<func::FuncOp>().begin();
    unsigned index = 0;
    for (Operation &op : function.getBody().front()) {
      if (isa<BackwardOp>(op))
        break;
      if (!marking[index++].empty())
        setSegmentPath(&op, marking[index - 1]);
    }
    PassManager pm(&context);
    pm.addNestedPass<func::FuncOp>(createRematCheckpointPass());
    EXPECT_TRUE(succeeded(pm.run(*copy)));
    StepCost cost;
    cost.peakBytes = computeMemoryProfile(function)->peakBytes;
    getBackwardOp(function.getBody()).getBody().walk([&](Operation *op) {
      if (op->hasAttr(RematDialect::kCloneOfAttrName))
        cost.recomputeFlops += getOpFlops(op).value_or(0);
    });
    return cost;
  }

  MLIRContext context;
};

TEST_F(PlannerTest, BudgetEqualsBruteForceAndIsMonotone) {
  constexpr int kTrials = remat::test::scaledTrials(240);
  std::mt19937 rng(2016);
  int cases = 0, budgets = 0, heuristicOptimal = 0, heuristicAnswered = 0;
  double worstGap = 0;
  int ilpBudgets = 0, ilpClosed = 0, ilpEvaluations = 0, boundTight = 0;
  int64_t boundSum = 0, optimumSum = 0;
  int chainPlans = 0, chainAgree = 0, belowOneSegment = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    bool chain = trial % 2 == 0;
    int n = 1 + trial / 2 % 12;
    std::string source = randomStep(rng, n, chain);
    OwningOpRef<ModuleOp> module;
    FailureOr<MarkingProblem> problem = parseProblem(source, module);
    ASSERT_TRUE(succeeded(problem)) << source;
    // Every forward op here is a decision: no constants, no empties.
    ASSERT_EQ(problem->size(), static_cast<size_t>(n)) << source;

    std::vector<StepCost> table;
    for (uint64_t mask = 0; mask < (uint64_t(1) << n); ++mask)
      table.push_back(reference(*module, mask));
    std::set<int64_t> peaks;
    for (const StepCost &cost : table)
      peaks.insert(cost.peakBytes);

    // How often the chain model predicts the measured cost of its own plans.
    if (chain) {
      SmallVector<size_t> firstOp;
      std::vector<ChainStage> stages = problem->getChain(64, firstOp);
      for (const ChainPlan &plan : ChainPlanner(stages).getFront(64)) {
        StepCost cost =
            problem->evaluate(Marking(plan.paths.begin(), plan.paths.end()));
        EXPECT_EQ(cost.recomputeFlops, plan.recomputeFlops) << source;
        ++chainPlans;
        chainAgree += cost.peakBytes == plan.peakBytes;
      }
    }
    BudgetPlanner exact(*problem);
    // The heuristic mode: the pool, and the ILP limited to its bound.
    BudgetOptions heuristicOptions;
    heuristicOptions.exactLimit = 0;
    heuristicOptions.ilpLimit = 0;
    BudgetPlanner heuristic(*problem, heuristicOptions);
    ASSERT_TRUE(exact.isExact());
    ASSERT_FALSE(heuristic.isExact());
    // The pool also holds the chain planner's plans (nested, several
    // segments), which may peak below every one-segment marking.
    EXPECT_LE(exact.getMinPeak(), *peaks.begin()) << source;
    EXPECT_EQ(exact.getUnmarkedPeak(), table[0].peakBytes) << source;
    EXPECT_FALSE(exact.solve(exact.getMinPeak() - 1)) << source;

    // The ILP alone: the heuristic pool and the chain planner hold
    // multi-segment markings, which the brute force (one segment) does not.
    // Where it closes its gap within its limits it must be optimal; its bound
    // is always proven.
    BudgetOptions ilpOptions;
    ilpOptions.exactLimit = 0;
    ilpOptions.heuristicPool = false;
    ilpOptions.chainPlans = 0;
    ilpOptions.ilpMaxEvaluations = 64;
    ilpOptions.ilpTimeLimitMs = 200;
    BudgetPlanner ilp(*problem, ilpOptions);
    EXPECT_LE(heuristic.getPeakLowerBound(), *peaks.begin()) << source;

    int64_t previousExact = std::numeric_limits<int64_t>::max();
    int64_t previousHeuristic = std::numeric_limits<int64_t>::max();
    for (int64_t budget : peaks) {
      int64_t optimum = std::numeric_limits<int64_t>::max();
      for (const StepCost &cost : table)
        if (cost.peakBytes <= budget)
          optimum = std::min(optimum, cost.recomputeFlops);
      std::optional<MeasuredMarking> plan = exact.solve(budget);
      ASSERT_TRUE(plan) << source << "budget " << budget;
      EXPECT_LE(plan->cost.recomputeFlops, optimum)
          << source << "budget " << budget;
      belowOneSegment += plan->cost.recomputeFlops < optimum;
      EXPECT_EQ(exact.getLowerBound(budget), plan->cost.recomputeFlops);
      // A one-segment plan's own measurement through the pass fits the
      // budget; any plan's measurement by the evaluator does.
      EXPECT_LE(plan->cost.peakBytes, budget) << source;
      uint64_t mask = 0;
      bool oneSegment = true;
      for (auto [index, path] : llvm::enumerate(plan->marking)) {
        if (!path.empty())
          mask |= uint64_t(1) << index;
        oneSegment &= path.empty() || path == SegmentPath{0};
      }
      if (oneSegment)
        EXPECT_EQ(table[mask].peakBytes, plan->cost.peakBytes) << source;
      EXPECT_LE(plan->cost.recomputeFlops, previousExact) << source;
      previousExact = plan->cost.recomputeFlops;

      if (hasIlpSolver()) {
        const BudgetAnswer &solved = ilp.answer(budget);
        EXPECT_LE(solved.lowerBound, optimum) << source << "budget " << budget;
        if (solved.best) {
          EXPECT_LE(solved.best->cost.peakBytes, budget);
          EXPECT_GE(solved.best->cost.recomputeFlops, optimum);
        }
        if (solved.method == BudgetMethod::Ilp ||
            solved.method == BudgetMethod::Bound) {
          ASSERT_TRUE(solved.best) << source << "budget " << budget;
          EXPECT_EQ(solved.best->cost.recomputeFlops, optimum)
              << source << "budget " << budget;
          EXPECT_EQ(solved.lowerBound, optimum);
          ++ilpClosed;
        }
        ilpEvaluations += solved.evaluations;
        ++ilpBudgets;
      }
      // The heuristic mode's bound is proven: never above the optimum.
      const BudgetAnswer &guessed = heuristic.answer(budget);
      EXPECT_LE(guessed.lowerBound, optimum) << source << "budget " << budget;
      if (guessed.best)
        EXPECT_LE(guessed.lowerBound, guessed.best->cost.recomputeFlops);
      boundSum += guessed.lowerBound;
      optimumSum += optimum;
      boundTight += guessed.lowerBound == optimum;

      if (std::optional<MeasuredMarking> guess = heuristic.solve(budget)) {
        ++heuristicAnswered;
        EXPECT_LE(guess->cost.peakBytes, budget);
        EXPECT_LE(guess->cost.recomputeFlops, previousHeuristic);
        previousHeuristic = guess->cost.recomputeFlops;
        // At or below the one-segment optimum (the chain planner's plans).
        heuristicOptimal += guess->cost.recomputeFlops <= optimum;
        if (optimum > 0)
          worstGap = std::max(worstGap,
                              double(guess->cost.recomputeFlops) / optimum - 1);
      }
      ++budgets;
    }
    ++cases;
  }
  std::printf("budget planner: %d graphs (chains and DAGs of 1 to 12 ops), "
              "%d budgets, exact: at or below brute force on all; heuristic "
              "answered "
              "%d, at or below the optimum on %d, worst gap %.0f%%\n",
              cases, budgets, heuristicAnswered, heuristicOptimal,
              worstGap * 100);
  std::printf("ILP (%s): closed its gap on %d of %d budgets, each equal to "
              "brute force, %d markings measured; heuristic mode's lower "
              "bound: tight on %d of %d budgets, sum of bounds %lld of the "
              "optima's %lld\n",
              hasIlpSolver() ? "GLPK" : "not built", ilpClosed, ilpBudgets,
              ilpEvaluations, boundTight, budgets,
              static_cast<long long>(boundSum),
              static_cast<long long>(optimumSum));
  std::printf("chain dynamic program: its plans beat every one-segment "
              "marking at %d budgets; the chain model predicts the measured "
              "peak of %d of its %d plans on the chains\n",
              belowOneSegment, chainAgree, chainPlans);
  EXPECT_EQ(cases, kTrials);
}

TEST_F(PlannerTest, NestedEqualsBruteForceOnSmallGraphs) {
  constexpr int kTrials = remat::test::scaledTrials(54);
  std::mt19937 rng(1999);
  int cases = 0, budgets = 0, nestedWins = 0, plans = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    // Chains whose ops read only the op before, chains whose binary ops
    // may also read an earlier value, and DAGs.
    int shape = trial % 3;
    int n = 1 + trial / 3 % 6;
    std::string source =
        randomStep(rng, n, /*chain=*/shape < 2, /*strict=*/shape == 0);
    OwningOpRef<ModuleOp> module;
    FailureOr<MarkingProblem> problem = parseProblem(source, module);
    ASSERT_TRUE(succeeded(problem)) << source;
    ASSERT_EQ(problem->size(), static_cast<size_t>(n)) << source;
    // The brute force: every one-segment subset and every nested plan of
    // contiguous segments down to three levels, through the real pass.
    BestByPeak oneSegment, nested;
    for (uint64_t mask = 0; mask < (uint64_t(1) << n); ++mask) {
      Marking marking(n);
      for (int i = 0; i < n; ++i)
        if (mask >> i & 1)
          marking[i] = {0};
      record(oneSegment, reference(*module, marking));
    }
    forEachNestedPlan(n, /*maxDepth=*/n, [&](ArrayRef<SegmentPath> paths) {
      StepCost cost = reference(*module, paths);
      record(nested, cost);
      ++plans;
    });

    BudgetPlanner planner(*problem);
    ASSERT_TRUE(planner.isExact());
    BestByPeak all = oneSegment;
    for (auto [peak, flops] : nested)
      record(all, {peak, flops});
    EXPECT_EQ(planner.getMinPeak(), all.begin()->first) << source;
    EXPECT_FALSE(planner.solve(all.begin()->first - 1)) << source;
    int64_t optimum = std::numeric_limits<int64_t>::max();
    int64_t oneSegmentOptimum = optimum;
    auto oneIt = oneSegment.begin();
    for (auto [budget, flops] : all) {
      optimum = std::min(optimum, flops);
      for (; oneIt != oneSegment.end() && oneIt->first <= budget; ++oneIt)
        oneSegmentOptimum = std::min(oneSegmentOptimum, oneIt->second);
      std::optional<MeasuredMarking> plan = planner.solve(budget);
      ASSERT_TRUE(plan) << source << "budget " << budget;
      EXPECT_EQ(plan->cost.recomputeFlops, optimum)
          << source << "budget " << budget;
      EXPECT_LE(plan->cost.peakBytes, budget) << source;
      // The planner's own measurement is the pass's.
      StepCost measured = reference(*module, plan->marking);
      EXPECT_EQ(measured.peakBytes, plan->cost.peakBytes) << source;
      EXPECT_EQ(measured.recomputeFlops, plan->cost.recomputeFlops) << source;
      nestedWins += optimum < oneSegmentOptimum;
      ++budgets;
    }
    ++cases;
  }
  std::printf("nested plans: %d graphs of 1 to 6 ops, %d plans through the "
              "pass, %d budgets: budget planner = brute force on all; "
              "nesting beats every one-segment marking at %d budgets\n",
              cases, plans, budgets, nestedWins);
  EXPECT_EQ(cases, kTrials);
}

TEST_F(PlannerTest, ChainProgramIsExactOnChains) {
  constexpr int kTrials = remat::test::scaledTrials(90);
  // Chains whose every op reads only the op before: the chain model must be
  // the measured profile on every nested plan at any depth, and the chain
  // dynamic program alone (no enumeration, no pool, no ILP), each plan
  // measured, must reach the brute force's optimum at every budget. The
  // measurement is the planner's evaluator, which the test above checks
  // against the pass.
  std::mt19937 rng(2000);
  int cases = 0, budgets = 0, exact = 0, plans = 0, modelAgrees = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    int n = 1 + trial % 6;
    Chain chain = makeChain(rng, n);
    ASSERT_TRUE(succeeded(chain.problem)) << chain.source;
    ASSERT_EQ(chain.stages.size(), static_cast<size_t>(n)) << chain.source;

    BestByPeak best;
    forEachNestedPlan(n, /*maxDepth=*/n, [&](ArrayRef<SegmentPath> paths) {
      StepCost cost = chain.problem->evaluate(paths);
      record(best, cost);
      // The model's account of the same plan; the first disagreement in
      // full, the count says how many.
      std::string mismatch = modelMismatch(chain.stages, paths, cost);
      EXPECT_TRUE(mismatch.empty() || modelAgrees < plans)
          << chain.source << mismatch;
      modelAgrees += mismatch.empty();
      ++plans;
    });

    BudgetPlanner planner(*chain.problem, chainProgramOnly());
    int64_t optimum = std::numeric_limits<int64_t>::max();
    for (auto [budget, flops] : best) {
      optimum = std::min(optimum, flops);
      std::optional<MeasuredMarking> plan = planner.solve(budget);
      EXPECT_TRUE(plan && plan->cost.recomputeFlops == optimum)
          << chain.source << "budget " << budget << " optimum " << optimum;
      exact += plan && plan->cost.recomputeFlops == optimum;
      ++budgets;
    }
    ++cases;
  }
  std::printf("chain dynamic program alone: %d chains of 1 to 6 ops, %d "
              "budgets, equal to the brute force over %d nested plans at %d; "
              "the chain model predicts the measured peak of %d plans\n",
              cases, budgets, plans, exact, modelAgrees);
  EXPECT_EQ(modelAgrees, plans);
  EXPECT_EQ(exact, budgets);
}

/// A random well-nested plan of the stages [lo, hi] at the level of
/// `prefix` (the rules of forEachNestedPlan: a nested segment never spans
/// its whole parent below the forward level).
void randomPlan(std::mt19937 &rng, unsigned lo, unsigned hi, SegmentPath prefix,
                bool whole, int64_t &nextId, std::vector<SegmentPath> &paths) {
  auto pick = [&](unsigned bound) {
    return std::uniform_int_distribution<unsigned>(0, bound - 1)(rng);
  };
  for (unsigned s = lo; s <= hi;) {
    unsigned e = s + pick(hi - s + 1);
    if (pick(3) != 0 || (!whole && s == lo && e == hi)) {
      paths[s++] = prefix;
      continue;
    }
    SegmentPath inner = prefix;
    inner.push_back(nextId++);
    randomPlan(rng, s, e, inner, /*whole=*/false, nextId, paths);
    s = e + 1;
  }
}

TEST_F(PlannerTest, ChainModelIsTheMeasurementOnLongChains) {
  // The same chains at 7 to 12 ops, where no brute force over nested plans
  // is affordable: the model must equal the measurement on random nested
  // plans and on the program's own plans. The program being exact in its
  // model (ChainPlannerTest), it is then exact on these chains too; its
  // answer is checked at or below every sampled plan.
  std::mt19937 rng(2001);
  int plans = 0, budgets = 0, below = 0;
  for (int trial = 0; trial < 36; ++trial) {
    int n = 7 + trial % 6;
    Chain chain = makeChain(rng, n);
    ASSERT_TRUE(succeeded(chain.problem)) << chain.source;
    ASSERT_EQ(chain.stages.size(), static_cast<size_t>(n)) << chain.source;
    auto check = [&](ArrayRef<SegmentPath> paths) {
      StepCost cost = chain.problem->evaluate(paths);
      EXPECT_EQ(modelMismatch(chain.stages, paths, cost), "") << chain.source;
      ++plans;
      return cost;
    };
    BestByPeak best;
    for (int sample = 0; sample < 600; ++sample) {
      std::vector<SegmentPath> paths(n);
      int64_t nextId = 0;
      randomPlan(rng, 0, n - 1, {}, /*whole=*/true, nextId, paths);
      record(best, check(paths));
    }
    for (const ChainPlan &plan : ChainPlanner(chain.stages).getFront(64))
      check(plan.paths);

    BudgetPlanner planner(*chain.problem, chainProgramOnly());
    int64_t sampled = std::numeric_limits<int64_t>::max();
    for (auto [budget, flops] : best) {
      sampled = std::min(sampled, flops);
      std::optional<MeasuredMarking> plan = planner.solve(budget);
      ASSERT_TRUE(plan) << chain.source << "budget " << budget;
      EXPECT_LE(plan->cost.recomputeFlops, sampled) << chain.source;
      below += plan->cost.recomputeFlops < sampled;
      ++budgets;
    }
  }
  std::printf("chain model on chains of 7 to 12 ops: equal to the "
              "measurement on %d plans (random and the program's); the "
              "program alone at or below the best sampled plan at %d "
              "budgets, below it at %d\n",
              plans, budgets, below);
}

} // namespace

namespace {

TEST_F(PlannerTest, PoolLimitHoldsAndBoundsTheWork) {
  // The limit of the heuristic pool: the documented 1500 up to 1000 ops,
  // never more as the function grows, and its work (markings x ops) at
  // most poolWork until the minimum takes over.
  BudgetOptions options;
  EXPECT_EQ(options.getPoolLimit(1), 1500u);
  EXPECT_EQ(options.getPoolLimit(1000), 1500u);
  EXPECT_EQ(options.getPoolLimit(10000), 150u);
  EXPECT_EQ(options.getPoolLimit(1000000), options.minEvaluations);
  unsigned previous = options.getPoolLimit(1);
  for (size_t ops = 1; ops <= 10000000; ops = ops * 3 / 2 + 1) {
    unsigned limit = options.getPoolLimit(ops);
    EXPECT_LE(limit, previous) << ops;
    EXPECT_LE(limit, options.maxEvaluations) << ops;
    EXPECT_LE(uint64_t(limit) * ops,
              std::max<uint64_t>(options.poolWork,
                                 uint64_t(options.minEvaluations) * ops))
        << ops;
    previous = limit;
  }
  BudgetOptions none;
  none.maxEvaluations = 0;
  EXPECT_EQ(none.getPoolLimit(10), 1u);

  // On DAGs beyond the enumeration, whatever the limit: the planner
  // measures at most that many markings (the unmarked step and the chain
  // program's plans included), each measurement is the evaluator's, every
  // answer's peak is within its budget, and down to 8 markings the pool
  // still holds the other policies' plans (sqrt, everything recomputed).
  std::mt19937 rng(2002);
  int graphs = 0;
  for (int trial = 0; trial < 12; ++trial) {
    std::string source = randomStep(rng, 20 + trial * 3, /*chain=*/false);
    OwningOpRef<ModuleOp> module;
    FailureOr<MarkingProblem> problem = parseProblem(source, module);
    ASSERT_TRUE(succeeded(problem)) << source;
    if (problem->size() <= BudgetOptions().exactLimit)
      continue;
    ++graphs;
    for (unsigned maxEvaluations : {1u, 8u, 40u, 200u}) {
      BudgetOptions limited;
      limited.maxEvaluations = maxEvaluations;
      limited.minEvaluations = 1;
      limited.ilpLimit = 0;
      unsigned limit = limited.getPoolLimit(problem->getNumFunctionOps());
      EXPECT_EQ(limit, maxEvaluations);
      BudgetPlanner planner(*problem, limited);
      ASSERT_GE(planner.getNumEvaluations(), 1u);
      EXPECT_LE(planner.getNumEvaluations(), limit) << source;
      std::set<Marking> pool;
      for (const MeasuredMarking &point : planner.getCandidates()) {
        StepCost cost = problem->evaluate(point.marking);
        EXPECT_EQ(cost.peakBytes, point.cost.peakBytes) << source;
        EXPECT_EQ(cost.recomputeFlops, point.cost.recomputeFlops) << source;
        pool.insert(point.marking);
      }
      if (maxEvaluations >= 8) {
        EXPECT_TRUE(pool.count(planSqrt(*problem))) << source;
        EXPECT_TRUE(pool.count(Marking(problem->size(), SegmentPath{0})))
            << source;
      }
      for (const MeasuredMarking &point : planner.getCandidates()) {
        std::optional<MeasuredMarking> plan =
            planner.solve(point.cost.peakBytes);
        ASSERT_TRUE(plan) << source;
        EXPECT_LE(plan->cost.peakBytes, point.cost.peakBytes) << source;
        EXPECT_LE(plan->cost.recomputeFlops, point.cost.recomputeFlops)
            << source;
      }
    }
  }
  EXPECT_GT(graphs, 6);
}

} // namespace

TEST_F(PlannerTest, ModelsOwnCheckpointsAreAPolicyMarking) {
  // Three forward ops; the exporter marked the first two (segment 0) and
  // nested the second in segment [0, 1], as a model's own checkpoints are.
  constexpr StringLiteral kAnnotated = R"mlir(
    func.func @step(%x: tensor<16xf32>) -> tensor<16xf32> {
      %a = math.tanh %x {remat.segment = 0 : i64} : tensor<16xf32>
      %b = math.exp %a {remat.segment = [0, 1]} : tensor<16xf32>
      %c = arith.mulf %b, %b : tensor<16xf32>
      %g = remat.backward {
        %d = arith.mulf %a, %b : tensor<16xf32>
        %e = arith.addf %d, %c : tensor<16xf32>
        remat.yield %e : tensor<16xf32>
      } : tensor<16xf32>
      return %g : tensor<16xf32>
    }
  )mlir";
  OwningOpRef<ModuleOp> module;
  FailureOr<MarkingProblem> problem = parseProblem(kAnnotated, module);
  ASSERT_TRUE(succeeded(problem));
  ASSERT_EQ(problem->size(), 3u);
  Marking expected = {SegmentPath{0}, SegmentPath{0, 1}, SegmentPath{}};
  EXPECT_EQ(Marking(problem->getAnnotatedMarking()), expected);
  SmallVector<Marking> policies = getPolicyMarkings(*problem);
  EXPECT_TRUE(llvm::is_contained(policies, expected));

  // Without marks there is no such marking: the policies' plans alone.
  std::string plain = kAnnotated.str();
  for (StringRef mark :
       {" {remat.segment = 0 : i64}", " {remat.segment = [0, 1]}"}) {
    size_t at = plain.find(mark);
    ASSERT_NE(at, std::string::npos);
    plain.erase(at, mark.size());
  }
  OwningOpRef<ModuleOp> plainModule;
  FailureOr<MarkingProblem> plainProblem = parseProblem(plain, plainModule);
  ASSERT_TRUE(succeeded(plainProblem));
  EXPECT_TRUE(
      llvm::all_of(plainProblem->getAnnotatedMarking(),
                   [](const SegmentPath &path) { return path.empty(); }));
  EXPECT_EQ(getPolicyMarkings(*plainProblem).size(), policies.size() - 1);
}

TEST_F(PlannerTest, SelectivePlansOfTheModelsSegmentsAreCandidates) {
  // Three layers, each its own segment as a model's per-layer checkpoints
  // are: a matmul (dense: 2 * 64 FLOPs an element, 32 a byte), a tanh and
  // an add (elementwise). The backward reads every tanh and layer output.
  std::string source = R"mlir(
    func.func @step(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>)
        -> tensor<16x64xf32> {
      %f0 = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<16x64xf32>
      %z = linalg.fill ins(%f0 : f32) outs(%e : tensor<16x64xf32>)
          -> tensor<16x64xf32>
  )mlir";
  std::string backward;
  std::string last = "%x";
  for (int layer = 0; layer < 3; ++layer) {
    source += llvm::formatv(R"mlir(
      %h{0} = linalg.matmul {{remat.segment = {0} : i64}
          ins({1}, %w : tensor<16x64xf32>, tensor<64x64xf32>)
          outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
      %t{0} = math.tanh %h{0} {{remat.segment = {0} : i64} : tensor<16x64xf32>
      %y{0} = arith.addf %t{0}, {1} {{remat.segment = {0} : i64}
          : tensor<16x64xf32>
    )mlir",
                            layer, last)
                  .str();
    backward += llvm::formatv(R"mlir(
        %b{0} = arith.mulf %t{0}, %y{0} : tensor<16x64xf32>
    )mlir",
                              layer)
                    .str();
    last = llvm::formatv("%y{0}", layer).str();
  }
  source += R"mlir(
      %g = remat.backward {
  )mlir" + backward +
            R"mlir(
        %s = arith.addf %b0, %b1 : tensor<16x64xf32>
        %r = arith.addf %s, %b2 : tensor<16x64xf32>
        remat.yield %r : tensor<16x64xf32>
      } : tensor<16x64xf32>
      return %g : tensor<16x64xf32>
    }
  )mlir";
  OwningOpRef<ModuleOp> module;
  FailureOr<MarkingProblem> problem = parseProblem(source, module);
  ASSERT_TRUE(succeeded(problem)) << source;
  // The fill, then the layers' ops.
  ASSERT_EQ(problem->size(), 10u);
  SmallVector<bool> dense = findDenseOps(*problem);
  EXPECT_EQ(dense, SmallVector<bool>({false, true, false, false, true, false,
                                      false, true, false, false}));

  // The pool (no enumeration) holds the per-layer plan with every matmul
  // saved, and the plans with the first or the last k layers selective.
  BudgetOptions options;
  options.exactLimit = 0;
  BudgetPlanner planner(*problem, options);
  auto layer = [](int64_t segment, bool selective) {
    return Marking{selective ? SegmentPath{} : SegmentPath{segment},
                   SegmentPath{segment}, SegmentPath{segment}};
  };
  auto plan = [&](bool first, bool second, bool third) {
    Marking marking = {SegmentPath{}};
    bool selective[] = {first, second, third};
    for (int64_t segment = 0; segment < 3; ++segment)
      llvm::append_range(marking, layer(segment, selective[segment]));
    return marking;
  };
  SmallVector<Marking> candidates;
  for (const MeasuredMarking &point : planner.getCandidates())
    candidates.push_back(point.marking);
  for (const Marking &expected :
       {plan(true, true, true), plan(true, false, false),
        plan(true, true, false), plan(false, false, true),
        plan(false, true, true)})
    EXPECT_TRUE(llvm::is_contained(candidates, expected));
}
