//===- remat-fuzz.cpp - libFuzzer target over remat's passes -------------===//
//
// Parses the input as MLIR and, when it parses and verifies, runs
//   -remat-thread-rng, -remat-mark (a policy chosen by the input's hash),
//   -remat-checkpoint, -remat-verify, -remat-report, -remat-outline
// with every diagnostic swallowed, on each part of the input between
// `// -----` lines on its own (as -split-input-file cuts the test corpus's
// files). Control flow parses (cf branches between blocks, scf loops and
// branches), so mutations reach multi-block bodies and nested regions;
// fuzz/remat.dict gives libFuzzer their tokens. Errors are fine; a crash, a
// sanitizer report, or a pass that leaves invalid IR behind (the pass
// manager verifies after every pass and reports that as an error, which this
// target turns into a trap when the passes themselves said nothing) is a
// bug.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematDialect.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"
#include "remat/Planning/Passes.h"
#include "remat/Support/ParserHazards.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;

static MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    registry.insert<remat::RematDialect, arith::ArithDialect,
                    cf::ControlFlowDialect, func::FuncDialect,
                    linalg::LinalgDialect, math::MathDialect, scf::SCFDialect,
                    tensor::TensorDialect>();
    auto *c = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    remat::registerRematTransformsPasses();
    remat::registerRematPlanningPasses();
    return c;
  }();
  return *ctx;
}

/// Parses `text` and, when it parses and verifies, runs the pipeline on it;
/// traps on a pass failure that reported no error.
static void runChunk(MLIRContext &ctx, StringRef text,
                     bool &passFailedQuietly) {
  ParserConfig config(&ctx);
  // MLIR's lexer relies on a NUL after the buffer: parse a copy that has one
  // (libFuzzer's data has none).
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text),
                               llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module)
    return;

  static const char *const marks[] = {
      "remat-mark",
      "remat-mark{policy=sequential segments=2}",
      "remat-mark{policy=sqrt}",
      "remat-mark{policy=selective save-ops=linalg.matmul}",
      "remat-mark{policy=budget budget-fraction=0.5}",
  };
  size_t which = llvm::hash_value(text) % std::size(marks);
  // -remat-mark is a module pass: it plans each step on copies of the step
  // and its callees.
  std::string pipeline =
      std::string("builtin.module(func.func(remat-thread-rng),") +
      marks[which] +
      ",func.func(remat-checkpoint,remat-verify),"
      "remat-report{output-file=/dev/null},remat-outline)";
  PassManager pm(&ctx);
  if (failed(parsePassPipeline(pipeline, pm)))
    __builtin_trap(); // the pipeline above is ours: it must parse
  passFailedQuietly = true;
  if (failed(pm.run(*module)) && passFailedQuietly)
    __builtin_trap(); // a failure without an error: a silent bug
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024)
    return 0; // large inputs only slow the search down
  MLIRContext &ctx = context();
  bool passFailedQuietly = true;
  ScopedDiagnosticHandler quiet(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      passFailedQuietly = false;
    return success();
  });

  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  // Inputs MLIR 22's parser crashes on (test/Malformed/upstream-linalg-*):
  // an upstream crash the fuzzer would otherwise rediscover all day instead
  // of reaching remat's passes. remat's tools reject them the same way.
  if (remat::findParserHazard(text))
    return 0;

  // Like -split-input-file: the test corpus's files hold many cases apart
  // by `// -----`, which only parse one at a time.
  for (size_t begin = 0; begin <= text.size();) {
    size_t split = text.find("// -----", begin);
    StringRef chunk = text.slice(begin, split);
    runChunk(ctx, chunk, passFailedQuietly);
    if (split == StringRef::npos)
      break;
    begin = split + StringRef("// -----").size();
  }
  return 0;
}
