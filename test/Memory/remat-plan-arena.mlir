// RUN: remat-opt %s -split-input-file -remat-plan-arena | FileCheck %s

// Checks that buffers live at different times share the arena's bytes and
// buffers live at once do not: %a dies before %c exists, so %c takes %a's
// slot; %b lives across both. Sizes round up to 64 bytes (%b's 40 bytes take
// 64). The arena is freed before the return, since nothing escapes.
// CHECK-LABEL: func.func @reuse(
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[A:.*]] = memref.view %[[ARENA]][%[[C0]]][] : memref<128xi8> to memref<16xf32>
// CHECK:         %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[B:.*]] = memref.view %[[ARENA]][%[[C64]]][] : memref<128xi8> to memref<10xf32>
// CHECK:         %[[C0B:.*]] = arith.constant 0 : index
// CHECK:         %[[C:.*]] = memref.view %[[ARENA]][%[[C0B]]][] : memref<128xi8> to memref<16xf32>
// CHECK-NOT:     memref.dealloc %[[A]]
// CHECK:         memref.dealloc %[[ARENA]]
// CHECK-NEXT:    return
func.func @reuse(%x: memref<16xf32>, %y: memref<10xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %x, %a : memref<16xf32> to memref<16xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<10xf32>
  memref.copy %y, %b : memref<10xf32> to memref<10xf32>
  memref.copy %a, %x : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %x, %c : memref<16xf32> to memref<16xf32>
  memref.copy %c, %x : memref<16xf32> to memref<16xf32>
  memref.copy %b, %y : memref<10xf32> to memref<10xf32>
  memref.dealloc %c : memref<16xf32>
  memref.dealloc %b : memref<10xf32>
  return
}

// -----

// Checks that a returned buffer lives to the end inside the arena, which is
// then the caller's to free (no dealloc of it), and that a buffer viewed
// through a subview is live until the view's last use.
// CHECK-LABEL: func.func @escape(
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<192xi8>
// CHECK-NOT:     memref.dealloc
// CHECK:         return %{{.*}} : memref<16xf32>
func.func @escape(%x: memref<16xf32>) -> memref<16xf32> {
  %a = memref.alloc() {alignment = 64 : i64} : memref<32xf32>
  %s = memref.subview %a[0] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1]>>
  memref.copy %x, %s : memref<16xf32> to memref<16xf32, strided<[1]>>
  %r = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %s, %r : memref<16xf32, strided<[1]>> to memref<16xf32>
  memref.dealloc %a : memref<32xf32>
  return %r : memref<16xf32>
}

// -----

// Checks that a function its module calls keeps its returned buffers apart
// (its callers free each one), that allocations with dynamic sizes stay with
// the allocator, and that the rest is planned: the buffer of a loop that
// allocates nothing but its iterations' own buffers too, at an offset of the
// loop's own arena, itself one buffer of the step's (here where %t was, dead
// by then).
// CHECK-LABEL: func.func @callee(
// CHECK:         %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xi8>
// CHECK:         %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
// CHECK:         memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         scf.for
// CHECK-NEXT:      %[[OFF:.*]] = arith.constant 0 : index
// CHECK-NEXT:      memref.view %[[A]][%[[OFF]]][] : memref<64xi8> to memref<4xf32>
// CHECK-NEXT:    }
// CHECK:         return %[[R]]
func.func @callee(%x: memref<16xf32>, %n: index) -> memref<16xf32> {
  %t = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %x, %t : memref<16xf32> to memref<16xf32>
  %r = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %t, %r : memref<16xf32> to memref<16xf32>
  memref.dealloc %t : memref<16xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %d : memref<?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %l = memref.alloc() : memref<4xf32>
    memref.dealloc %l : memref<4xf32>
  }
  return %r : memref<16xf32>
}
func.func @caller(%x: memref<16xf32>, %n: index) {
  %r = call @callee(%x, %n) : (memref<16xf32>, index) -> memref<16xf32>
  memref.dealloc %r : memref<16xf32>
  return
}
