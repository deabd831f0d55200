// RUN: remat-opt %s -pass-pipeline='builtin.module(func.func(remat-strided-copies-to-linalg))' | FileCheck %s

// Checks that a copy into a strided view (a padded buffer's interior) and
// one out of it become linalg.copy, and that copies memref-to-llvm does
// with one memcpy (identity layouts, a contiguous strided view) and copies
// of unranked memrefs stay memref.copy.
// CHECK-LABEL: func.func @copies(
// CHECK-SAME:      %[[X:[^:]*]]: memref<2x3xf32>, %[[P:[^:]*]]: memref<4x5xf32>, %[[Y:[^:]*]]: memref<2x3xf32>, %[[U:[^:]*]]: memref<*xf32>, %[[V:[^:]*]]: memref<*xf32>
// CHECK:         %[[SUB:.*]] = memref.subview %[[P]][1, 1] [2, 3] [1, 1]
// CHECK:         linalg.copy ins(%[[X]] : memref<2x3xf32>) outs(%[[SUB]] : memref<2x3xf32, strided<[5, 1], offset: 6>>)
// CHECK:         linalg.copy ins(%[[SUB]] : memref<2x3xf32, strided<[5, 1], offset: 6>>) outs(%[[Y]] : memref<2x3xf32>)
// CHECK:         memref.copy %[[X]], %[[Y]] : memref<2x3xf32> to memref<2x3xf32>
// CHECK:         %[[ROWS:.*]] = memref.subview %[[P]][1, 0] [2, 5] [1, 1]
// CHECK:         memref.copy %[[ROWS]], %{{.*}} : memref<2x5xf32, strided<[5, 1], offset: 5>> to memref<2x5xf32>
// CHECK:         memref.copy %[[U]], %[[V]] : memref<*xf32> to memref<*xf32>
// CHECK-NOT:     linalg.copy
func.func @copies(%x: memref<2x3xf32>, %p: memref<4x5xf32>, %y: memref<2x3xf32>,
                  %u: memref<*xf32>, %v: memref<*xf32>, %z: memref<2x5xf32>) {
  %sub = memref.subview %p[1, 1] [2, 3] [1, 1] : memref<4x5xf32> to memref<2x3xf32, strided<[5, 1], offset: 6>>
  memref.copy %x, %sub : memref<2x3xf32> to memref<2x3xf32, strided<[5, 1], offset: 6>>
  memref.copy %sub, %y : memref<2x3xf32, strided<[5, 1], offset: 6>> to memref<2x3xf32>
  memref.copy %x, %y : memref<2x3xf32> to memref<2x3xf32>
  %rows = memref.subview %p[1, 0] [2, 5] [1, 1] : memref<4x5xf32> to memref<2x5xf32, strided<[5, 1], offset: 5>>
  memref.copy %rows, %z : memref<2x5xf32, strided<[5, 1], offset: 5>> to memref<2x5xf32>
  memref.copy %u, %v : memref<*xf32> to memref<*xf32>
  return
}
