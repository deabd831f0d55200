// RUN: remat-opt %s -split-input-file -remat-cuda-host-allocs -verify-diagnostics | FileCheck %s

// Checks that the allocator the host code calls after
// -finalize-memref-to-llvm{use-generic-functions} is renamed, declarations
// and calls alike, to the CUDA runtime's counting device allocator, and that
// other functions keep their names.
// CHECK-LABEL: llvm.func @remat_cuda_alloc(i64) -> !llvm.ptr
// CHECK-NEXT: llvm.func @remat_cuda_aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK-NEXT: llvm.func @remat_cuda_free(!llvm.ptr)
// CHECK-NEXT: llvm.func @memrefCopy(i64, !llvm.ptr, !llvm.ptr)
// CHECK-LABEL: llvm.func @step
// CHECK: %[[A:.*]] = llvm.call @remat_cuda_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: %[[B:.*]] = llvm.call @remat_cuda_aligned_alloc(%{{.*}}, %{{.*}}) : (i64, i64) -> !llvm.ptr
// CHECK: llvm.call @memrefCopy
// CHECK: llvm.call @remat_cuda_free(%[[A]]) : (!llvm.ptr) -> ()
// CHECK: llvm.call @remat_cuda_free(%[[B]]) : (!llvm.ptr) -> ()
// CHECK-NOT: _mlir_memref_to_llvm
module {
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
  llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> !llvm.ptr
  llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
  llvm.func @memrefCopy(i64, !llvm.ptr, !llvm.ptr)
  llvm.func @step(%n: i64) {
    %a = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
    %c64 = llvm.mlir.constant(64 : i64) : i64
    %b = llvm.call @_mlir_memref_to_llvm_aligned_alloc(%c64, %n) : (i64, i64) -> !llvm.ptr
    llvm.call @memrefCopy(%n, %a, %b) : (i64, !llvm.ptr, !llvm.ptr) -> ()
    llvm.call @_mlir_memref_to_llvm_free(%a) : (!llvm.ptr) -> ()
    llvm.call @_mlir_memref_to_llvm_free(%b) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// Checks that a module defining the runtime's name already is refused, not
// given two functions of one name.
// expected-error @+1 {{cannot route '_mlir_memref_to_llvm_alloc' to the CUDA runtime: 'remat_cuda_alloc' already exists}}
module {
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
  llvm.func @remat_cuda_alloc(i64) -> !llvm.ptr
}
