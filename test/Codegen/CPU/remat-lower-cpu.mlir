// RUN: remat-opt %s -remat-lower-cpu | FileCheck %s
// RUN: remat-opt %s -remat-lower-cpu="use-blas=false" | FileCheck %s --check-prefix=LOOPS
// RUN: remat-opt %s -remat-lower-cpu="approximate-math=false" | FileCheck %s --check-prefix=LIBM

// Checks that a whole step (random op, matmul, backward region with a
// barrier) lowers to the LLVM dialect alone, with its heap buffers in one
// arena from the runtime's counting allocator (the step returns views into
// it, so the caller frees it), and matmuls calling the BLAS glue (or loops
// without it); tanh is a polynomial (-remat-approximate-math) unless
// approximate-math=false leaves it to libm.
// CHECK-LABEL: llvm.func @step(
// CHECK-NOT:     remat.
// CHECK-NOT:     memref.
// CHECK-NOT:     linalg.
// CHECK:         llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECK-NOT:     llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECK:         llvm.call @remat_matmul_f32
// CHECK-NOT:     llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECK-NOT:     llvm.call @_mlir_memref_to_llvm_free
// CHECK-NOT:     tanh
// CHECK:         llvm.return
// CHECK-NOT:     tanh
// LOOPS-LABEL: llvm.func @step(
// LOOPS-NOT:     remat_matmul_f32
// LOOPS:         llvm.return
// LIBM:          llvm.intr.tanh
func.func @step(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %seed: i64 {remat.rng_seed})
    -> (tensor<4x16xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>)
         outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  %a = math.tanh %h : tensor<4x16xf32>
  %off = arith.constant 0 : i64
  %u = remat.philox_uniform %seed, %off : tensor<4x16xf32>
  %d = arith.mulf %a, %u : tensor<4x16xf32>
  %g = remat.backward {
    %b:2 = remat.barrier %x, %d : tensor<4x8xf32>, tensor<4x16xf32>
    %et = tensor.empty() : tensor<8x4xf32>
    %t = linalg.transpose ins(%b#0 : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) permutation = [1, 0]
    %ez = tensor.empty() : tensor<8x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%ez : tensor<8x16xf32>) -> tensor<8x16xf32>
    %gw = linalg.matmul ins(%t, %b#1 : tensor<8x4xf32>, tensor<4x16xf32>)
            outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    remat.yield %gw : tensor<8x16xf32>
  } : tensor<8x16xf32>
  return %d, %g : tensor<4x16xf32>, tensor<8x16xf32>
}
