// RUN: remat-opt %s -split-input-file -remat-chunk-rows="chunk-rows=256 min-bytes=60000" -verify-diagnostics | FileCheck %s
// RUN: remat-opt %s -split-input-file -remat-chunk-rows="chunk-rows=128 min-bytes=60000" 2>&1 | FileCheck %s --check-prefix=DEPTH
// RUN: not remat-opt %s -split-input-file -remat-chunk-rows="chunk-rows=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: chunk-rows must be positive, got 0

// A head over 512 rows and a vocabulary of 33: log-softmax, a loss summed
// over the rows, and in the backward the logits' gradient and both
// products it feeds. The forward moves into the backward region's loop;
// the loss's sum over rows stays outside it, on the whole vector the loop
// writes; dW is carried from chunk to chunk; the loss is yielded.

// CHECK-LABEL: func.func @head
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[G:.*]]:3 = remat.backward {
// CHECK:           %[[DW0:.*]] = linalg.fill {{.*}} -> tensor<33x16xf32>
// CHECK:           %[[R:.*]]:3 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[LSE:.*]] = %{{.*}}, %[[DW:.*]] = %[[DW0]], %[[DH:.*]] = %{{.*}}) -> (tensor<512xf32>, tensor<33x16xf32>, tensor<512x16xf32>)
// CHECK:             %[[H:.*]] = tensor.extract_slice %arg1[%[[I]], 0] [256, 16] [1, 1] : tensor<512x16xf32> to tensor<256x16xf32>
// CHECK:             linalg.matmul ins(%[[H]], %{{.*}} : tensor<256x16xf32>, tensor<16x33xf32>) {{.*}} -> tensor<256x33xf32>
// CHECK:             linalg.reduce {{.*}} outs(%{{.*}} : tensor<256xf32>) dimensions = [1]
// CHECK:             %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<256x33xf32>) outs(%{{.*}} : tensor<33x256xf32>)
// CHECK:             %[[NDW:.*]] = linalg.matmul ins(%[[T]], %[[H]] : tensor<33x256xf32>, tensor<256x16xf32>) outs(%[[DW]] : tensor<33x16xf32>)
// CHECK:             %[[NDH:.*]] = linalg.matmul ins(%{{.*}}, %arg0 : tensor<256x33xf32>, tensor<33x16xf32>) {{.*}} -> tensor<256x16xf32>
// CHECK:             %[[NLSE:.*]] = tensor.insert_slice %{{.*}} into %[[LSE]][%[[I]]] [256] [1] : tensor<256xf32> into tensor<512xf32>
// CHECK:             %[[NDH2:.*]] = tensor.insert_slice %[[NDH]] into %[[DH]][%[[I]], 0] [256, 16] [1, 1]
// CHECK:             scf.yield %[[NLSE]], %[[NDW]], %[[NDH2]]
// CHECK:           }
// CHECK:           %[[LOSS:.*]] = linalg.reduce ins(%[[R]]#0 : tensor<512xf32>) {{.*}} dimensions = [0]
// CHECK:           remat.yield %[[R]]#1, %[[R]]#2, %[[LOSS]] : tensor<33x16xf32>, tensor<512x16xf32>, tensor<f32>
// CHECK:         } : tensor<33x16xf32>, tensor<512x16xf32>, tensor<f32>
// CHECK:         return %[[G]]#2, %[[G]]#0, %[[G]]#1

// Chunks of 128 rows would sum dW over half blocks of the native GEMM's
// 256-deep k blocks: another order, so nothing is chunked.
// DEPTH: remark: chunk-rows: not chunked: a transposed row block is read outside the region (the region stops where a product summed over the rows would add its terms in another order in chunks of 128 rows)
func.func @head(%w: tensor<33x16xf32>, %h: tensor<512x16xf32>, %dy: tensor<f32>)
    -> (tensor<f32>, tensor<33x16xf32>, tensor<512x16xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<16x33xf32>
  %wt = linalg.transpose ins(%w : tensor<33x16xf32>) outs(%e0 : tensor<16x33xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<512x33xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<512x33xf32>) -> tensor<512x33xf32>
  %logits = linalg.matmul ins(%h, %wt : tensor<512x16xf32>, tensor<16x33xf32>) outs(%f1 : tensor<512x33xf32>) -> tensor<512x33xf32>
  %e2 = tensor.empty() : tensor<512xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<512xf32>) -> tensor<512xf32>
  %max = linalg.reduce ins(%logits : tensor<512x33xf32>) outs(%f2 : tensor<512xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %e3 = tensor.empty() : tensor<512x33xf32>
  %bmax = linalg.broadcast ins(%max : tensor<512xf32>) outs(%e3 : tensor<512x33xf32>) dimensions = [1]
  %shifted = arith.subf %logits, %bmax : tensor<512x33xf32>
  %exp = math.exp %shifted : tensor<512x33xf32>
  %e4 = tensor.empty() : tensor<512xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<512xf32>) -> tensor<512xf32>
  %sum = linalg.reduce ins(%exp : tensor<512x33xf32>) outs(%f4 : tensor<512xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %lse = math.log %sum : tensor<512xf32>
  %e5 = tensor.empty() : tensor<512x33xf32>
  %blse = linalg.broadcast ins(%lse : tensor<512xf32>) outs(%e5 : tensor<512x33xf32>) dimensions = [1]
  %logp = arith.subf %shifted, %blse : tensor<512x33xf32>
  %e6 = tensor.empty() : tensor<f32>
  %f6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%lse : tensor<512xf32>) outs(%f6 : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %g:2 = remat.backward {
    // expected-remark @below {{chunk-rows: 26 ops (17 of the forward) over 512 rows in chunks of 256, 3 results out of the loop}}
    %p = math.exp %logp : tensor<512x33xf32>
    %e7 = tensor.empty() : tensor<512x33xf32>
    %bdy = linalg.broadcast ins(%dy : tensor<f32>) outs(%e7 : tensor<512x33xf32>) dimensions = [0, 1]
    %dlogits = arith.mulf %p, %bdy : tensor<512x33xf32>
    %e8 = tensor.empty() : tensor<33x512xf32>
    %dlt = linalg.transpose ins(%dlogits : tensor<512x33xf32>) outs(%e8 : tensor<33x512xf32>) permutation = [1, 0]
    %e9 = tensor.empty() : tensor<33x16xf32>
    %f9 = linalg.fill ins(%zero : f32) outs(%e9 : tensor<33x16xf32>) -> tensor<33x16xf32>
    %dw = linalg.matmul ins(%dlt, %h : tensor<33x512xf32>, tensor<512x16xf32>) outs(%f9 : tensor<33x16xf32>) -> tensor<33x16xf32>
    %e10 = tensor.empty() : tensor<512x16xf32>
    %f10 = linalg.fill ins(%zero : f32) outs(%e10 : tensor<512x16xf32>) -> tensor<512x16xf32>
    %dh = linalg.matmul ins(%dlogits, %w : tensor<512x33xf32>, tensor<33x16xf32>) outs(%f10 : tensor<512x16xf32>) -> tensor<512x16xf32>
    remat.yield %dw, %dh : tensor<33x16xf32>, tensor<512x16xf32>
  } : tensor<33x16xf32>, tensor<512x16xf32>
  return %loss, %g#0, %g#1 : tensor<f32>, tensor<33x16xf32>, tensor<512x16xf32>
}

// -----

// A vocabulary of 32: a chunk's sums along its rows could be split into
// vector lanes where the whole one's are not (their outputs differ in
// size), so the sum and everything it feeds stay unchunked.
// CHECK-LABEL: func.func @even_row
// CHECK-NOT:     scf.for
// DEPTH-LABEL: func.func @even_row
func.func @even_row(%h: tensor<512x16xf32>, %wt: tensor<16x32xf32>)
    -> tensor<512xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e1 = tensor.empty() : tensor<512x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<512x32xf32>) -> tensor<512x32xf32>
  // expected-remark @below {{chunk-rows: not chunked: a large row value is read outside the region (the region stops where a float sum along a row of even length may be split into vector lanes in a chunk and not in the whole)}}
  %logits = linalg.matmul ins(%h, %wt : tensor<512x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<512x32xf32>) -> tensor<512x32xf32>
  %exp = math.exp %logits : tensor<512x32xf32>
  %e4 = tensor.empty() : tensor<512xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<512xf32>) -> tensor<512xf32>
  %sum = linalg.reduce ins(%exp : tensor<512x32xf32>) outs(%f4 : tensor<512xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %g = remat.backward {
    remat.yield %sum : tensor<512xf32>
  } : tensor<512xf32>
  return %g : tensor<512xf32>
}
