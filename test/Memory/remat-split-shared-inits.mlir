// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-split-shared-inits))' | FileCheck %s

// Checks that every destination-style op that writes into a shared fresh
// init (an empty tensor, or one filled with a scalar) gets its own copy of
// the chain right before it, and that the original chain stays only for the
// op that reads it as an input (%s): no buffer is kept alive to be copied.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0.0
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%[[C0]] : f32) outs(%[[E]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[Z1:.*]] = linalg.fill ins(%[[C0]] : f32) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = linalg.matmul ins(%[[X]], %[[W]] : {{.*}}) outs(%[[Z1]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[N:.*]] = linalg.map { math.tanh } ins(%[[A]] : tensor<4x8xf32>) outs(%[[E2]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[E3:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[Z3:.*]] = linalg.fill ins(%[[C0]] : f32) outs(%[[E3]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[B:.*]] = linalg.matmul ins(%[[N]], %[[W]] : {{.*}}) outs(%[[Z3]] : tensor<4x8xf32>)
// CHECK-NEXT: arith.addf %[[Z]], %[[B]]
func.func @shared(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = linalg.map { math.tanh } ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>)
  %b = linalg.matmul ins(%n, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = arith.addf %z, %b : tensor<4x8xf32>
  return %a, %n, %b, %s : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Checks that an init holding data (an accumulator) is left alone, and that
// a chain with no user left goes.
// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[ACC:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = linalg.matmul ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ACC]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: linalg.map { math.tanh } ins(%[[A]] : tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK-NOT: tensor.empty
func.func @accumulate(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = linalg.map { math.tanh } ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>)
  return %n : tensor<4x8xf32>
}

// -----

// Checks that an init that is a splat constant (an embedding gradient's
// zeros, as the PyTorch exporter writes them) becomes a fill of its scalar
// right before each writer, so that bufferization makes no global of it to
// copy from; a use as an input keeps the constant, and a non-splat constant
// init is left alone.
// CHECK-LABEL: func.func @splat
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32>)
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<4x8xf32>
// CHECK-DAG: %[[DATA:.*]] = arith.constant dense<{{\[}}[1.0
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[Z:.*]] = linalg.fill ins(%[[C0]] : f32) outs(%[[E]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = linalg.matmul ins(%[[X]], %[[W]] : {{.*}}) outs(%[[Z]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[B:.*]] = linalg.matmul ins(%[[X]], %[[W]] : {{.*}}) outs(%[[DATA]] : tensor<4x8xf32>)
// CHECK-NEXT: arith.addf %[[ZEROS]], %[[A]]
func.func @splat(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zeros = arith.constant dense<0.0> : tensor<4x8xf32>
  %data = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
      [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
      [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
      [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 9.0]]> : tensor<4x8xf32>
  %a = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%zeros : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%data : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = arith.addf %zeros, %a : tensor<4x8xf32>
  return %s, %b : tensor<4x8xf32>, tensor<4x8xf32>
}
