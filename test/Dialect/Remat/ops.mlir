// RUN: remat-opt %s | FileCheck %s
// RUN: remat-opt %s | remat-opt | FileCheck %s
// RUN: remat-opt %s -mlir-print-op-generic | remat-opt | FileCheck %s
// RUN: remat-opt %s -emit-bytecode | remat-opt | FileCheck %s

// Checks that a whole training step round-trips: segment and policy
// attributes, both random ops, the seed argument, the barrier and the
// backward region with its yield.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x32xf32>,
// CHECK-SAME:      %[[SEED:.*]]: i64 {remat.rng_seed})
func.func @step(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %seed: i64 {remat.rng_seed})
    -> (tensor<8x32xf32>, tensor<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  // CHECK: %[[H:.*]] = linalg.matmul {remat.segment = 0 : i64}
  %h = linalg.matmul {remat.segment = 0 : i64}
         ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>)
         outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  // CHECK: %[[A:.*]] = math.tanh %[[H]] {remat.policy = "save", remat.segment = [0, 1]}
  %a = math.tanh %h {remat.segment = [0, 1], remat.policy = "save"} : tensor<8x32xf32>
  // CHECK: %[[U:.*]] = remat.rng_uniform {remat.name = "mask"} : tensor<8x32xf32>
  %u = remat.rng_uniform {remat.name = "mask"} : tensor<8x32xf32>
  // CHECK: %[[OFF:.*]] = arith.constant 256 : i64
  %off = arith.constant 256 : i64
  // CHECK: %[[P:.*]] = remat.philox_uniform %[[SEED]], %[[OFF]] : tensor<8x32xf32>
  %p = remat.philox_uniform %seed, %off : tensor<8x32xf32>
  // CHECK: %[[S:.*]] = remat.rng_seed
  %s = remat.rng_seed
  // CHECK: %[[G:.*]] = remat.backward {
  %g = remat.backward {
    // CHECK: %[[B:.*]]:2 = remat.barrier %[[X]], %[[A]] : tensor<8x16xf32>, tensor<8x32xf32>
    %b:2 = remat.barrier %x, %a : tensor<8x16xf32>, tensor<8x32xf32>
    %et = tensor.empty() : tensor<16x8xf32>
    %t = linalg.transpose ins(%b#0 : tensor<8x16xf32>) outs(%et : tensor<16x8xf32>) permutation = [1, 0]
    %ez = tensor.empty() : tensor<16x32xf32>
    %gw = linalg.matmul ins(%t, %b#1 : tensor<16x8xf32>, tensor<8x32xf32>)
            outs(%ez : tensor<16x32xf32>) -> tensor<16x32xf32>
    // CHECK: remat.yield %{{.*}} : tensor<16x32xf32>
    remat.yield %gw : tensor<16x32xf32>
  // CHECK: } : tensor<16x32xf32>
  } : tensor<16x32xf32>
  // CHECK: return %[[A]], %[[G]]
  return %a, %g : tensor<8x32xf32>, tensor<16x32xf32>
}

// Checks that a backward region with no results prints without a type list
// and with its implicit terminator elided.
// CHECK-LABEL: func.func @no_results(
// CHECK:         remat.backward {
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @no_results(%x: tensor<4xf32>) {
  remat.backward {
    remat.yield
  }
  return
}

// Checks the f16 and bf16 random tensors and a backward op with attributes.
// CHECK-LABEL: func.func @half_precision(
// CHECK:         remat.rng_uniform : tensor<4x4xf16>
// CHECK:         remat.philox_uniform %{{.*}}, %{{.*}} : tensor<4xbf16>
// CHECK:         remat.backward attributes {tag = "bwd"} {
func.func @half_precision(%seed: i64 {remat.rng_seed}, %off: i64) -> tensor<4xbf16> {
  %u = remat.rng_uniform : tensor<4x4xf16>
  %p = remat.philox_uniform %seed, %off : tensor<4xbf16>
  %g = remat.backward attributes {tag = "bwd"} {
    remat.yield %p : tensor<4xbf16>
  } : tensor<4xbf16>
  return %g : tensor<4xbf16>
}

// -----

// Checks that a well-formed plan verifies and round-trips.
// CHECK-LABEL: func.func @with_plan
// CHECK-SAME: remat.plan = #remat.plan<policy = "budget", segments = 1, predictedPeak = 64, recomputeFlops = 8, budget = 64, lowerBound = 8>
func.func @with_plan(%x: tensor<4xf32>) -> tensor<4xf32> attributes {remat.plan = #remat.plan<policy = "budget", segments = 1, predictedPeak = 64, recomputeFlops = 8, budget = 64, lowerBound = 8>} {
  return %x : tensor<4xf32>
}

// -----

// Checks that a scatter-add of rows round-trips, with and without a skipped
// row, on f32 and bf16, with no position (an empty step's embedding).
// CHECK-LABEL: func.func @scatter_add_rows
// CHECK:         remat.scatter_add_rows %{{.*}} into %{{.*}}[%{{.*}}] skip 0 : tensor<6x4xf32>, tensor<6xi64> into tensor<10x4xf32>
// CHECK:         remat.scatter_add_rows %{{.*}} into %{{.*}}[%{{.*}}] : tensor<6x4xbf16>, tensor<6xi64> into tensor<10x4xbf16>
// CHECK:         remat.scatter_add_rows %{{.*}} into %{{.*}}[%{{.*}}] {tag} : tensor<0x4xf32>, tensor<0xi64> into tensor<10x4xf32>
func.func @scatter_add_rows(%v: tensor<6x4xf32>, %i: tensor<6xi64>, %d: tensor<10x4xf32>,
                            %vh: tensor<6x4xbf16>, %dh: tensor<10x4xbf16>,
                            %v0: tensor<0x4xf32>, %i0: tensor<0xi64>)
    -> (tensor<10x4xf32>, tensor<10x4xbf16>, tensor<10x4xf32>) {
  %a = remat.scatter_add_rows %v into %d[%i] skip 0 : tensor<6x4xf32>, tensor<6xi64> into tensor<10x4xf32>
  %b = remat.scatter_add_rows %vh into %dh[%i] : tensor<6x4xbf16>, tensor<6xi64> into tensor<10x4xbf16>
  %c = remat.scatter_add_rows %v0 into %d[%i0] {tag} : tensor<0x4xf32>, tensor<0xi64> into tensor<10x4xf32>
  return %a, %b, %c : tensor<10x4xf32>, tensor<10x4xbf16>, tensor<10x4xf32>
}
