// RUN: remat-opt %s --mlir-very-unsafe-disable-verifier-on-parsing -split-input-file -remat-checkpoint -verify-diagnostics
// RUN: remat-opt %s --mlir-very-unsafe-disable-verifier-on-parsing -split-input-file -remat-mark=policy=sqrt -verify-diagnostics
// RUN: remat-opt %s --mlir-very-unsafe-disable-verifier-on-parsing -split-input-file -remat-report -verify-diagnostics

// The passes on a step's own segments recompute ops directly in the
// function body (a whole scf.for or scf.if when it is marked). A mark
// directly in a scan's body is for -remat-checkpoint-loops, which recomputes
// it per iteration (remat-checkpoint-loops-body.mlir): these passes reject
// it with a located error that names that pass. A mark anywhere else in a
// loop body or a branch never takes effect; the dialect verifier rejects it
// where the IR is parsed, and these cases are IR that skipped it
// (--mlir-very-unsafe-disable-verifier-on-parsing, as the output of a pass
// run without -verify-each), which the passes that read marks reject
// themselves instead of ignoring the mark. Integration/CPU/scan-mlp.test and
// remat-run-loop-dropout.test run loops that -remat-checkpoint recomputes
// whole.

// Checks a segment inside a scan's forward body.
func.func @segment_in_scan(%x: tensor<4xf32>, %dy: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %h = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %x) -> (tensor<4xf32>) {
    // expected-error @+1 {{'math.tanh' op is marked for checkpointing in a scan's body: -remat-checkpoint-loops recomputes such segments per iteration; run it before the passes on the step's own segments}}
    %y = math.tanh %t {remat.segment = 0 : i64} : tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  %g = remat.backward {
    %d = arith.mulf %dy, %h : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %h, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks a policy alone in a branch nested in a loop body.
func.func @policy_in_branch(%x: tensor<4xf32>, %dy: tensor<4xf32>, %c: i1)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %h = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %x) -> (tensor<4xf32>) {
    %y = scf.if %c -> (tensor<4xf32>) {
      // expected-error @+1 {{'math.exp' op is marked for checkpointing but is nested in 'scf.if'}}
      %e = math.exp %t {remat.policy = "save"} : tensor<4xf32>
      scf.yield %e : tensor<4xf32>
    } else {
      scf.yield %t : tensor<4xf32>
    }
    scf.yield %y : tensor<4xf32>
  } {remat.segment = 0 : i64}
  %g = remat.backward {
    %d = arith.mulf %dy, %h : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %h, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks a segment inside the backward region's reverse loop.
func.func @segment_in_backward_loop(%x: tensor<4xf32>, %dy: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %h = math.tanh %x : tensor<4xf32>
  %g = remat.backward {
    %r = scf.for %j = %c0 to %c4 step %c1 iter_args(%t = %dy) -> (tensor<4xf32>) {
      // expected-error @+1 {{'arith.mulf' op is marked for checkpointing but is inside 'remat.backward': only forward ops belong to segments}}
      %d = arith.mulf %t, %h {remat.segment = 0 : i64} : tensor<4xf32>
      scf.yield %d : tensor<4xf32>
    }
    remat.yield %r : tensor<4xf32>
  } : tensor<4xf32>
  return %h, %g : tensor<4xf32>, tensor<4xf32>
}
