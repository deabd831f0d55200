// RUN: remat-opt %s -pass-pipeline='builtin.module(func.func(remat-map-to-gpu))' | FileCheck %s

// Checks what -remat-map-to-gpu makes of a bufferized step, without a GPU:
// a global that a linalg op reads gets a device copy, allocated and filled
// before the op and freed after it; the elementwise op becomes a grid of
// 256-thread blocks over its 32 elements, with a bounds check; the
// reduction to a scalar runs sequentially in one thread (its order does not
// depend on the launch); the memref.copy is a kernel of its own, not a host
// memcpy.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: memref<8x4xf32>, %[[Y:.*]]: memref<8x4xf32>, %[[S:.*]]: memref<f32>)
// CHECK: %[[G:.*]] = memref.get_global @table : memref<4xf32>
// CHECK-NEXT: %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[G]], %[[D]]
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK-NEXT: %[[BLOCKS:.*]] = arith.ceildivui %[[N:.*]], %[[C256]] : index
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%[[BLOCKS]])
// CHECK-NEXT: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%{{.*}})
// CHECK: %[[I:.*]] = arith.addi
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[N]] : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK: memref.load %[[X]]
// CHECK: memref.load %[[D]]
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NEXT: memref.dealloc %[[D]] : memref<4xf32>
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK: memref.load %[[Y]]
// CHECK: memref.load %[[S]][]
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[S]][]
// CHECK: processor = thread_x
// CHECK: processor = block_x
// CHECK-NOT: memref.copy
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: %[[V:.*]] = memref.load %[[X]]
// CHECK: memref.store %[[V]], %[[Y]]
// CHECK: processor = block_x
// CHECK-NEXT: return
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @step(%x: memref<8x4xf32>, %y: memref<8x4xf32>, %s: memref<f32>) {
  %g = memref.get_global @table : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %g : memref<8x4xf32>, memref<4xf32>) outs(%y : memref<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  linalg.reduce ins(%y : memref<8x4xf32>) outs(%s : memref<f32>) dimensions = [0, 1]
    (%a: f32, %acc: f32) {
      %t = arith.addf %a, %acc : f32
      linalg.yield %t : f32
    }
  memref.copy %x, %y : memref<8x4xf32> to memref<8x4xf32>
  return
}
