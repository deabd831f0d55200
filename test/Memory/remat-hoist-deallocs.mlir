// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-hoist-deallocs))' | FileCheck %s

// Checks that a dealloc moves up to just after the last use of its buffer,
// counting uses through views (here a subview read after the buffer itself).
// CHECK-LABEL: func.func @hoist(
// CHECK:         %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         %[[V:.*]] = memref.subview %[[A]][0] [4] [1]
// CHECK:         memref.copy %[[V]], %{{.*}}
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() : memref<8xf32>
func.func @hoist(%in: memref<8xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<8xf32>
  memref.copy %in, %a : memref<8xf32> to memref<8xf32>
  %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %v, %out : memref<4xf32, strided<[1]>> to memref<4xf32>
  %b = memref.alloc() : memref<8xf32>
  memref.copy %in, %b : memref<8xf32> to memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

// Checks that a use nested in a region counts at its ancestor op.
// CHECK-LABEL: func.func @nested_use(
// CHECK:         scf.for
// CHECK:           memref.load %[[A:.*]][
// CHECK:         }
// CHECK-NEXT:    memref.dealloc
// CHECK-NEXT:    memref.alloc
func.func @nested_use(%n: index, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %out[%i] : memref<8xf32>
  }
  %b = memref.alloc() : memref<8xf32>
  memref.copy %out, %b : memref<8xf32> to memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

// Checks that a dealloc inside a region whose buffer is used outside it is
// left alone.
// CHECK-LABEL: func.func @used_outside(
// CHECK:         scf.if
// CHECK-NEXT:      memref.copy
// CHECK-NEXT:      memref.dealloc
func.func @used_outside(%c: i1, %out: memref<8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  scf.if %c {
    memref.copy %out, %a : memref<8xf32> to memref<8xf32>
    memref.dealloc %a : memref<8xf32>
  }
  memref.copy %a, %out : memref<8xf32> to memref<8xf32>
  return
}

// -----

// Checks that the deallocs are placed on the block's original order: three
// buffers last read by one op all move after it (each after the one moved
// before, in walk order), and a dealloc already right after its last use,
// and a later dealloc, do not move.
// CHECK-LABEL: func.func @many(
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK:         %[[B:.*]] = memref.alloc()
// CHECK:         %[[C:.*]] = memref.alloc()
// CHECK:         %[[D:.*]] = memref.alloc()
// CHECK:         call @use(%[[A]], %[[B]], %[[C]])
// CHECK-NEXT:    memref.dealloc %[[C]]
// CHECK-NEXT:    memref.dealloc %[[B]]
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    memref.copy %{{.*}}, %[[D]]
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    memref.copy
// CHECK-NEXT:    return
func.func private @use(memref<8xf32>, memref<8xf32>, memref<8xf32>)

func.func @many(%in: memref<8xf32>, %out: memref<8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %c = memref.alloc() : memref<8xf32>
  %d = memref.alloc() : memref<8xf32>
  func.call @use(%a, %b, %c) : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  memref.copy %in, %d : memref<8xf32> to memref<8xf32>
  memref.dealloc %d : memref<8xf32>
  memref.copy %in, %out : memref<8xf32> to memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  memref.dealloc %c : memref<8xf32>
  return
}
