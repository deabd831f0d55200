// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-split-deallocs))' | FileCheck %s

// Checks the end-of-block dealloc of a straight-line step: the buffer no
// retained value views is freed, the returned one (retained directly) and
// the one returned through a view stay, their results become true, and the
// retained argument's result false.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[ARG:[^:]*]]: memref<4xf32>
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK:         %[[B:.*]] = memref.alloc()
// CHECK:         %[[C:.*]] = memref.alloc()
// CHECK-NOT:     bufferization.dealloc
// CHECK:         memref.dealloc %[[A]] : memref<4xf32>
// CHECK-NEXT:    %[[T0:.*]] = arith.constant true
// CHECK-NEXT:    %[[T1:.*]] = arith.constant true
// CHECK-NEXT:    %[[F:.*]] = arith.constant false
// CHECK-NEXT:    return %[[B]], %{{.*}}, %[[ARG]], %[[T0]], %[[T1]], %[[F]]
func.func @step(%arg: memref<4xf32>) -> (memref<4xf32>, memref<2xf32>, memref<4xf32>, i1, i1, i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  %v = memref.subview %c[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  %w = memref.cast %v : memref<2xf32, strided<[1], offset: 1>> to memref<2xf32, strided<[?], offset: ?>>
  %x = memref.alloc() : memref<2xf32>
  memref.copy %w, %x : memref<2xf32, strided<[?], offset: ?>> to memref<2xf32>
  %r:3 = bufferization.dealloc (%a, %b, %c : memref<4xf32>, memref<4xf32>, memref<4xf32>)
      if (%true, %true, %true) retain (%b, %v, %arg : memref<4xf32>, memref<2xf32, strided<[1], offset: 1>>, memref<4xf32>)
  return %b, %x, %arg, %r#0, %r#1, %r#2 : memref<4xf32>, memref<2xf32>, memref<4xf32>, i1, i1, i1
}

// -----

// Checks that a conditional operand is left to the upstream simplification.
// CHECK-LABEL: func.func @conditional(
// CHECK:         bufferization.dealloc (%{{.*}} : memref<4xf32>) if (%{{.*}})
// CHECK-NOT:     memref.dealloc
func.func @conditional(%cond: i1) {
  %a = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%a : memref<4xf32>) if (%cond)
  return
}

// -----

// Checks that an operand that is not an allocation (a view, which may
// alias another operand) is left alone.
// CHECK-LABEL: func.func @view_operand(
// CHECK:         bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<f32>)
// CHECK-NOT:     memref.dealloc
func.func @view_operand() {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %base, %offset, %sizes, %strides = memref.extract_strided_metadata %a : memref<4xf32> -> memref<f32>, index, index, index
  bufferization.dealloc (%a, %base : memref<4xf32>, memref<f32>) if (%true, %true)
  return
}

// -----

// Checks that a retained value of unknown origin (a select between two
// buffers may be either) leaves the dealloc alone.
// CHECK-LABEL: func.func @unknown_retained(
// CHECK:         bufferization.dealloc (%{{.*}} : memref<4xf32>) if (%{{.*}}) retain (%{{.*}} : memref<4xf32>)
// CHECK-NOT:     memref.dealloc
func.func @unknown_retained(%c: i1, %arg: memref<4xf32>) -> memref<4xf32> {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %s = arith.select %c, %a, %arg : memref<4xf32>
  %r = bufferization.dealloc (%a : memref<4xf32>) if (%true) retain (%s : memref<4xf32>)
  return %s : memref<4xf32>
}
