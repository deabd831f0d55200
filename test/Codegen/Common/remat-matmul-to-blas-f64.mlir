// RUN: remat-opt %s -remat-matmul-to-blas | FileCheck %s
// RUN: remat-opt %s -remat-matmul-to-cublas | FileCheck %s --check-prefix=CUDA

// Checks that f64 matmuls and batch matmuls (a float64 step's) call the CPU
// runtime's f64 entry points with f64 inputs and result, a transposed input
// as a transposed view, and that f32 inputs into an f64 result stay a
// linalg op. The CUDA runtime has no f64 entry points: there every f64
// matmul stays a linalg op.
// CHECK-LABEL: func.func @f64_matmuls(
// CHECK:         %[[CA:.*]] = memref.cast %{{.*}} : memref<8x16xf64> to memref<?x?xf64, strided<[?, ?], offset: ?>>
// CHECK:         %[[CB:.*]] = memref.cast %{{.*}} : memref<16x4xf64> to memref<?x?xf64, strided<[?, ?], offset: ?>>
// CHECK:         %[[CC:.*]] = memref.cast %{{.*}} : memref<8x4xf64> to memref<?x?xf64, strided<[?, ?], offset: ?>>
// CHECK:         call @remat_matmul_f64(%[[CA]], %[[CB]], %[[CC]])
// CHECK:         %[[T:.*]] = memref.transpose %{{.*}} (d0, d1) -> (d1, d0) : memref<4x16xf64> to memref<16x4xf64, strided<[1, 16]>>
// CHECK:         %[[CT:.*]] = memref.cast %[[T]] : memref<16x4xf64, strided<[1, 16]>> to memref<?x?xf64, strided<[?, ?], offset: ?>>
// CHECK:         call @remat_matmul_f64(%{{.*}}, %[[CT]], %{{.*}})
// CHECK:         call @remat_batch_matmul_f64(
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<8x16xf32>, memref<16x4xf32>) outs(%{{.*}} : memref<8x4xf64>)
// CHECK:       func.func private @remat_matmul_f64(memref<?x?xf64, strided<[?, ?], offset: ?>>, memref<?x?xf64, strided<[?, ?], offset: ?>>, memref<?x?xf64, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK:       func.func private @remat_batch_matmul_f64(memref<?x?x?xf64, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf64, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf64, strided<[?, ?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CUDA-LABEL:  func.func @f64_matmuls(
// CUDA-NOT:      call
// CUDA:          linalg.matmul ins(%{{.*}}, %{{.*}} : memref<8x16xf64>, memref<16x4xf64>)
// CUDA:          linalg.matmul indexing_maps = {{.*}} ins(%{{.*}}, %{{.*}} : memref<8x16xf64>, memref<4x16xf64>)
// CUDA:          linalg.batch_matmul ins(%{{.*}}, %{{.*}} : memref<2x8x16xf64>
func.func @f64_matmuls(%a: memref<8x16xf64>, %b: memref<16x4xf64>, %c: memref<8x4xf64>,
                       %bt: memref<4x16xf64>,
                       %ba: memref<2x8x16xf64>, %bb: memref<2x16x4xf64>, %bc: memref<2x8x4xf64>,
                       %fa: memref<8x16xf32>, %fb: memref<16x4xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf64>, memref<16x4xf64>) outs(%c : memref<8x4xf64>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                 affine_map<(d0, d1, d2) -> (d1, d2)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %bt : memref<8x16xf64>, memref<4x16xf64>) outs(%c : memref<8x4xf64>)
  linalg.batch_matmul ins(%ba, %bb : memref<2x8x16xf64>, memref<2x16x4xf64>) outs(%bc : memref<2x8x4xf64>)
  linalg.matmul ins(%fa, %fb : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf64>)
  return
}
