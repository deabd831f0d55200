// RUN: remat-opt %s -split-input-file -remat-checkpoint -cse -canonicalize -remat-verify -verify-diagnostics | FileCheck %s

// Checks that -remat-verify accepts a clone whose original canonicalization
// erased: %t was read only by the backward region, so once its clone took
// its place there the forward op was dead. The clone is still compared when
// the original survives (%e, also returned).
// CHECK-LABEL: func.func @erased_original(
// CHECK-NOT:     math.tanh
// CHECK:         math.exp %{{.*}} {remat.id = 1 : i64, remat.segment = 0 : i64}
// CHECK:         remat.backward
// CHECK:           math.tanh %{{.*}} {remat.clone_of = 0 : i64}
// CHECK:           math.exp %{{.*}} {remat.clone_of = 1 : i64}
func.func @erased_original(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-remark @+1 {{has 'remat.clone_of' = 0 but no op has 'remat.id' = 0 (removed, e.g. as dead after recomputation): it has no memory effects; nothing to compare it with}}
  %t = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %e = math.exp %x {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %a = arith.mulf %dy, %t : tensor<4xf32>
    %b = arith.mulf %a, %e : tensor<4xf32>
    remat.yield %b : tensor<4xf32>
  } : tensor<4xf32>
  return %e, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a dropout mask recomputed from its seed and offset passes
// after its forward original was erased, the offset constant merged with
// the forward's by canonicalization.
// CHECK-LABEL: func.func @erased_random(
// CHECK-NOT:     remat.philox_uniform
// CHECK:         remat.backward
// CHECK:           remat.philox_uniform %{{.*}}, %{{.*}} {remat.clone_of = 0 : i64}
func.func @erased_random(%seed: i64 {remat.rng_seed}, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %off = arith.constant 8 : i64
  // expected-remark @+1 {{has 'remat.clone_of' = 0 but no op has 'remat.id' = 0}}
  %u = remat.philox_uniform %seed, %off {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %a = arith.mulf %x, %u : tensor<4xf32>
    remat.yield %a : tensor<4xf32>
  } : tensor<4xf32>
  return %x, %g : tensor<4xf32>, tensor<4xf32>
}
