// RUN: remat-opt %s -pass-pipeline='builtin.module(func.func(remat-strip-barriers))' | FileCheck %s

// Checks that barriers on buffers are replaced by their operands.
// CHECK-LABEL: func.func @strip(
// CHECK-SAME:      %[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>)
// CHECK-NOT:     remat.barrier
// CHECK:         memref.copy %[[A]], %[[B]]
func.func @strip(%a: memref<4xf32>, %b: memref<4xf32>) {
  %x:2 = remat.barrier %a, %b : memref<4xf32>, memref<4xf32>
  memref.copy %x#0, %x#1 : memref<4xf32> to memref<4xf32>
  return
}
