// RUN: remat-opt %s -split-input-file -remat-checkpoint-loops -remat-verify -verify-diagnostics | FileCheck %s
// RUN: remat-opt %s -split-input-file -remat-checkpoint-loops -cse -canonicalize -verify-diagnostics -o /dev/null

// Segments inside a scan's body (docs/Loops.md): the marked ops the forward
// stacks a value of are recomputed per iteration in the backward loop, from
// the stacks of what they read that depends on the carries; what depends on
// no carry (the iteration index, W[i], constants) is recomputed too.
// Integration/CPU/scan-body-segments.test runs these steps.

// Checks the scanned layer h <- tanh(h W[i]) with its matmul and tanh
// marked: the forward no longer stacks tanh's value (it still stacks h,
// which the weight gradient reads anyway), and the backward loop reruns
// W[i]'s slice, the fill, the matmul and tanh at iteration n - 1 - j, from
// the stack of h. The loop gets a remat.id and the reruns remat.rerun_of,
// for -remat-report; the marks are gone.
// CHECK-LABEL: func.func @layer
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[W:.*]]: tensor<3x4x4xf32>
// CHECK:      %[[FWD:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[H:.*]] = %[[X]], %[[HS:.*]] = %{{.*}}) -> (tensor<2x4xf32>, tensor<3x2x4xf32>)
// CHECK-NOT:    remat.segment
// CHECK:        %[[A:.*]] = math.tanh
// CHECK-NEXT:   %[[HS2:.*]] = tensor.insert_slice %[[H]] into %[[HS]][%[[I]], 0, 0]
// CHECK-NEXT:   scf.yield %[[A]], %[[HS2]]
// CHECK-NEXT: } {remat.id = 0 : i64}
// CHECK:      remat.backward
// CHECK:        scf.for %[[J:.*]] = {{.*}} iter_args(
// CHECK-NEXT:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:     %[[AT:.*]] = arith.subi %[[C2]], %[[J]]
// CHECK-NEXT:     %[[HR:.*]] = tensor.extract_slice %[[FWD]]#1[%[[AT]], 0, 0] [1, 2, 4] [1, 1, 1]
// CHECK-NEXT:     %[[WR:.*]] = tensor.extract_slice %[[W]][%[[AT]], 0, 0] [1, 4, 4] [1, 1, 1] {remat.rerun_of = 0 : i64}
// CHECK-NEXT:     tensor.empty() {remat.rerun_of = 0 : i64}
// CHECK-NEXT:     %[[Z0:.*]] = linalg.fill {remat.rerun_of = 0 : i64}
// CHECK-NEXT:     %[[Z:.*]] = linalg.matmul {remat.rerun_of = 0 : i64} ins(%[[HR]], %[[WR]] : {{.*}}) outs(%[[Z0]] :
// CHECK-NEXT:     %[[AR:.*]] = math.tanh %[[Z]] {remat.rerun_of = 0 : i64}
// CHECK:          arith.mulf %[[AR]], %[[AR]]
func.func @layer(%x: tensor<2x4xf32>, %w: tensor<3x4x4xf32>, %dy: tensor<2x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<3x2x4xf32>
  // expected-remark @below {{-remat-checkpoint-loops: the backward loop recomputes 5 ops of the scan's body per iteration; the forward stacks 0 bytes instead of 96}}
  // expected-remark @below {{-remat-checkpoint-loops: the scan's body segments are recomputed per iteration; its carries are not checkpointed on top of that}}
  %h, %hs, %as = scf.for %i = %c0 to %c3 step %c1
      iter_args(%hc = %x, %hsc = %se, %asc = %se)
      -> (tensor<2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>) {
    %wi = tensor.extract_slice %w[%i, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<3x4x4xf32> to tensor<4x4xf32>
    %e = tensor.empty() : tensor<2x4xf32>
    %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
    %z = linalg.matmul {remat.segment = 0 : i64} ins(%hc, %wi : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z0 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %a = math.tanh %z {remat.segment = 0 : i64} : tensor<2x4xf32>
    %hs2 = tensor.insert_slice %hc into %hsc[%i, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<3x2x4xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<3x2x4xf32>
    scf.yield %a, %hs2, %as2 : tensor<2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>
  }
  %dx = remat.backward {
    %one = arith.constant dense<1.0> : tensor<2x4xf32>
    %gx = scf.for %j = %c0 to %c3 step %c1 iter_args(%g = %dy) -> (tensor<2x4xf32>) {
      %r = arith.subi %c2, %j : index
      %a = tensor.extract_slice %as[%r, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
      %hin = tensor.extract_slice %hs[%r, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
      %a2 = arith.mulf %a, %a : tensor<2x4xf32>
      %d = arith.subf %one, %a2 : tensor<2x4xf32>
      %dz = arith.mulf %g, %d : tensor<2x4xf32>
      %gn = arith.addf %dz, %hin : tensor<2x4xf32>
      scf.yield %gn : tensor<2x4xf32>
    }
    remat.yield %gx : tensor<2x4xf32>
  } : tensor<2x4xf32>
  return %h, %dx : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Checks a marked op that reads a value the scan does not stack: tanh alone
// is marked, so the matmul's value (it depends on the carry) gets a stack of
// its own, as large as the one tanh's value had (the old stack's
// tensor.empty is left to canonicalization).
// CHECK-LABEL: func.func @new_stack
// CHECK:      tensor.empty() : tensor<3x2x4xf32>
// CHECK-NEXT: %[[ZE:.*]] = tensor.empty() : tensor<3x2x4xf32>
// CHECK-NEXT: %[[FWD:.*]]:2 = scf.for %[[I:.*]] = {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[ZS:.*]] = %[[ZE]])
// CHECK:        %[[Z:.*]] = linalg.matmul
// CHECK:        %[[ZS2:.*]] = tensor.insert_slice %[[Z]] into %[[ZS]][%[[I]], 0, 0]
// CHECK:        scf.yield %{{.*}}, %[[ZS2]]
// CHECK:      remat.backward
// CHECK:        %[[ZR:.*]] = tensor.extract_slice %[[FWD]]#1
// CHECK-NEXT:   math.tanh %[[ZR]] {remat.rerun_of = 0 : i64}
func.func @new_stack(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %dy: tensor<2x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<3x2x4xf32>
  // expected-remark @below {{-remat-checkpoint-loops: the backward loop recomputes 1 ops of the scan's body per iteration; the forward stacks 96 bytes instead of 96}}
  // expected-remark @below {{-remat-checkpoint-loops: the scan's body segments are recomputed per iteration; its carries are not checkpointed on top of that}}
  %h, %as = scf.for %i = %c0 to %c3 step %c1 iter_args(%hc = %x, %asc = %se)
      -> (tensor<2x4xf32>, tensor<3x2x4xf32>) {
    %e = tensor.empty() : tensor<2x4xf32>
    %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
    %z = linalg.matmul ins(%hc, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z0 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %a = math.tanh %z {remat.segment = 0 : i64} : tensor<2x4xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<3x2x4xf32>
    scf.yield %a, %as2 : tensor<2x4xf32>, tensor<3x2x4xf32>
  }
  %dx = remat.backward {
    %gx = scf.for %j = %c0 to %c3 step %c1 iter_args(%g = %dy) -> (tensor<2x4xf32>) {
      %r = arith.subi %c2, %j : index
      %a = tensor.extract_slice %as[%r, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
      %gn = arith.mulf %g, %a : tensor<2x4xf32>
      scf.yield %gn : tensor<2x4xf32>
    }
    remat.yield %gx : tensor<2x4xf32>
  } : tensor<2x4xf32>
  return %h, %dx : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Checks that marks computing nothing the scan stacks are an error, not
// ignored.
func.func @nothing_stacked(%x: tensor<2x4xf32>, %dy: tensor<2x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %se = tensor.empty() : tensor<3x2x4xf32>
  %h, %hs = scf.for %i = %c0 to %c3 step %c1 iter_args(%hc = %x, %hsc = %se)
      -> (tensor<2x4xf32>, tensor<3x2x4xf32>) {
    // expected-error @below {{-remat-checkpoint-loops: the marked ops of the scan's body compute no value the scan stacks for its backward loop, so there is nothing to recompute per iteration}}
    %a = math.tanh %hc {remat.segment = 0 : i64} : tensor<2x4xf32>
    %hs2 = tensor.insert_slice %hc into %hsc[%i, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<3x2x4xf32>
    scf.yield %a, %hs2 : tensor<2x4xf32>, tensor<3x2x4xf32>
  }
  %dx = remat.backward {
    %gx = scf.for %j = %c0 to %c3 step %c1 iter_args(%g = %dy) -> (tensor<2x4xf32>) {
      %r = arith.subi %c2, %j : index
      %hin = tensor.extract_slice %hs[%r, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
      %gn = arith.mulf %g, %hin : tensor<2x4xf32>
      scf.yield %gn : tensor<2x4xf32>
    }
    remat.yield %gx : tensor<2x4xf32>
  } : tensor<2x4xf32>
  return %h, %dx : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Checks that marks in the body of a loop the pass does not rewrite (here
// the backward reads its stack other than at slot n - 1 - j) are an error.
func.func @not_a_scan(%x: tensor<2x4xf32>, %dy: tensor<2x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %se = tensor.empty() : tensor<3x2x4xf32>
  // expected-error @below {{-remat-checkpoint-loops: the loop's body has checkpoint marks, but the loop is not a scan with a reverse backward loop: stack #1 is used other than by a loop directly in the backward region}}
  %h, %as = scf.for %i = %c0 to %c3 step %c1 iter_args(%hc = %x, %asc = %se)
      -> (tensor<2x4xf32>, tensor<3x2x4xf32>) {
    %a = math.tanh %hc {remat.segment = 0 : i64} : tensor<2x4xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<3x2x4xf32>
    scf.yield %a, %as2 : tensor<2x4xf32>, tensor<3x2x4xf32>
  }
  %dx = remat.backward {
    %a0 = tensor.extract_slice %as[%c0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
    %gn = arith.mulf %dy, %a0 : tensor<2x4xf32>
    remat.yield %gn : tensor<2x4xf32>
  } : tensor<2x4xf32>
  return %h, %dx : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Checks that marks in the body of a loop that is in a segment itself are an
// error: the loop is recomputed whole.
func.func @marked_loop(%x: tensor<2x4xf32>, %dy: tensor<2x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %se = tensor.empty() : tensor<3x2x4xf32>
  // expected-error @below {{-remat-checkpoint-loops: the loop's body has checkpoint marks, but the loop is in a checkpoint segment itself, which recomputes it whole}}
  %h, %as = scf.for %i = %c0 to %c3 step %c1 iter_args(%hc = %x, %asc = %se)
      -> (tensor<2x4xf32>, tensor<3x2x4xf32>) {
    %a = math.tanh %hc {remat.segment = 1 : i64} : tensor<2x4xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<3x2x4xf32>
    scf.yield %a, %as2 : tensor<2x4xf32>, tensor<3x2x4xf32>
  } {remat.segment = 0 : i64}
  %dx = remat.backward {
    %gx = scf.for %j = %c0 to %c3 step %c1 iter_args(%g = %dy) -> (tensor<2x4xf32>) {
      %r = arith.subi %c2, %j : index
      %a = tensor.extract_slice %as[%r, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
      %gn = arith.mulf %g, %a : tensor<2x4xf32>
      scf.yield %gn : tensor<2x4xf32>
    }
    remat.yield %gx : tensor<2x4xf32>
  } : tensor<2x4xf32>
  return %h, %dx : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Checks that a body whose only mark saves its op (remat.policy = "save")
// recomputes nothing, an error located at that op.
func.func @only_saved(%x: tensor<2x4xf32>, %dy: tensor<2x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %se = tensor.empty() : tensor<3x2x4xf32>
  %h, %as = scf.for %i = %c0 to %c3 step %c1 iter_args(%hc = %x, %asc = %se)
      -> (tensor<2x4xf32>, tensor<3x2x4xf32>) {
    // expected-error @below {{-remat-checkpoint-loops: the marked ops of the scan's body compute no value the scan stacks for its backward loop, so there is nothing to recompute per iteration}}
    %a = math.tanh %hc {remat.segment = 0 : i64, remat.policy = "save"} : tensor<2x4xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<3x2x4xf32>
    scf.yield %a, %as2 : tensor<2x4xf32>, tensor<3x2x4xf32>
  }
  %dx = remat.backward {
    %gx = scf.for %j = %c0 to %c3 step %c1 iter_args(%g = %dy) -> (tensor<2x4xf32>) {
      %r = arith.subi %c2, %j : index
      %a = tensor.extract_slice %as[%r, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
      %gn = arith.mulf %g, %a : tensor<2x4xf32>
      scf.yield %gn : tensor<2x4xf32>
    }
    remat.yield %gx : tensor<2x4xf32>
  } : tensor<2x4xf32>
  return %h, %dx : tensor<2x4xf32>, tensor<2x4xf32>
}
