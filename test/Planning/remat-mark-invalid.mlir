// RUN: not remat-opt %s -remat-mark="policy=fastest" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not remat-opt %s -remat-mark="policy=sequential" 2>&1 | FileCheck %s --check-prefix=NOSEG
// RUN: not remat-opt %s -remat-mark="policy=sequential segments=0" 2>&1 | FileCheck %s --check-prefix=NOSEG
// RUN: not remat-opt %s -remat-mark="policy=sqrt segments=2" 2>&1 | FileCheck %s --check-prefix=SEGOTHER
// RUN: not remat-opt %s -remat-mark="policy=budget" 2>&1 | FileCheck %s --check-prefix=ONEBUDGET
// RUN: not remat-opt %s -remat-mark="policy=budget budget-bytes=100 budget-fraction=0.5" 2>&1 | FileCheck %s --check-prefix=ONEBUDGET
// RUN: not remat-opt %s -remat-mark="policy=budget budget-fraction=0" 2>&1 | FileCheck %s --check-prefix=FRACTION
// RUN: not remat-opt %s -remat-mark="policy=budget budget-fraction=1.5" 2>&1 | FileCheck %s --check-prefix=FRACTION
// RUN: not remat-opt %s -remat-mark="policy=budget budget-fraction=0.5 budget-between=0.5" 2>&1 | FileCheck %s --check-prefix=ONEBUDGET
// RUN: not remat-opt %s -remat-mark="policy=budget budget-between=1.5" 2>&1 | FileCheck %s --check-prefix=BETWEEN
// RUN: not remat-opt %s -remat-mark="policy=budget budget-between=-0.1" 2>&1 | FileCheck %s --check-prefix=BETWEEN
// RUN: not remat-opt %s -remat-mark="policy=budget budget-between=nan" 2>&1 | FileCheck %s --check-prefix=BETWEEN
// RUN: not remat-opt %s -remat-mark="policy=selective budget-between=0.5" 2>&1 | FileCheck %s --check-prefix=BUDGETOTHER
// RUN: not remat-opt %s -remat-mark="policy=budget budget-bytes=-3" 2>&1 | FileCheck %s --check-prefix=BYTES
// RUN: not remat-opt %s -remat-mark="policy=sqrt budget-bytes=100" 2>&1 | FileCheck %s --check-prefix=BUDGETOTHER
// RUN: not remat-opt %s -remat-mark="policy=budget save-ops=linalg.matmul budget-fraction=0.5" 2>&1 | FileCheck %s --check-prefix=SAVEOTHER
// RUN: not remat-opt %s -remat-mark="policy=budget budget-bytes=10" 2>&1 | FileCheck %s --check-prefix=INFEASIBLE
// RUN: not remat-opt %S/Inputs/dynamic-step.mlir -remat-mark="policy=sqrt" 2>&1 | FileCheck %s --check-prefix=DYNAMIC

// Checks that option values that make no plan are command-line errors of
// remat-opt (they have no source location), and that a budget below every
// reachable peak, an error of this step, is located at the function and
// names the smallest.
// POLICY: remat-opt: for the --policy option: Cannot find option named 'fastest'!
// NOSEG: error: -remat-mark: policy=sequential needs segments=N with N >= 1
// SEGOTHER: error: -remat-mark: segments= is an option of policy=sequential only
// ONEBUDGET: error: -remat-mark: policy=budget needs exactly one of budget-bytes=, budget-fraction= and budget-between=
// FRACTION: error: -remat-mark: budget-fraction must be in (0, 1]
// BETWEEN: error: -remat-mark: budget-between must be in [0, 1]
// BYTES: error: -remat-mark: budget-bytes must be positive
// BUDGETOTHER: error: -remat-mark: budget-bytes=, budget-fraction= and budget-between= are options of policy=budget only
// SAVEOTHER: error: -remat-mark: save-ops= and save-names= are options of policy=selective only
// INFEASIBLE: remat-mark-invalid.mlir:[[@LINE+2]]:1: error: -remat-mark: budget of 10 bytes is infeasible: the smallest peak the planner reached is 64 bytes (unmarked: 64 bytes)
// DYNAMIC: dynamic-step.mlir:4:8: error: 'math.tanh' op result #0 of type 'tensor<?xf32>' has a dynamic shape; planning needs static shapes
func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = math.tanh %x : tensor<16xf32>
  %b = math.exp %a : tensor<16xf32>
  %g = remat.backward {
    %0 = arith.mulf %b, %a : tensor<16xf32>
    remat.yield %0 : tensor<16xf32>
  } : tensor<16xf32>
  return %g : tensor<16xf32>
}
