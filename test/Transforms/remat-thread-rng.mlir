// RUN: remat-opt %s -split-input-file -remat-thread-rng | FileCheck %s

// Checks that offsets follow program order, forward then backward, each op
// reserving its element count rounded up to a multiple of 4 (15 -> 16,
// 2 -> 4, 8 -> 8), and that the seed argument is used.
// CHECK-LABEL: func.func @offsets(
// CHECK-SAME:      %[[SEED:.*]]: i64 {remat.rng_seed})
// CHECK:         %[[O0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %{{.*}} = remat.philox_uniform %[[SEED]], %[[O0]] : tensor<3x5xf32>
// CHECK:         %[[O1:.*]] = arith.constant 16 : i64
// CHECK-NEXT:    %{{.*}} = remat.philox_uniform %[[SEED]], %[[O1]] : tensor<2xf16>
// CHECK:         remat.backward {
// CHECK:           %[[O2:.*]] = arith.constant 20 : i64
// CHECK-NEXT:      %{{.*}} = remat.philox_uniform %[[SEED]], %[[O2]] : tensor<8xf32>
// CHECK-NOT:     remat.rng_uniform
func.func @offsets(%seed: i64 {remat.rng_seed}) -> (tensor<3x5xf32>, tensor<2xf16>, tensor<8xf32>) {
  %a = remat.rng_uniform : tensor<3x5xf32>
  %b = remat.rng_uniform : tensor<2xf16>
  %g = remat.backward {
    %c = remat.rng_uniform : tensor<8xf32>
    remat.yield %c : tensor<8xf32>
  } : tensor<8xf32>
  return %a, %b, %g : tensor<3x5xf32>, tensor<2xf16>, tensor<8xf32>
}

// -----

// Checks that the random op's attributes carry over and that the offset
// constant joins its segment, so that recomputation clones it.
// CHECK-LABEL: func.func @attributes(
// CHECK:         %[[O:.*]] = arith.constant {remat.segment = [0, 1]} 0 : i64
// CHECK-NEXT:    remat.philox_uniform %{{.*}}, %[[O]] {remat.name = "mask", remat.segment = [0, 1]} : tensor<4xf32>
func.func @attributes(%seed: i64 {remat.rng_seed}) -> tensor<4xf32> {
  %a = remat.rng_uniform {remat.segment = [0, 1], remat.name = "mask"} : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// Checks that a remat.rng_seed op serves as the seed when there is no seed
// argument, moved to the entry so that it dominates the first random op.
// CHECK-LABEL: func.func @seed_op(
// CHECK-NEXT:    %[[S:.*]] = remat.rng_seed
// CHECK:         remat.philox_uniform %[[S]], %{{.*}} : tensor<4xf32>
// CHECK:         remat.philox_uniform %[[S]], %{{.*}} : tensor<4xf32>
func.func @seed_op() -> (tensor<4xf32>, tensor<4xf32>, i64) {
  %a = remat.rng_uniform : tensor<4xf32>
  %s = remat.rng_seed
  %b = remat.rng_uniform : tensor<4xf32>
  return %a, %b, %s : tensor<4xf32>, tensor<4xf32>, i64
}

// -----

// Checks that functions without random ops are left alone, seed or not.
// CHECK-LABEL: func.func @no_random(
// CHECK-NEXT:    return
func.func @no_random(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
