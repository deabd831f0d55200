// RUN: remat-opt %s -pass-pipeline='builtin.module(func.func(remat-map-to-gpu))' | FileCheck %s

// Checks what -remat-map-to-gpu makes of a bufferized step, without a GPU:
// a global that a linalg op reads gets a device copy, allocated and
// uploaded (gpu.memcpy, not a host copy into device memory) before the op
// and freed after it; the elementwise op becomes a grid of
// 256-thread blocks over its 32 elements, with a bounds check; the
// reduction to a scalar, 32 terms (too few for a block per output), runs
// sequentially in one thread (its order does not depend on the launch); the
// memref.copy is a kernel of its own, not a host memcpy.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: memref<8x4xf32>, %[[Y:.*]]: memref<8x4xf32>, %[[S:.*]]: memref<f32>)
// CHECK: %[[G:.*]] = memref.get_global @table : memref<4xf32>
// CHECK-NEXT: %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[W:.*]] = gpu.wait async
// CHECK-NEXT: %[[M:.*]] = gpu.memcpy async [%[[W]]] %[[D]], %[[G]] : memref<4xf32>, memref<4xf32>
// CHECK-NEXT: gpu.wait [%[[M]]]
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

// A reduction with few outputs and many terms each (a bias gradient summed
// in float64) becomes one block per output: 3 outputs get 1024 threads
// each, every thread folds every 1024th row into a private accumulator from
// the combiner's neutral element, a tree in shared memory halves the values
// with a barrier after each level, and thread 0 adds the total to the output.
// CHECK-LABEL: func.func @bias_gradient
// CHECK-SAME: (%[[G:.*]]: memref<4096x3xf32>, %[[DB:.*]]: memref<3xf64>)
// CHECK: %[[NB:.*]] = arith.constant 3 : index
// CHECK: %[[NT:.*]] = arith.constant 1024 : index
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[NB]], {{.*}} threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[NT]], {{.*}} workgroup(%[[SH:.*]] : memref<1024xf64, #gpu.address_space<workgroup>>)
// CHECK: %[[COL:.*]] = arith.remui %[[B]]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK: %[[ACC:.*]] = scf.for %[[R:.*]] = %[[T]] to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[ZERO]]) -> (f64)
// CHECK: %[[V:.*]] = memref.load %[[G]]
// CHECK: %[[E:.*]] = arith.extf %[[V]]
// CHECK: %[[S:.*]] = arith.addf %[[E]], %[[A]] : f64
// CHECK: scf.yield %[[S]]
// CHECK: memref.store %[[ACC]], %[[SH]][%[[T]]]
// CHECK-NEXT: gpu.barrier
// CHECK: arith.constant 512 : index
// CHECK: scf.if
// CHECK: arith.addf
// CHECK: gpu.barrier
// CHECK: arith.constant 1 : index
// CHECK: scf.if
// CHECK: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[T]]
// CHECK: scf.if %[[FIRST]]
// CHECK: %[[INIT:.*]] = memref.load %[[DB]]
// CHECK: %[[TOTAL:.*]] = memref.load %[[SH]]
// CHECK: %[[NEW:.*]] = arith.addf %[[INIT]], %[[TOTAL]] : f64
// CHECK: memref.store %[[NEW]], %[[DB]]
// CHECK: gpu.terminator
func.func @bias_gradient(%g: memref<4096x3xf32>, %db: memref<3xf64>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<4096x3xf32>) outs(%db : memref<3xf64>) {
  ^bb0(%a: f32, %acc: f64):
    %e = arith.extf %a : f32 to f64
    %s = arith.addf %e, %acc : f64
    linalg.yield %s : f64
  }
  return
}

// A reduction whose combiner has no tree (acc - x), and one too short for a
// block, keep the loop nests of the elementwise mapping.
// CHECK-LABEL: func.func @no_block_reduction
// CHECK-NOT: gpu.launch
// CHECK: arith.subf
// CHECK: arith.addf
// CHECK: return
func.func @no_block_reduction(%x: memref<4096xf32>, %s: memref<f32>, %y: memref<8x32xf32>, %t: memref<8xf32>) {
  linalg.reduce ins(%x : memref<4096xf32>) outs(%s : memref<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %d = arith.subf %acc, %a : f32
      linalg.yield %d : f32
    }
  linalg.reduce ins(%y : memref<8x32xf32>) outs(%t : memref<8xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %d = arith.addf %a, %acc : f32
      linalg.yield %d : f32
    }
  return
}

// An op without loops (a loss's final update) runs in a one-thread grid:
// on the host its loads and stores would read device memory.
// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[A:.*]]: memref<f32>, %[[B:.*]]: memref<f64>)
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[ONE]])
// CHECK-NEXT: scf.parallel
// CHECK: %[[X:.*]] = memref.load %[[B]][]
// CHECK-NEXT: %[[Y:.*]] = memref.load %[[A]][]
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[X]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[T]], %[[Y]]
// CHECK-NEXT: memref.store %[[S]], %[[A]][]
// CHECK: processor = thread_x
// CHECK: processor = block_x
// CHECK-NEXT: return
func.func @scalar(%a: memref<f32>, %b: memref<f64>) {
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                  iterator_types = []}
      ins(%b : memref<f64>) outs(%a : memref<f32>) {
  ^bb0(%x: f64, %o: f32):
    %t = arith.truncf %x : f64 to f32
    %s = arith.addf %t, %o : f32
    linalg.yield %s : f32
  }
  return
}
