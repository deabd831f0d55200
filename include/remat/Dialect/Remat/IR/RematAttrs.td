//===- RematAttrs.td - remat dialect attributes ------------*- tablegen -*-===//
//
// The attributes of the remat dialect.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT_REMAT_IR_REMATATTRS_TD
#define REMAT_DIALECT_REMAT_IR_REMATATTRS_TD

include "remat/Dialect/Remat/IR/RematDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Remat_PlanAttr : AttrDef<Remat_Dialect, "Plan"> {
  let mnemonic = "plan";
  let summary = "The checkpoint plan -remat-mark chose for a function";
  let description = [{
    The value of the discardable attribute `remat.plan` on a function:
    the policy `-remat-mark` ran, the number of segments it marked, and,
    unless it ran with `predict=false`, the plan's static peak in bytes
    and its recompute FLOPs as measured after `-remat-checkpoint` (both or
    neither). `policy = "budget"` also records the budget in bytes;
    `lowerBound` is a proven lower bound on the recompute FLOPs of any
    marking within it. Every number is non-negative; the policy is not
    empty.

    ```mlir
    func.func @step(...) attributes {remat.plan = #remat.plan<
        policy = "budget", segments = 1, predictedPeak = 64,
        recomputeFlops = 8, budget = 64>}
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the policy">:$policy,
    "int64_t":$segments,
    OptionalParameter<"std::optional<int64_t>">:$predictedPeak,
    OptionalParameter<"std::optional<int64_t>">:$recomputeFlops,
    OptionalParameter<"std::optional<int64_t>">:$budget,
    OptionalParameter<"std::optional<int64_t>">:$lowerBound);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // REMAT_DIALECT_REMAT_IR_REMATATTRS_TD
