// RUN: remat-opt %s -split-input-file -remat-outline | FileCheck %s

// Checks the split: @f_fwd returns the forward value @f returns, then the
// saved forward values in program order; @f_bwd takes the saved arguments,
// then those, keeps the seed marker and runs the backward region; @f calls
// both, passing saved arguments directly; marks and clone bookkeeping are
// dropped on both sides.
// CHECK-LABEL: func.func private @step_fwd(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4xf32>, %[[SEED:[^:]*]]: i64 {remat.rng_seed})
// CHECK-SAME:      -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK:         %[[A:.*]] = math.tanh %[[X]] : tensor<4xf32>
// CHECK:         %[[B:.*]] = arith.mulf %[[A]], %[[A]] : tensor<4xf32>
// CHECK:         return %[[B]], %[[A]], %[[B]]
// CHECK-LABEL: func.func private @step_bwd(
// CHECK-SAME:      %[[SX:[^:]*]]: tensor<4xf32>, %[[SS:[^:]*]]: i64 {remat.rng_seed}, %[[SA:[^:]*]]: tensor<4xf32>, %[[SB:[^:]*]]: tensor<4xf32>)
// CHECK-SAME:      -> tensor<4xf32>
// CHECK:         %[[R:.*]] = math.tanh %[[SX]] : tensor<4xf32>
// CHECK-NOT:     remat.clone_of
// CHECK:         %[[D:.*]] = arith.mulf %[[R]], %[[SB]]
// CHECK:         %[[E:.*]] = arith.addf %[[D]], %[[SA]]
// CHECK:         return %[[E]] : tensor<4xf32>
// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[FX:[^:]*]]: tensor<4xf32>, %[[FS:[^:]*]]: i64 {remat.rng_seed})
// CHECK:         %[[F:.*]]:3 = call @step_fwd(%[[FX]], %[[FS]])
// CHECK:         %[[G:.*]] = call @step_bwd(%[[FX]], %[[FS]], %[[F]]#1, %[[F]]#2)
// CHECK:         return %[[F]]#0, %[[G]], %[[FX]]
func.func @step(%x: tensor<4xf32>, %seed: i64 {remat.rng_seed})
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.segment = 0 : i64, remat.id = 0 : i64} : tensor<4xf32>
  %b = arith.mulf %a, %a : tensor<4xf32>
  %g = remat.backward {
    %r = math.tanh %x {remat.clone_of = 0 : i64} : tensor<4xf32>
    %off = arith.index_cast %seed : i64 to index
    %d = arith.mulf %r, %b : tensor<4xf32>
    %e = arith.addf %d, %a : tensor<4xf32>
    remat.yield %e : tensor<4xf32>
  } : tensor<4xf32>
  return %b, %g, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that functions without a backward region are left alone.
// CHECK-LABEL: func.func @plain(
// CHECK-NEXT:    return
// CHECK-NOT:   plain_fwd
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
