//===- Passes.h - remat planning passes -------------------------*- C++ -*-===//
//
// Declares the passes that decide what a training step recomputes (its
// marking: -remat-mark, -remat-checkpoint-loops) and report what a marking
// costs (-remat-report).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PLANNING_PASSES_H
#define REMAT_PLANNING_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "remat/Dialect/Remat/IR/RematDialect.h"

namespace remat {

/// The output format of -remat-report (its `format` option).
enum class ReportFormat { Text, Json };

#define GEN_PASS_DECL
#include "remat/Planning/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "remat/Planning/Passes.h.inc"

} // namespace remat

#endif // REMAT_PLANNING_PASSES_H
