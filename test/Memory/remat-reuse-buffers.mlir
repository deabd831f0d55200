// RUN: remat-opt %s -split-input-file -remat-reuse-buffers | FileCheck %s

#id = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (15 - d0)>

// Checks that an elementwise op writes into the buffer of an operand that
// dies at it: %t's buffer takes %r, whose allocation goes, and %t's
// deallocation moves to where %r's was.
// CHECK-LABEL: func.func @dying_operand(
// CHECK:         %[[T:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.generic {{.*}} ins(%[[T]], %{{.*}} : memref<16xf32>, memref<16xf32>) outs(%[[T]] : memref<16xf32>)
// CHECK-NOT:     memref.dealloc
// CHECK:         memref.copy %[[T]], %{{.*}}
// CHECK-NEXT:    memref.dealloc %[[T]]
func.func @dying_operand(%x: memref<16xf32>, %y: memref<16xf32>) {
  %t = memref.alloc() : memref<16xf32>
  memref.copy %x, %t : memref<16xf32> to memref<16xf32>
  %r = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%t, %x : memref<16xf32>, memref<16xf32>) outs(%r : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<16xf32>
  memref.copy %r, %y : memref<16xf32> to memref<16xf32>
  memref.dealloc %r : memref<16xf32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (15 - d0)>

// Checks what stays: an operand used after the op, an operand read in
// reverse (element i would be overwritten before iteration 15 - i reads
// it), an operand of another type, and a result whose payload reads it.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-6: memref.alloc()
func.func @kept(%x: memref<16xf32>, %y: memref<16xf32>, %z: memref<16xf16>) {
  %live = memref.alloc() : memref<16xf32>
  memref.copy %x, %live : memref<16xf32> to memref<16xf32>
  %r0 = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%live : memref<16xf32>) outs(%r0 : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.copy %live, %y : memref<16xf32> to memref<16xf32>
  memref.dealloc %live : memref<16xf32>
  %r1 = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#rev, #id], iterator_types = ["parallel"]}
      ins(%r0 : memref<16xf32>) outs(%r1 : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %r0 : memref<16xf32>
  %h = memref.alloc() : memref<16xf16>
  memref.copy %z, %h : memref<16xf16> to memref<16xf16>
  %r2 = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%h : memref<16xf16>) outs(%r2 : memref<16xf32>) {
  ^bb0(%a: f16, %o: f32):
    %e = arith.extf %a : f16 to f32
    linalg.yield %e : f32
  }
  memref.dealloc %h : memref<16xf16>
  %r3 = memref.alloc() : memref<16xf32>
  memref.copy %r2, %r3 : memref<16xf32> to memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%r2 : memref<16xf32>) outs(%r3 : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  memref.dealloc %r2 : memref<16xf32>
  memref.copy %r1, %y : memref<16xf32> to memref<16xf32>
  memref.copy %r3, %y : memref<16xf32> to memref<16xf32>
  memref.dealloc %r1 : memref<16xf32>
  memref.dealloc %r3 : memref<16xf32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// Checks that an operand with a reshape view (an exported view or flatten)
// read after the op is kept: the op must not overwrite what the view reads.
// CHECK-LABEL: func.func @reshape_view_read_after(
// CHECK:         %[[U:.*]] = memref.alloc() : memref<16xf32>
// CHECK:         %[[Q:.*]] = memref.alloc() : memref<16xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[U]] : memref<16xf32>) outs(%[[Q]] : memref<16xf32>)
// CHECK:         memref.collapse_shape
func.func @reshape_view_read_after(%x: memref<16xf32>, %z: memref<16xf32>) {
  %u = memref.alloc() : memref<16xf32>
  memref.copy %x, %u : memref<16xf32> to memref<16xf32>
  %uv = memref.expand_shape %u [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  %q = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%u : memref<16xf32>) outs(%q : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  %uc = memref.collapse_shape %uv [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  memref.copy %uc, %z : memref<16xf32> to memref<16xf32>
  memref.dealloc %u : memref<16xf32>
  memref.copy %q, %z : memref<16xf32> to memref<16xf32>
  memref.dealloc %q : memref<16xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Checks that an operand read through a reshape view of the result's type
// (an exporter's aten.view before an elementwise op) gives its buffer to
// the result: a 16-element source read as 4x4 takes a 4x4 result, viewed
// through an expansion; a 4x4 source takes a 16-element result written
// through its own 4x4 view, viewed through a collapse. The result's
// deallocation frees the source's allocation.
// CHECK-LABEL: func.func @reshaped_operands(
// CHECK:         %[[S:.*]] = memref.alloc() : memref<16xf32>
// CHECK:         %[[SV:.*]] = memref.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [4, 4]
// CHECK:         %[[R:.*]] = memref.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [4, 4]
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.generic {{.*}} ins(%[[SV]] : memref<4x4xf32>) outs(%[[R]] : memref<4x4xf32>)
// CHECK:         memref.copy %[[R]], %{{.*}}
// CHECK-NEXT:    memref.dealloc %[[S]] : memref<16xf32>
// CHECK:         %[[T:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK:         %[[TC:.*]] = memref.collapse_shape %[[T]] {{\[\[}}0, 1]] : memref<4x4xf32> into memref<16xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         %[[TV:.*]] = memref.expand_shape %[[TC]]
// CHECK:         linalg.generic {{.*}} ins(%[[T]] : memref<4x4xf32>) outs(%[[TV]] : memref<4x4xf32>)
// CHECK:         memref.dealloc %[[T]] : memref<4x4xf32>
func.func @reshaped_operands(%x: memref<16xf32>, %y: memref<4x4xf32>, %z: memref<16xf32>) {
  %s = memref.alloc() : memref<16xf32>
  memref.copy %x, %s : memref<16xf32> to memref<16xf32>
  %sv = memref.expand_shape %s [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  %r = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sv : memref<4x4xf32>) outs(%r : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  memref.dealloc %s : memref<16xf32>
  memref.copy %r, %y : memref<4x4xf32> to memref<4x4xf32>
  memref.dealloc %r : memref<4x4xf32>
  %t = memref.alloc() : memref<4x4xf32>
  memref.copy %y, %t : memref<4x4xf32> to memref<4x4xf32>
  %q = memref.alloc() : memref<16xf32>
  %qv = memref.expand_shape %q [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<4x4xf32>) outs(%qv : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  memref.dealloc %t : memref<4x4xf32>
  memref.copy %q, %z : memref<16xf32> to memref<16xf32>
  memref.dealloc %q : memref<16xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// Checks what stays with views: a source read through a view of another
// shape than the result's (a transpose map), one also read through a
// second view after the op, and a source allocated after a view of the
// result (which the source's bytes could not reach).
// CHECK-LABEL: func.func @reshaped_kept(
// CHECK-COUNT-6: memref.alloc()
func.func @reshaped_kept(%x: memref<16xf32>, %y: memref<4x4xf32>, %z: memref<16xf32>) {
  %s = memref.alloc() : memref<16xf32>
  memref.copy %x, %s : memref<16xf32> to memref<16xf32>
  %sv = memref.expand_shape %s [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  %r = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sv : memref<4x4xf32>) outs(%r : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %s : memref<16xf32>
  memref.copy %r, %y : memref<4x4xf32> to memref<4x4xf32>
  memref.dealloc %r : memref<4x4xf32>
  %t = memref.alloc() : memref<16xf32>
  memref.copy %x, %t : memref<16xf32> to memref<16xf32>
  %tv = memref.expand_shape %t [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  %q = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%tv : memref<4x4xf32>) outs(%q : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %tw = memref.expand_shape %t [[0, 1]] output_shape [2, 8] : memref<16xf32> into memref<2x8xf32>
  %tc = memref.collapse_shape %tw [[0, 1]] : memref<2x8xf32> into memref<16xf32>
  memref.copy %tc, %z : memref<16xf32> to memref<16xf32>
  memref.dealloc %t : memref<16xf32>
  memref.copy %q, %y : memref<4x4xf32> to memref<4x4xf32>
  memref.dealloc %q : memref<4x4xf32>
  %e = memref.alloc() : memref<4x4xf32>
  %ec = memref.collapse_shape %e [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  %f = memref.alloc() : memref<4x4xf32>
  memref.copy %y, %f : memref<4x4xf32> to memref<4x4xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%f : memref<4x4xf32>) outs(%e : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %f : memref<4x4xf32>
  memref.copy %ec, %z : memref<16xf32> to memref<16xf32>
  memref.dealloc %e : memref<4x4xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
// Checks that an operand written through subviews inside a loop before the
// op (an embedding gradient's scatter over its columns) still gives the op
// its buffer: the views end with the loop, which returns no memref. One
// read through a subview in a loop after the op keeps the buffers apart.
// CHECK-LABEL: func.func @loop_views
// CHECK: %[[G:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: scf.for
// CHECK: memref.subview %[[G]]
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[G]] : memref<4x8xf32>, memref<4x8xf32>) outs(%[[G]] : memref<4x8xf32>)
// CHECK: return %[[G]]
// CHECK-LABEL: func.func @loop_views_after
// CHECK: memref.alloc() : memref<4x8xf32>
// CHECK: %[[R:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: linalg.generic {{.*}} outs(%[[R]] : memref<4x8xf32>)
func.func @loop_views(%w: memref<4x8xf32>, %v: memref<4xf32>) -> memref<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %g = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<4x8xf32>)
  scf.for %j = %c0 to %c8 step %c1 {
    %column = memref.subview %g[0, %j] [4, 1] [1, 1] : memref<4x8xf32> to memref<4x1xf32, strided<[8, 1], offset: ?>>
    %flat = memref.collapse_shape %column [[0, 1]] : memref<4x1xf32, strided<[8, 1], offset: ?>> into memref<4xf32, strided<[8], offset: ?>>
    memref.copy %v, %flat : memref<4xf32> to memref<4xf32, strided<[8], offset: ?>>
  }
  %r = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%r : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  memref.dealloc %g : memref<4x8xf32>
  return %r : memref<4x8xf32>
}

func.func @loop_views_after(%w: memref<4x8xf32>, %v: memref<4xf32>) -> memref<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %g = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<4x8xf32>)
  %r = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%r : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  scf.for %j = %c0 to %c8 step %c1 {
    %column = memref.subview %g[0, %j] [4, 1] [1, 1] : memref<4x8xf32> to memref<4x1xf32, strided<[8, 1], offset: ?>>
    %flat = memref.collapse_shape %column [[0, 1]] : memref<4x1xf32, strided<[8, 1], offset: ?>> into memref<4xf32, strided<[8], offset: ?>>
    memref.copy %flat, %v : memref<4xf32, strided<[8], offset: ?>> to memref<4xf32>
  }
  memref.dealloc %g : memref<4x8xf32>
  return %r : memref<4x8xf32>
}
