// RUN: remat-opt %s -remat-report 2>&1 -o /dev/null | FileCheck %s
// A loop over every index (2^64 - 1 iterations, from the smallest index to
// the largest: the span does not fit an int64) around a loop of 2^62: the
// trip count saturates at 2^62 and so do the FLOPs, never wrapping. A loop
// whose upper bound is below its lower bound runs 0 times; one with a
// negative step has no cost model.
// CHECK: forward FLOPs: 4611686018427387904, backward FLOPs: 4, recompute FLOPs: 0
// CHECK: loop at {{.*}}: 4611686018427387904 iterations, forward FLOPs 4611686018427387904, 16 saved bytes, recompute FLOPs 0
// CHECK: ops without a cost model (counted as 0 FLOPs): 1
func.func @step(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %min = arith.constant -9223372036854775808 : index
  %max = arith.constant 9223372036854775807 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cm1 = arith.constant -1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %big = arith.constant 4611686018427387904 : index
  %r = scf.for %i = %min to %max step %c1 iter_args(%a = %x) -> (tensor<4xf32>) {
    %s = scf.for %j = %c0 to %big step %c1 iter_args(%b = %a) -> (tensor<4xf32>) {
      %t = math.tanh %b : tensor<4xf32>
      scf.yield %t : tensor<4xf32>
    }
    scf.yield %s : tensor<4xf32>
  }
  %g = remat.backward {
    %m = arith.mulf %r, %r : tensor<4xf32>
    %n = scf.for %i = %c5 to %c2 step %c1 iter_args(%y = %m) -> (tensor<4xf32>) {
      %y2 = arith.mulf %y, %y : tensor<4xf32>
      scf.yield %y2 : tensor<4xf32>
    }
    %d = scf.for %i = %c5 to %c2 step %cm1 iter_args(%y = %n) -> (tensor<4xf32>) {
      %y2 = arith.mulf %y, %y : tensor<4xf32>
      scf.yield %y2 : tensor<4xf32>
    }
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %r, %g : tensor<4xf32>, tensor<4xf32>
}
