//===- RematAttrs.td - remat dialect attributes ------------*- tablegen -*-===//
//
// The attributes of the remat dialect.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT_REMAT_IR_REMATATTRS_TD
#define REMAT_DIALECT_REMAT_IR_REMATATTRS_TD

include "remat/Dialect/Remat/IR/RematDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

// The policies of the planning passes, spelled once: -remat-mark's and
// -remat-checkpoint-loops' `policy` options parse them, and `#remat.plan`
// records one.
def Remat_MarkPolicy : I32EnumAttr<"MarkPolicy",
    "how -remat-mark chooses checkpoint segments", [
      I32EnumAttrCase<"Annotations", 0, "annotations">,
      I32EnumAttrCase<"Sequential", 1, "sequential">,
      I32EnumAttrCase<"Sqrt", 2, "sqrt">,
      I32EnumAttrCase<"Selective", 3, "selective">,
      I32EnumAttrCase<"Budget", 4, "budget">
    ]> {
  let cppNamespace = "::remat";
  let genSpecializedAttr = 0;
}

def Remat_LoopPolicy : I32EnumAttr<"LoopPolicy",
    "how -remat-checkpoint-loops chooses each scan's k", [
      I32EnumAttrCase<"Sqrt", 0, "sqrt">,
      I32EnumAttrCase<"Every", 1, "every">,
      I32EnumAttrCase<"Budget", 2, "budget">
    ]> {
  let cppNamespace = "::remat";
  let genSpecializedAttr = 0;
}

def Remat_MarkingAttr : AttrDef<Remat_Dialect, "Marking"> {
  let mnemonic = "plan";
  let summary = "The marking -remat-mark chose for a function";
  let description = [{
    The value of the discardable attribute `remat.plan` on a function:
    the policy `-remat-mark` ran, the number of segments it marked, and,
    unless it ran with `predict=false`, the marking's static peak in bytes
    and its recompute FLOPs as measured after `-remat-checkpoint` (both or
    neither); the policy is one of -remat-mark's (`annotations`,
    `sequential`, `sqrt`, `selective`, `budget`). `policy = "budget"` also
    records the budget in bytes;
    `lowerBound` is a proven lower bound on the recompute FLOPs of any
    marking within it. Every number is non-negative.

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
