// RUN: remat-opt %s -split-input-file -remat-outline-parallel-loops | FileCheck %s
// RUN: remat-opt %s -split-input-file '-remat-outline-parallel-loops=min-unit-work=1000000' | FileCheck %s --check-prefix=BIG

// Checks that a 256x512 elementwise loop (4 elements per iteration: load,
// exp, store and the terminator; 524288 in all) becomes 16 units of 16 rows
// (at least 32768 elements each): the
// outlined unit loads both buffers from the context, runs its rows in order
// and each row's columns whole, and the loop becomes one call of the
// runtime with the context on the stack, allocated at the function's entry.
// With units of a million elements, it stays one loop.
// CHECK-LABEL: func.func private @remat_parallel_for(i64, (!llvm.ptr, i64) -> (), !llvm.ptr)
// CHECK-LABEL: func.func private @exp_elementwise_parallel(
// CHECK-SAME:      %[[CTX:.*]]: !llvm.ptr, %[[UNIT:.*]]: i64) {
// CHECK:         %[[PX:.*]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK:         %[[DX:.*]] = llvm.load %[[PX]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK:         %[[X:.*]] = builtin.unrealized_conversion_cast %[[DX]] {{.*}} to memref<256x512xf32>
// CHECK:         %[[PY:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK:         %[[Y:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<256x512xf32>
// CHECK:         %[[U:.*]] = arith.index_cast %[[UNIT]] : i64 to index
// CHECK:         %[[BEGIN:.*]] = arith.muli %[[U]], %[[C16:.*]] : index
// CHECK:         %[[NEXT:.*]] = arith.addi %[[BEGIN]], %[[C16]]
// CHECK:         %[[END:.*]] = arith.minui %[[NEXT]], %{{.*}}
// CHECK:         scf.for %[[I:.*]] = %[[BEGIN]] to %[[END]]
// CHECK:           scf.parallel (%[[J:.*]]) =
// CHECK:             memref.load %[[X]][%[[I]], %[[J]]]
// CHECK:             math.exp
// CHECK:             memref.store %{{.*}}, %[[Y]][%[[I]], %[[J]]]
// CHECK:         return
// CHECK-LABEL: func.func @exp(
// CHECK-SAME:      %[[XA:.*]]: memref<256x512xf32>, %[[YA:.*]]: memref<256x512xf32>)
// CHECK:         %[[CONTEXT:.*]] = llvm.alloca
// CHECK-NOT:     scf.parallel
// CHECK:         %[[DXA:.*]] = builtin.unrealized_conversion_cast %[[XA]]
// CHECK:         %[[PXA:.*]] = llvm.getelementptr %[[CONTEXT]][0, 0]
// CHECK:         llvm.store %[[DXA]], %[[PXA]]
// CHECK:         %[[DYA:.*]] = builtin.unrealized_conversion_cast %[[YA]]
// CHECK:         llvm.store %[[DYA]]
// CHECK:         %[[FN:.*]] = constant @exp_elementwise_parallel : (!llvm.ptr, i64) -> ()
// CHECK:         %[[UNITS:.*]] = arith.constant 16 : i64
// CHECK:         call @remat_parallel_for(%[[UNITS]], %[[FN]], %[[CONTEXT]])
// CHECK-NOT:     scf.parallel
// BIG-LABEL: func.func @exp(
// BIG-NOT:       remat_parallel_for
// BIG:           scf.parallel
func.func @exp(%x: memref<256x512xf32>, %y: memref<256x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c512) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<256x512xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%i, %j] : memref<256x512xf32>
    scf.reduce
  }
  return
}

// -----

// Checks that a row sum splits its rows only: each unit runs whole rows,
// and the sum along a row stays one scf.for, in order, inside the unit.
// Vector ops count their lanes: 128 rows of 64 tiles of 19 elements (8 for
// each vector op, 1 for each other op) are 155648 elements, 4 units of 32
// rows.
// CHECK-LABEL: func.func private @row_sum_reduction_parallel(
// CHECK:         %[[C32:.*]] = arith.constant 32 : index
// CHECK:         scf.for %[[ROW:.*]] =
// CHECK-NOT:       scf.parallel
// CHECK:           scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %[[C8:.*]] {
// CHECK:             vector.load
// CHECK:             vector.reduction <add>
// CHECK-LABEL: func.func @row_sum(
// CHECK:         arith.constant 4 : i64
// CHECK:         call @remat_parallel_for
func.func @row_sum(%x: memref<128x512xf32>, %s: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i) = (%c0) to (%c128) step (%c1) {
    scf.for %j = %c0 to %c512 step %c8 {
      %v = vector.load %x[%i, %j] : memref<128x512xf32>, vector<8xf32>
      %a = memref.load %s[%i] : memref<128xf32>
      %r = vector.reduction <add>, %v, %a : vector<8xf32> into f32
      memref.store %r, %s[%i] : memref<128xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Checks that a loop whose first dimension is narrow (4) is cut into units
// over its first two dimensions linearized (the fewest that give 16 units):
// each unit runs 16 of their 256 positions, whose two induction variables
// come from the position, and the last dimension whole. A value from an
// enclosing loop (a scan's index) is stored in the context as an i64 and
// the constants the body uses are cloned, not stored.
// CHECK-LABEL: func.func private @narrow_elementwise_parallel(
// CHECK-SAME:      %[[CTX:.*]]: !llvm.ptr, %[[UNIT:.*]]: i64) {
// CHECK:         %[[K64:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK:         %[[K:.*]] = arith.index_cast %[[K64]] : i64 to index
// CHECK:         %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:         %[[U:.*]] = arith.index_cast %[[UNIT]] : i64 to index
// CHECK:         %[[BEGIN:.*]] = arith.muli %[[U]], %{{.*}} : index
// CHECK:         scf.for %[[P:.*]] = %[[BEGIN]] to
// CHECK:           %[[J:.*]] = arith.remui %[[P]], %[[C64:[^ ]*]] : index
// CHECK:           %[[I:.*]] = arith.divui %[[P]], %[[C64]] : index
// CHECK:           scf.parallel (%[[L:.*]]) =
// CHECK:             memref.load %{{.*}}[%[[K]], %[[I]], %[[J]], %[[L]]]
// CHECK:             arith.mulf %{{.*}}, %[[TWO]]
// CHECK:             memref.store %{{.*}}[%[[I]], %[[J]], %[[L]]]
// CHECK-LABEL: func.func @narrow(
// CHECK:         scf.for %[[KO:.*]] =
// CHECK:           %[[K64O:.*]] = arith.index_cast %[[KO]] : index to i64
// CHECK:           llvm.store %[[K64O]]
// CHECK:           %[[UNITS:.*]] = arith.constant 16 : i64
// CHECK:           call @remat_parallel_for(%[[UNITS]]
func.func @narrow(%x: memref<3x4x64x512xf32>, %y: memref<4x64x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %two = arith.constant 2.0 : f32
  scf.for %k = %c0 to %c3 step %c1 {
    scf.parallel (%i, %j, %l) = (%c0, %c0, %c0) to (%c4, %c64, %c512) step (%c1, %c1, %c1) {
      %v = memref.load %x[%k, %i, %j, %l] : memref<3x4x64x512xf32>
      %d = arith.mulf %v, %two : f32
      memref.store %d, %y[%i, %j, %l] : memref<4x64x512xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Checks what stays one loop on one thread: a loop of too little work (a
// fill of 256 elements), one whose bounds are not constants, one with a
// reduction, one that calls a function, one that allocates and one that
// writes a stack buffer from above (which units would share).
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     remat_parallel_for
// CHECK-COUNT-6: scf.parallel
// CHECK-NOT:     remat_parallel_for
func.func private @callee(f32) -> f32
func.func @left_alone(%x: memref<1024x1024xf32>, %s: memref<256xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    memref.store %zero, %s[%i] : memref<256xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c1024) step (%c1, %c1) {
    memref.store %zero, %x[%i, %j] : memref<1024x1024xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c1024) step (%c1, %c1) init (%zero) -> f32 {
    %v = memref.load %x[%i, %j] : memref<1024x1024xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      scf.reduce.return %r : f32
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c1024) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<1024x1024xf32>
    %r = func.call @callee(%v) : (f32) -> f32
    memref.store %r, %x[%i, %j] : memref<1024x1024xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    %t = memref.alloc() : memref<1024xf32>
    memref.copy %t, %t : memref<1024xf32> to memref<1024xf32>
    memref.dealloc %t : memref<1024xf32>
    scf.reduce
  }
  %scratch = memref.alloca() : memref<1024xf32>
  %row = memref.subview %scratch[0] [512] [1] : memref<1024xf32> to memref<512xf32, strided<[1]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c1024) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<1024x1024xf32>
    memref.store %v, %row[%c0] : memref<512xf32, strided<[1]>>
    scf.reduce
  }
  return %sum : f32
}

// -----

// Checks that a stack buffer the iterations cut among themselves (a split
// reduction's lane partials, -remat-split-reductions: each row writes and
// reads its own row of lanes) is captured like any buffer: the loop becomes
// units, the alloca's descriptor goes in the context.
// CHECK-LABEL: func.func private @remat_parallel_for(
// CHECK-LABEL: func.func private @lane_partials_reduction_parallel(
// CHECK:         vector.load
// CHECK-LABEL: func.func @lane_partials(
// CHECK:         %[[PARTIALS:.*]] = memref.alloca() : memref<1024x8xf32>
// CHECK:         call @remat_parallel_for
func.func @lane_partials(%x: memref<1024x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  %partials = memref.alloca() : memref<1024x8xf32>
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    scf.for %j = %c0 to %c512 step %c8 {
      %v = vector.load %x[%i, %j] : memref<1024x512xf32>, vector<8xf32>
      %p = vector.load %partials[%i, %c0] : memref<1024x8xf32>, vector<8xf32>
      %s = arith.addf %v, %p : vector<8xf32>
      vector.store %s, %partials[%i, %c0] : memref<1024x8xf32>, vector<8xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Checks the stack buffers iterations would share, left on one thread: one
// whose vectors run along the dimension the induction variable indexes,
// one an iteration reads at another's index, one indexed by one of a 2-D
// loop's two induction variables, and one read through a view.
// CHECK-LABEL: func.func @shared_stack_buffers(
// CHECK-NOT:     remat_parallel_for
// CHECK-COUNT-4: scf.parallel
// CHECK-NOT:     remat_parallel_for
func.func @shared_stack_buffers(%x: memref<1024x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  %along = memref.alloca() : memref<8x1032xf32>
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    scf.for %j = %c0 to %c512 step %c8 {
      %v = vector.load %x[%i, %j] : memref<1024x512xf32>, vector<8xf32>
      vector.store %v, %along[%c0, %i] : memref<8x1032xf32>, vector<8xf32>
    }
    scf.reduce
  }
  %rows = memref.alloca() : memref<1024x8xf32>
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    scf.for %j = %c0 to %c512 step %c8 {
      %v = vector.load %x[%i, %j] : memref<1024x512xf32>, vector<8xf32>
      vector.store %v, %rows[%i, %c0] : memref<1024x8xf32>, vector<8xf32>
      %w = vector.load %rows[%c0, %c0] : memref<1024x8xf32>, vector<8xf32>
      vector.store %w, %x[%i, %j] : memref<1024x512xf32>, vector<8xf32>
    }
    scf.reduce
  }
  %columns = memref.alloca() : memref<1024x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c512) step (%c1, %c8) {
    %v = vector.load %x[%i, %j] : memref<1024x512xf32>, vector<8xf32>
    vector.store %v, %columns[%i, %c0] : memref<1024x8xf32>, vector<8xf32>
    scf.reduce
  }
  %viewed = memref.alloca() : memref<1024x8xf32>
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    %row = memref.subview %viewed[%i, 0] [1, 8] [1, 1] : memref<1024x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    scf.for %j = %c0 to %c512 step %c8 {
      %v = vector.load %x[%i, %j] : memref<1024x512xf32>, vector<8xf32>
      vector.store %v, %row[%c0] : memref<8xf32, strided<[1], offset: ?>>, vector<8xf32>
    }
    scf.reduce
  }
  return
}
