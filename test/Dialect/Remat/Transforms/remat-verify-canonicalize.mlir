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

// -----

// Checks that -remat-verify accepts a recomputation whose operand
// canonicalization rebuilt in the forward and in the backward alike: the two
// transposes fold into one new op, without `remat.id` or `remat.clone_of`,
// on each side (GPT-2's attention reshapes after -cse -canonicalize).
// CHECK-LABEL: func.func @rebuilt_operand(
// CHECK:         %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]{{ *$}}
// CHECK:         math.exp %[[T]] {remat.id = 2 : i64, remat.segment = 0 : i64}
// CHECK:         remat.backward
// CHECK:           %[[TR:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]{{ *$}}
// CHECK:           math.exp %[[TR]] {remat.clone_of = 2 : i64}
func.func @rebuilt_operand(%x: tensor<2x3x4xf32>, %dy: tensor<4x2x3xf32>) -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>) {
  %i1 = tensor.empty() : tensor<3x2x4xf32>
  %t1 = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%i1 : tensor<3x2x4xf32>) permutation = [1, 0, 2] {remat.segment = 0 : i64}
  %i2 = tensor.empty() : tensor<4x2x3xf32>
  %t2 = linalg.transpose ins(%t1 : tensor<3x2x4xf32>) outs(%i2 : tensor<4x2x3xf32>) permutation = [2, 1, 0] {remat.segment = 0 : i64}
  %e = math.exp %t2 {remat.segment = 0 : i64} : tensor<4x2x3xf32>
  %g = remat.backward {
    %a = arith.mulf %dy, %e : tensor<4x2x3xf32>
    remat.yield %a : tensor<4x2x3xf32>
  } : tensor<4x2x3xf32>
  return %e, %g : tensor<4x2x3xf32>, tensor<4x2x3xf32>
}
