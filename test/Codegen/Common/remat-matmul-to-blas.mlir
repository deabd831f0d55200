// RUN: remat-opt %s -remat-matmul-to-blas | FileCheck %s
// RUN: remat-opt %s -remat-matmul-to-cublas | FileCheck %s --check-prefix=CUDA

// Checks that f32 matmuls on buffers call the runtime with fully dynamic
// memrefs, that one declaration serves every call, that a transposed input
// (its map the default one with the last two results swapped) is passed as
// a transposed view, which the runtime hands to sgemm transposed, and that
// integers (f64: remat-matmul-to-blas-f64.mlir) and other maps stay linalg
// ops.
// CHECK-LABEL: func.func @matmuls(
// CHECK-SAME:      %[[A:[^:]*]]: memref<8x16xf32>, %[[B:[^:]*]]: memref<16x4xf32>, %[[C:[^:]*]]: memref<8x4xf32>
// CHECK:         %[[CA:.*]] = memref.cast %[[A]] : memref<8x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK:         %[[CB:.*]] = memref.cast %[[B]]
// CHECK:         %[[CC:.*]] = memref.cast %[[C]]
// CHECK:         call @remat_matmul_f32(%[[CA]], %[[CB]], %[[CC]])
// CHECK:         call @remat_matmul_f32(
// CHECK:         call @remat_batch_matmul_f32(
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<2x2xi32>
// CHECK:         %[[TT:.*]] = memref.transpose %[[T:[a-z0-9]+]] (d0, d1) -> (d1, d0) : memref<16x8xf32> to memref<8x16xf32, strided<[1, 8]>>
// CHECK:         %[[CT:.*]] = memref.cast %[[TT]]
// CHECK:         call @remat_matmul_f32(%[[CT]],
// CHECK:         linalg.matmul indexing_maps
// CHECK:       func.func private @remat_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK:       func.func private @remat_batch_matmul_f32(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
func.func @matmuls(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>,
                   %ba: memref<2x8x16xf32>, %bb: memref<2x16x4xf32>, %bc: memref<2x8x4xf32>,
                   %d: memref<2x2xi32>, %t: memref<16x8xf32>, %ct: memref<4x8xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  linalg.batch_matmul ins(%ba, %bb : memref<2x8x16xf32>, memref<2x16x4xf32>) outs(%bc : memref<2x8x4xf32>)
  linalg.matmul ins(%d, %d : memref<2x2xi32>, memref<2x2xi32>) outs(%d : memref<2x2xi32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                 affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (m, n)>]
    ins(%t, %b : memref<16x8xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                 affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (n, m)>]
    ins(%t, %b : memref<16x8xf32>, memref<16x4xf32>) outs(%ct : memref<4x8xf32>)
  return
}

// -remat-matmul-to-cublas calls the CUDA runtime, a transposed input as a
// transposed view too (cuBLAS reads it with CUBLAS_OP_T), and an operand
// whose innermost stride is not 1 keeps the loop nest the GPU kernels run.
// CUDA-LABEL: func.func @matmuls(
// CUDA:         call @remat_cuda_matmul_f32(
// CUDA:         call @remat_cuda_matmul_f32(
// CUDA:         call @remat_cuda_batch_matmul_f32(
// CUDA:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<2x2xi32>
// CUDA:         memref.transpose %{{.*}} (d0, d1) -> (d1, d0) : memref<16x8xf32> to memref<8x16xf32, strided<[1, 8]>>
// CUDA:         call @remat_cuda_matmul_f32(
// CUDA:         linalg.matmul indexing_maps
// CUDA-LABEL: func.func @strided_operand(
// CUDA-NOT:     call
// CUDA:         linalg.matmul
func.func @strided_operand(%a: memref<8x16xf32, strided<[32, 2]>>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32, strided<[32, 2]>>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}
