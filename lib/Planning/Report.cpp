//===- Report.cpp - Memory and recompute report of training steps ---------===//
//
// This file implements -remat-report: the saved activations, static peak
// memory and recompute FLOPs of every training step, as text or JSON.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/CostModel.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Memory/MemoryPlan.h"
#include "remat/Planning/MemoryProfile.h"
#include "remat/Planning/Passes.h"
#include "remat/Planning/Planner.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

#include <map>

namespace remat {
#define GEN_PASS_DEF_REMATREPORTPASS
#include "remat/Planning/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

static std::string formatLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (isa<FileLineColLoc>(inner))
        return formatLocation(inner);
  if (auto name = dyn_cast<NameLoc>(loc))
    return formatLocation(name.getChildLoc());
  return "unknown";
}

namespace {

/// Figures of one segment (or of the unmarked ops and arguments).
struct SegmentFigures {
  int64_t ops = 0;
  int64_t recomputedOps = 0;
  int64_t recomputeFlops = 0;
  int64_t savedBytes = 0;
  /// Indices into the profile's saved values.
  SmallVector<unsigned> saved;
};

/// The figures of every segment of a step, by segment path (the empty path
/// for unmarked ops and arguments).
class SegmentTable {
public:
  /// The figures of the segment `op` is marked with.
  SegmentFigures &getForOp(Operation *op) {
    // Ops share their uniqued segment attribute: decode each one once.
    Attribute mark = op->getAttr(RematDialect::kSegmentAttrName);
    SegmentFigures *&figures = figuresByMark[mark];
    if (!figures)
      figures = &segments[getSegmentPath(op)];
    return *figures;
  }
  SegmentFigures &getForPath(ArrayRef<int64_t> path) {
    return segments[SmallVector<int64_t, 2>(path)];
  }
  const std::map<SmallVector<int64_t, 2>, SegmentFigures> &getAll() const {
    return segments;
  }

private:
  std::map<SmallVector<int64_t, 2>, SegmentFigures> segments;
  DenseMap<Attribute, SegmentFigures *> figuresByMark;
};

/// Figures of one `scf.for` of the function body's forward ops.
struct LoopFigures {
  Operation *loop = nullptr;
  std::optional<int64_t> tripCount;
  int64_t forwardFlops = 0;
  int64_t savedBytes = 0;
  int64_t recomputeFlops = 0;
};

} // namespace

/// Counts the ops and FLOPs of the step around `backward`, each segment's in
/// `segments` and each forward loop's in `loops`: a recomputation counts for
/// the segment and the loop of its original (the op with the `remat.id` its
/// `remat.clone_of` or `remat.rerun_of` names).
static StepFlops countFlops(BackwardOp backward, SegmentTable &segments,
                            SmallVectorImpl<LoopFigures> &loops) {
  DenseMap<int64_t, Operation *> originals;
  DenseMap<Operation *, unsigned> loopIndex;
  for (Operation &op : *backward->getBlock()) {
    if (&op == backward.getOperation())
      break;
    if (auto id = op.getAttrOfType<IntegerAttr>(RematDialect::kIdAttrName))
      originals[id.getInt()] = &op;
    if (op.hasAttr(RematDialect::kSegmentAttrName))
      ++segments.getForOp(&op).ops;
    if (!isa<scf::ForOp>(op))
      continue;
    LoopFigures &figures = loops.emplace_back();
    loopIndex[&op] = loops.size() - 1;
    figures.loop = &op;
    if (std::optional<NestedRun> run = getNestedRun(&op))
      figures.tripCount = run->times;
    figures.forwardFlops = getOpFlops(&op).value_or(0);
  }
  return countStepFlops(backward, [&](Operation *op, int64_t flops) {
    auto id = op->getAttrOfType<IntegerAttr>(RematDialect::kCloneOfAttrName);
    if (!id)
      id = op->getAttrOfType<IntegerAttr>(RematDialect::kRerunOfAttrName);
    Operation *original = originals.lookup(id.getInt());
    // A clone whose original is gone (canonicalization removes a forward
    // op only the backward read) counts for the unmarked step.
    SegmentFigures &figures =
        original ? segments.getForOp(original) : segments.getForPath({});
    ++figures.recomputedOps;
    figures.recomputeFlops = addFlops(figures.recomputeFlops, flops);
    auto loop = loopIndex.find(original);
    if (original && loop != loopIndex.end())
      loops[loop->second].recomputeFlops =
          addFlops(loops[loop->second].recomputeFlops, flops);
  });
}

/// One saved value's entry in the report.
static llvm::json::Object getSavedEntry(const SavedValue &value) {
  Operation *def = value.value.getDefiningOp();
  llvm::json::Object entry{
      {"location", formatLocation(value.value.getLoc())},
      {"bytes", value.bytes},
      {"op", def ? def->getName().getStringRef().str() : "argument"},
      {"segment", formatSegmentPath(value.segment)},
  };
  if (auto arg = dyn_cast<BlockArgument>(value.value))
    entry["argument"] = static_cast<int64_t>(arg.getArgNumber());
  return entry;
}

// json::Value's move constructor may throw, so std::vector copies the
// elements when it grows: every array below is reserved to its final size.

/// The entries of the saved values of `profile`, each also counted for its
/// segment in `segments`.
static llvm::json::Array reportSaved(const MemoryProfile &profile,
                                     SegmentTable &segments,
                                     MutableArrayRef<LoopFigures> loops) {
  llvm::json::Array saved;
  saved.reserve(profile.saved.size());
  for (auto [index, value] : llvm::enumerate(profile.saved)) {
    SegmentFigures &figures = segments.getForPath(value.segment);
    figures.savedBytes += value.bytes;
    figures.saved.push_back(index);
    saved.push_back(getSavedEntry(value));
    Operation *def = value.value.getDefiningOp();
    for (LoopFigures &loop : loops)
      if (loop.loop == def)
        loop.savedBytes += value.bytes;
  }
  return saved;
}

/// The entries of the forward loops; `savedBytes` and `recomputeFlops` get
/// their totals.
static llvm::json::Array reportLoops(ArrayRef<LoopFigures> loops,
                                     int64_t &savedBytes,
                                     int64_t &recomputeFlops) {
  llvm::json::Array loopArray;
  loopArray.reserve(loops.size());
  for (const LoopFigures &loop : loops) {
    savedBytes += loop.savedBytes;
    recomputeFlops = addFlops(recomputeFlops, loop.recomputeFlops);
    llvm::json::Object entry{
        {"location", formatLocation(loop.loop->getLoc())},
        {"forward_flops", loop.forwardFlops},
        {"saved_bytes", loop.savedBytes},
        {"recompute_flops", loop.recomputeFlops},
    };
    entry["trip_count"] = loop.tripCount ? llvm::json::Value(*loop.tripCount)
                                         : llvm::json::Value(nullptr);
    loopArray.push_back(std::move(entry));
  }
  return loopArray;
}

/// The entries of the segments, each with its saved values.
static llvm::json::Array reportSegments(const SegmentTable &segments,
                                        const MemoryProfile &profile) {
  llvm::json::Array segmentArray;
  segmentArray.reserve(segments.getAll().size());
  for (auto &[path, figures] : segments.getAll()) {
    llvm::json::Object segment{
        {"segment", formatSegmentPath(path)},
        {"ops", figures.ops},
        {"recomputed_ops", figures.recomputedOps},
        {"recompute_flops", figures.recomputeFlops},
        {"saved_bytes", figures.savedBytes},
    };
    llvm::json::Array segmentSaved;
    segmentSaved.reserve(figures.saved.size());
    for (unsigned index : figures.saved)
      segmentSaved.push_back(getSavedEntry(profile.saved[index]));
    segment["saved"] = std::move(segmentSaved);
    segmentArray.push_back(std::move(segment));
  }
  return segmentArray;
}

/// The marking -remat-mark chose for `function`, as it predicted it, if
/// any.
static std::optional<llvm::json::Object>
reportMarking(FunctionOpInterface function) {
  auto plan =
      function->getAttrOfType<MarkingAttr>(RematDialect::kMarkingAttrName);
  if (!plan)
    return std::nullopt;
  llvm::json::Object planObject{{"policy", plan.getPolicy().str()},
                                {"segments", plan.getSegments()}};
  for (auto [name, value] : {std::pair<StringRef, std::optional<int64_t>>{
                                 "predicted_peak", plan.getPredictedPeak()},
                             {"recompute_flops", plan.getRecomputeFlops()},
                             {"budget", plan.getBudget()},
                             {"lower_bound", plan.getLowerBound()}})
    if (value)
      planObject[name] = *value;
  return planObject;
}

namespace {

struct RematReportPass : remat::impl::RematReportPassBase<RematReportPass> {
  using RematReportPassBase::RematReportPassBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    registerCostModelExternalModels(registry);
    addMemoryPlanPipelineDialects(getMemoryPlanPipeline(planPipeline),
                                  registry);
  }

  LogicalResult initialize(MLIRContext *context) override {
    if (planPipeline != "none")
      memoryPlans.initialize(context, getMemoryPlanPipeline(planPipeline));
    return success();
  }

  /// Before -remat-checkpoint, on a marked step: the static peak once every
  /// segment is recomputed, and once each top-level segment alone is, next
  /// to the step's own (`peak`, nothing recomputed yet). A remark at its
  /// first op names each segment whose recomputation raises the peak: its
  /// clones and their inputs live across more of the backward than the
  /// activations it frees.
  void addSegmentEffects(func::FuncOp function, int64_t peak,
                         llvm::json::Object &report) {
    std::string error;
    FailureOr<std::optional<SegmentEffects>> measured = measureSegmentEffects(
        function, memoryPlans, /*measureUnmarked=*/false, error);
    if (failed(measured)) {
      function.emitWarning()
          << "-remat-report: no memory plan of the checkpointed step: "
          << error;
      return;
    }
    if (!*measured)
      return;
    const SegmentEffects &effects = **measured;
    llvm::json::Object &totals = *report.getObject("totals");
    totals["checkpointed_static_peak_bytes"] = effects.allPeak;
    if (effects.allPeak > peak)
      function.emitRemark()
          << "-remat-report: checkpointing every segment raises the static "
             "peak by "
          << (effects.allPeak - peak) << " bytes (" << peak << " -> "
          << effects.allPeak << ")";
    llvm::json::Array entries;
    for (const auto &[segment, alone] : effects.alone) {
      auto [first, alonePeak] = alone;
      entries.push_back(
          llvm::json::Object{{"segment", segment},
                             {"static_peak_bytes", alonePeak},
                             {"peak_change_bytes", alonePeak - peak}});
      if (alonePeak > peak)
        first->emitRemark()
            << "-remat-report: recomputing checkpoint segment " << segment
            << " raises the static peak by " << (alonePeak - peak) << " bytes ("
            << peak << " -> " << alonePeak
            << "): its recomputation keeps more live in the backward than "
               "it frees; unmark it (-remat-mark drop-raising-segments=true)";
    }
    report["segment_effects"] = std::move(entries);
  }

  /// Adds the memory plan's figures to `totals`; without one, the static
  /// peak is the model's and a warning says why.
  void addMemoryPlanFigures(FunctionOpInterface function, int64_t modelPeak,
                            llvm::json::Object &report) {
    llvm::json::Object &totals = *report.getObject("totals");
    totals["static_peak_bytes"] = modelPeak;
    totals["static_peak_source"] = "model";
    auto func = dyn_cast<func::FuncOp>(function.getOperation());
    if (!func || planPipeline == "none")
      return;
    std::string error;
    FailureOr<StepMemoryPlan> plan =
        computeStepMemoryPlan(func, getMemoryPlanPipeline(planPipeline), error);
    if (failed(plan)) {
      function.emitWarning()
          << "-remat-report: no memory plan, the static peak is the model's: "
          << error;
      return;
    }
    totals["static_peak_bytes"] = plan->peakBytes;
    totals["static_peak_source"] = "plan";
    totals["arena_bytes"] = plan->arenaBytes;
    totals["arena_max_live_bytes"] = plan->maxLiveBytes;
    totals["planned_buffers"] = plan->plannedBuffers;
    totals["unplanned_bytes"] = plan->unplannedBytes;
    totals["carried_bytes"] = plan->carriedBytes;
    totals["unplanned_peak_bytes"] = plan->unplannedPeakBytes;
    totals["unplanned_buffers"] = plan->unplannedBuffers;
    addSegmentEffects(func, plan->peakBytes, report);
  }

  void runOnOperation() override {
    llvm::json::Array functions;
    WalkResult walk = getOperation().walk([&](FunctionOpInterface function) {
      if (failed(verifyMarksTakeEffect(function)))
        return WalkResult::interrupt();
      if (function.isExternal() || !getBackwardOp(function.getFunctionBody()))
        return WalkResult::advance();
      std::optional<llvm::json::Object> report = reportFunction(function);
      if (!report)
        return WalkResult::interrupt();
      functions.push_back(std::move(*report));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> output =
        openOutputFile(outputFile, &error);
    if (!output) {
      emitError(getOperation().getLoc()) << "-remat-report: " << error;
      return signalPassFailure();
    }
    if (format == ReportFormat::Json) {
      // json::Object's initializer lists copy their values: move instead.
      llvm::json::Object root;
      root["version"] = 1;
      root["functions"] = std::move(functions);
      output->os() << llvm::formatv("{0:2}\n",
                                    llvm::json::Value(std::move(root)));
    } else
      printText(output->os(), functions);
    output->keep();
  }

  std::optional<llvm::json::Object>
  reportFunction(FunctionOpInterface function) {
    FailureOr<MemoryProfile> profile = computeMemoryProfile(function);
    if (failed(profile))
      return std::nullopt;
    SegmentTable segments;
    SmallVector<LoopFigures> loops;
    StepFlops flops =
        countFlops(getBackwardOp(function.getFunctionBody()), segments, loops);
    llvm::json::Array saved = reportSaved(*profile, segments, loops);
    int64_t loopSavedBytes = 0, loopRecomputeFlops = 0;

    llvm::json::Object report{{"name", function.getName().str()}};
    report["segments"] = reportSegments(segments, *profile);
    report["saved"] = std::move(saved);
    report["loops"] = reportLoops(loops, loopSavedBytes, loopRecomputeFlops);
    report["totals"] = llvm::json::Object{
        {"saved_activation_bytes", profile->savedActivationBytes},
        {"saved_argument_bytes", profile->savedArgumentBytes},
        {"model_peak_bytes", profile->peakBytes},
        {"model_peak_at",
         profile->peakOp ? formatLocation(profile->peakOp->getLoc()) : "none"},
        {"forward_flops", flops.forward},
        {"backward_flops", flops.backward},
        {"recompute_flops", flops.recompute},
        {"recomputed_ops", flops.recomputedOps},
        {"ops_without_cost_model", flops.opsWithoutCostModel},
        {"loop_saved_bytes", loopSavedBytes},
        {"loop_recompute_flops", loopRecomputeFlops},
    };
    addMemoryPlanFigures(function, profile->peakBytes, report);
    if (std::optional<llvm::json::Object> plan = reportMarking(function))
      report["plan"] = std::move(*plan);
    return report;
  }

  void printPeaks(raw_ostream &os, const llvm::json::Object &totals) {
    auto total = [&](StringRef key) { return *totals.getInteger(key); };
    if (*totals.getString("static_peak_source") == "plan") {
      os << llvm::formatv("  static peak: {0} bytes (arena of {1} bytes for "
                          "{2} buffers, at most {3} bytes live at once",
                          total("static_peak_bytes"), total("arena_bytes"),
                          total("planned_buffers"),
                          total("arena_max_live_bytes"));
      // Allocations the arena does not place (in loop bodies, say) count
      // from their op's position to their last use: then the figure bounds
      // the peak.
      int64_t unplanned = total("unplanned_buffers");
      int64_t carried = total("carried_bytes");
      if (unplanned || carried) {
        os << llvm::formatv("; {0} bytes in {1} allocations left to the "
                            "allocator",
                            total("unplanned_bytes"), unplanned);
        if (carried)
          os << llvm::formatv(" and {0} bytes of loop carries (a second "
                              "instance each)",
                              carried);
        os << llvm::formatv(", at most {0} bytes of them live at one "
                            "position): at least the heap peak of the "
                            "generated code\n",
                            total("unplanned_peak_bytes"));
      } else {
        os << "): the heap peak of the generated code\n";
      }
    } else {
      os << llvm::formatv("  static peak: {0} bytes (the model's: no memory "
                          "plan)\n",
                          total("static_peak_bytes"));
    }
    os << llvm::formatv("  model peak: {0} bytes, reached at {1} (the "
                        "liveness model -remat-mark plans with)\n",
                        total("model_peak_bytes"),
                        *totals.getString("model_peak_at"));
  }

  void printText(raw_ostream &os, const llvm::json::Array &functions) {
    for (const llvm::json::Value &value : functions) {
      const llvm::json::Object &function = *value.getAsObject();
      const llvm::json::Object &totals = *function.getObject("totals");
      auto total = [&](StringRef key) { return *totals.getInteger(key); };
      os << "remat report for @" << *function.getString("name") << "\n";
      os << llvm::formatv("  saved activations: {0} bytes in {1} values "
                          "(+ {2} bytes of saved arguments)\n",
                          total("saved_activation_bytes"),
                          function.getArray("saved")->size(),
                          total("saved_argument_bytes"));
      printPeaks(os, totals);
      if (std::optional<int64_t> checkpointed =
              totals.getInteger("checkpointed_static_peak_bytes"))
        os << llvm::formatv("  static peak once checkpointed: {0} bytes\n",
                            *checkpointed);
      if (const llvm::json::Array *effects =
              function.getArray("segment_effects"))
        for (const llvm::json::Value &effectValue : *effects) {
          const llvm::json::Object &effect = *effectValue.getAsObject();
          int64_t change = *effect.getInteger("peak_change_bytes");
          os << llvm::formatv("  segment {0} recomputed alone: static peak {1} "
                              "bytes ({2}{3} bytes)\n",
                              *effect.getInteger("segment"),
                              *effect.getInteger("static_peak_bytes"),
                              change > 0 ? "+" : "", change);
        }
      os << llvm::formatv("  forward FLOPs: {0}, backward FLOPs: {1}, "
                          "recompute FLOPs: {2} in {3} recomputed ops\n",
                          total("forward_flops"), total("backward_flops"),
                          total("recompute_flops"), total("recomputed_ops"));
      if (!function.getArray("loops")->empty())
        os << llvm::formatv("  loops: {0} saved bytes, recompute FLOPs {1}\n",
                            total("loop_saved_bytes"),
                            total("loop_recompute_flops"));
      for (const llvm::json::Value &loopValue : *function.getArray("loops")) {
        const llvm::json::Object &loop = *loopValue.getAsObject();
        os << "  loop at " << *loop.getString("location") << ": ";
        if (std::optional<int64_t> trips = loop.getInteger("trip_count"))
          os << *trips << " iterations";
        else
          os << "iterations unknown (counted as 0 FLOPs)";
        os << llvm::formatv(", forward FLOPs {0}, {1} saved bytes, recompute "
                            "FLOPs {2}\n",
                            *loop.getInteger("forward_flops"),
                            *loop.getInteger("saved_bytes"),
                            *loop.getInteger("recompute_flops"));
      }
      if (const llvm::json::Object *plan = function.getObject("plan")) {
        os << llvm::formatv("  plan: policy={0}, {1} segments",
                            *plan->getString("policy"),
                            *plan->getInteger("segments"));
        // Absent when -remat-mark ran with predict=false.
        if (std::optional<int64_t> peak = plan->getInteger("predicted_peak"))
          os << llvm::formatv(", predicted peak {0} bytes, recompute FLOPs {1}",
                              *peak, *plan->getInteger("recompute_flops"));
        if (std::optional<int64_t> budget = plan->getInteger("budget"))
          os << llvm::formatv(", budget {0} bytes", *budget);
        os << "\n";
      }
      if (int64_t unknown = total("ops_without_cost_model"))
        os << "  ops without a cost model (counted as 0 FLOPs): " << unknown
           << "\n";
      for (const llvm::json::Value &segValue : *function.getArray("segments")) {
        const llvm::json::Object &seg = *segValue.getAsObject();
        os << llvm::formatv("  segment {0}: {1} ops, {2} recomputed ({3} "
                            "FLOPs), {4} saved bytes\n",
                            *seg.getString("segment"), *seg.getInteger("ops"),
                            *seg.getInteger("recomputed_ops"),
                            *seg.getInteger("recompute_flops"),
                            *seg.getInteger("saved_bytes"));
        for (const llvm::json::Value &savedValue : *seg.getArray("saved")) {
          const llvm::json::Object &entry = *savedValue.getAsObject();
          os << llvm::formatv(
              "    saved {0} bytes: {1} at {2}\n", *entry.getInteger("bytes"),
              *entry.getString("op"), *entry.getString("location"));
        }
      }
    }
  }

  /// The memory-plan pipeline, parsed once in initialize().
  MemoryPlanPipeline memoryPlans;
};

} // namespace
