//===- RematDialect.td - The remat dialect -----------------*- tablegen -*-===//
//
// The remat dialect carries a training step's forward/backward split and the
// checkpointing decisions made on it.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT_REMAT_IR_REMATDIALECT_TD
#define REMAT_DIALECT_REMAT_IR_REMATDIALECT_TD

include "mlir/IR/OpBase.td"

def Remat_Dialect : Dialect {
  let name = "remat";
  let cppNamespace = "::remat";
  let summary = "Activation rematerialization for training steps";
  let description = [{
    The `remat` dialect models a training step as one function: the forward
    ops in the function body, then a single `remat.backward` region holding the
    backward ops. A forward value used inside the region is a *saved
    activation*: it stays live from its definition to its last backward use.
    Checkpointing passes shrink that set by recomputing forward values inside
    the backward region instead of saving them.

    Discardable attributes, verified by the dialect:

    * `remat.segment = N : i64`, or `[N0, N1, ...]` from the outermost to the
      innermost segment, on a forward op: the op belongs to checkpoint segment
      N (nested segments for arrays). Values it defines that the backward
      needs are recomputed from the segment's inputs. Ops of a segment must
      have statically shaped results. The attribute belongs on ops directly
      in a function body: it is rejected inside `remat.backward`, on ops
      nested in other regions (mark the enclosing `scf.for` or `scf.if`), and
      on functions, modules and the backward op. The passes that read marks
      (`-remat-checkpoint`, `-remat-mark`, `-remat-report`) reject marks in a
      function without a backward region and on ops after it.
    * `remat.policy = "save"` or `"recompute"` on a forward op of a segment
      (with `remat.segment`, placed as it is): selective checkpointing;
      `save` keeps the op's results saved even inside a segment.
    * `remat.name = "..."` on a forward op: a name for its value that selective
      policies can refer to (JAX's `checkpoint_name`).
    * `remat.rng_seed` (unit) on an `i64` function argument: the seed of the
      step's random number generator.

    Bookkeeping that `-remat-checkpoint` writes and `-remat-verify` and
    `-remat-report` read:

    * `remat.id = N : i64` on a forward op that has been recomputed: its
      number, unique within the function.
    * `remat.clone_of = N : i64` on an op of the backward region: it is a
      recomputed copy of the forward op with `remat.id = N`.

    Written by `-remat-checkpoint-loops`, read by `-remat-report`:

    * `remat.rerun_of = N : i64` on an op of the backward region (the loop
      that reruns a block of a checkpointed scan's iterations, and the ops
      of its body): it recomputes iterations of the forward loop with
      `remat.id = N` (the loop over blocks). It is not a copy of that loop,
      so `-remat-verify` does not compare the two.

    Written by `-remat-mark` (any policy but `annotations`) and printed by
    `-remat-report`:

    * `remat.plan = #remat.plan<policy = "budget", segments = N,
      predictedPeak = P, recomputeFlops = F, budget = B>` on a function:
      the marking the pass chose (`MarkingAttr`).
  }];

  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;

  let extraClassDeclaration = [{
    /// Names of the discardable attributes of the IR contract.
    static constexpr ::llvm::StringLiteral kSegmentAttrName = "remat.segment";
    static constexpr ::llvm::StringLiteral kPolicyAttrName = "remat.policy";
    static constexpr ::llvm::StringLiteral kNameAttrName = "remat.name";
    static constexpr ::llvm::StringLiteral kRngSeedAttrName = "remat.rng_seed";
    static constexpr ::llvm::StringLiteral kIdAttrName = "remat.id";
    static constexpr ::llvm::StringLiteral kCloneOfAttrName = "remat.clone_of";
    static constexpr ::llvm::StringLiteral kRerunOfAttrName = "remat.rerun_of";
    static constexpr ::llvm::StringLiteral kMarkingAttrName = "remat.plan";
  }];
}

class Remat_Op<string mnemonic, list<Trait> traits = []>
    : Op<Remat_Dialect, mnemonic, traits>;

#endif // REMAT_DIALECT_REMAT_IR_REMATDIALECT_TD
