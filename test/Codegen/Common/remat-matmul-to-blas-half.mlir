// RUN: remat-opt %s -remat-matmul-to-blas | FileCheck %s
// RUN: remat-opt %s -remat-matmul-to-cublas | FileCheck %s --check-prefix=CUDA

// Checks that matmuls of bf16 or f16 inputs into an f32 result (autocast's)
// call the runtime's 2-byte entry points with the inputs' own element type
// (the CPU converts them to f32 copies, CUDA calls cublasGemmEx with f32
// compute), and that a 2-byte result or mixed input types stay linalg ops.
// CHECK-LABEL: func.func @half_matmuls(
// CHECK:         %[[CA:.*]] = memref.cast %{{.*}} : memref<8x16xbf16> to memref<?x?xbf16, strided<[?, ?], offset: ?>>
// CHECK:         %[[CB:.*]] = memref.cast %{{.*}} : memref<16x4xbf16> to memref<?x?xbf16, strided<[?, ?], offset: ?>>
// CHECK:         %[[CC:.*]] = memref.cast %{{.*}} : memref<8x4xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK:         call @remat_matmul_bf16(%[[CA]], %[[CB]], %[[CC]])
// CHECK:         call @remat_matmul_f16(
// CHECK:         call @remat_batch_matmul_bf16(
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<8x16xbf16>, memref<16x4xbf16>) outs(%{{.*}} : memref<8x4xbf16>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<8x16xbf16>, memref<16x4xf16>)
// CHECK:       func.func private @remat_matmul_bf16(memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CUDA:          call @remat_cuda_matmul_bf16(
// CUDA:          call @remat_cuda_matmul_f16(
// CUDA:          call @remat_cuda_batch_matmul_bf16(
// CUDA:        func.func private @remat_cuda_matmul_bf16(memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>)
func.func @half_matmuls(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x4xf32>,
                        %ha: memref<8x16xf16>, %hb: memref<16x4xf16>,
                        %ba: memref<2x8x16xbf16>, %bb: memref<2x16x4xbf16>, %bc: memref<2x8x4xf32>,
                        %c16: memref<8x4xbf16>) {
  linalg.matmul ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>)
  linalg.matmul ins(%ha, %hb : memref<8x16xf16>, memref<16x4xf16>) outs(%c : memref<8x4xf32>)
  linalg.batch_matmul ins(%ba, %bb : memref<2x8x16xbf16>, memref<2x16x4xbf16>) outs(%bc : memref<2x8x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c16 : memref<8x4xbf16>)
  linalg.matmul ins(%a, %hb : memref<8x16xbf16>, memref<16x4xf16>) outs(%c : memref<8x4xf32>)
  return
}
