// RUN: remat-opt %s -split-input-file -remat-conv-to-blas | FileCheck %s
// RUN: remat-opt %s -split-input-file -remat-conv-to-cublas | FileCheck %s --check-prefix=CUDA

// Checks that a convolution of bf16 operands into an f32 result (autocast's,
// the named op widening its inputs in its body) calls the runtime's bf16
// kernel with bf16 views of the image and filter and an f32 view of the
// response; -remat-conv-to-cublas leaves it a loop nest (kernels).
// CHECK-LABEL: func.func @conv_bf16(
// CHECK:         call @remat_conv2d_bf16(
// CHECK-NOT:     linalg.conv
// CHECK:       func.func private @remat_conv2d_bf16(memref<?x?x?x?x?xbf16, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?x?x?xbf16, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, i64, i64, i64, i64)
// CUDA-LABEL:  func.func @conv_bf16(
// CUDA:          linalg.conv_2d_nchw_fchw
func.func @conv_bf16(%x: memref<2x3x9x9xbf16>, %w: memref<4x3x3x3xbf16>, %y: memref<2x4x7x7xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x3x9x9xbf16>, memref<4x3x3x3xbf16>)
                           outs(%y : memref<2x4x7x7xf32>)
  return
}

// -----

// Checks that the exporter's filter gradient of f16 operands (each widened
// by arith.extf before the product, summed in f32) calls the f16
// filter-gradient kernel: image and response f16, filter f32.
// CHECK-LABEL: func.func @filter_grad_f16(
// CHECK:         call @remat_conv2d_filter_grad_f16(
// CHECK-NOT:     linalg.generic
// CHECK:       func.func private @remat_conv2d_filter_grad_f16(memref<?x?x?x?x?xf16, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?x?x?xf16, strided<[?, ?, ?, ?, ?], offset: ?>>, i64, i64, i64, i64)
#dy = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>
#dw = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @filter_grad_f16(%dy: memref<2x4x5x5xf16>, %x: memref<2x3x7x7xf16>, %dw: memref<4x3x3x3xf32>) {
  linalg.generic {indexing_maps = [#dy, #x, #dw],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
    ins(%dy, %x : memref<2x4x5x5xf16>, memref<2x3x7x7xf16>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f16, %b: f16, %o: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Checks that a widened body of mixed input types stays a generic.
// CHECK-LABEL: func.func @mixed_inputs(
// CHECK:         linalg.generic
// CHECK-NOT:     call @remat_conv2d
#dy = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>
#dw = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @mixed_inputs(%dy: memref<2x4x5x5xf16>, %x: memref<2x3x7x7xbf16>, %dw: memref<4x3x3x3xf32>) {
  linalg.generic {indexing_maps = [#dy, #x, #dw],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
    ins(%dy, %x : memref<2x4x5x5xf16>, memref<2x3x7x7xbf16>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f16, %b: bf16, %o: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
