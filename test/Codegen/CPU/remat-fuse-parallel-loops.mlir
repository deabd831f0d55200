// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-fuse-parallel-loops))' | FileCheck %s

// Checks that a row reduction's three loops over the rows (the fill of its
// lane partials, the sums into them, their fold into the output, a view of
// the step's arena) become one loop whose iterations run the three bodies
// in order; the view between the loops stays where it was.
// CHECK-LABEL: func.func @row_sums(
// CHECK:         memref.view
// CHECK:         scf.parallel (%[[I:.*]]) = (%c0) to (%c64) step (%c1) {
// CHECK:           scf.parallel
// CHECK:             vector.store %{{.*}}, %[[LANES:.*]][%[[I]], %{{.*}}] : memref<64x16xf32>, vector<8xf32>
// CHECK:           scf.for
// CHECK:             vector.load %{{.*}}[%[[I]], %{{.*}}] : memref<64x256xf32>, vector<16xf32>
// CHECK:             vector.store %{{.*}}, %[[LANES]][%[[I]], %{{.*}}] : memref<64x16xf32>, vector<16xf32>
// CHECK:           vector.load %[[LANES]][%[[I]], %{{.*}}] : memref<64x16xf32>, vector<16xf32>
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<64xf32>
// CHECK:           scf.reduce
// CHECK-NEXT:    }
// CHECK-NOT:     scf.parallel (%{{.*}}) = (%c0) to (%c64)
// CHECK:         return
func.func @row_sums(%x: memref<64x256xf32>) -> memref<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant dense<0.0> : vector<8xf32>
  %lanes = memref.alloca() : memref<64x16xf32>
  %arena = memref.alloc() : memref<4096xi8>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c16) step (%c8) {
      vector.store %zero, %lanes[%i, %j] : memref<64x16xf32>, vector<8xf32>
      scf.reduce
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c256 step %c16 {
      %v = vector.load %x[%i, %k] : memref<64x256xf32>, vector<16xf32>
      %a = vector.load %lanes[%i, %c0] : memref<64x16xf32>, vector<16xf32>
      %s = arith.addf %v, %a : vector<16xf32>
      vector.store %s, %lanes[%i, %c0] : memref<64x16xf32>, vector<16xf32>
    }
    scf.reduce
  }
  %out = memref.view %arena[%c0][] : memref<4096xi8> to memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %a = vector.load %lanes[%i, %c0] : memref<64x16xf32>, vector<16xf32>
    %init = arith.constant 0.0 : f32
    %r = vector.reduction <add>, %a, %init : vector<16xf32> into f32
    memref.store %r, %out[%i] : memref<64xf32>
    scf.reduce
  }
  return %out : memref<64xf32>
}

// -----

// Checks what stays two loops: the second reads the row after the one the
// same iteration of the first wrote; reads a column the first wrote (an
// inner loop over the rows); runs over other bounds; follows a store between
// the loops; or calls a function.
// CHECK-LABEL: func.func @shifted(
// CHECK-COUNT-2: {{^}}    scf.parallel
// CHECK-LABEL: func.func @column(
// CHECK-COUNT-2: {{^}}    scf.parallel
// CHECK-LABEL: func.func @bounds(
// CHECK-COUNT-2: {{^}}    scf.parallel
// CHECK-LABEL: func.func @store_between(
// CHECK-COUNT-2: {{^}}    scf.parallel
// CHECK-LABEL: func.func @call(
// CHECK-COUNT-2: {{^}}    scf.parallel
func.func @shifted(%a: memref<65xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %alloc = memref.alloc() : memref<65xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %one, %alloc[%i] : memref<65xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %n = arith.addi %i, %c1 : index
    %v = memref.load %alloc[%n] : memref<65xf32>
    memref.store %v, %a[%i] : memref<65xf32>
    scf.reduce
  }
  return
}
func.func @column(%b: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %col = memref.alloc() : memref<64x64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      memref.store %one, %col[%i, %j] : memref<64x64xf32>
      scf.reduce
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %col[%k, %i] : memref<64x64xf32>
      memref.store %v, %b[%i, %k] : memref<64x64xf32>
    }
    scf.reduce
  }
  return
}
func.func @bounds(%a: memref<65xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c32) step (%c1) {
    memref.store %one, %a[%i] : memref<65xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %one, %a[%i] : memref<65xf32>
    scf.reduce
  }
  return
}
func.func @store_between(%a: memref<65xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %alloc = memref.alloc() : memref<65xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %one, %alloc[%i] : memref<65xf32>
    scf.reduce
  }
  memref.store %one, %s[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %alloc[%i] : memref<65xf32>
    memref.store %v, %a[%i] : memref<65xf32>
    scf.reduce
  }
  return
}
func.func private @opaque(index)
func.func @call(%a: memref<65xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %alloc = memref.alloc() : memref<65xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %one, %alloc[%i] : memref<65xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %alloc[%i] : memref<65xf32>
    memref.store %v, %a[%i] : memref<65xf32>
    func.call @opaque(%i) : (index) -> ()
    scf.reduce
  }
  return
}

// -----

// Checks the overlap of buffers: two views of one arena at disjoint bytes
// fuse; views at overlapping bytes (the second's first half is the first's
// last), or two arguments (which may be one buffer), do not.
// CHECK-LABEL: func.func @disjoint(
// CHECK-COUNT-1: {{^}}    scf.parallel
// CHECK-NOT:     {{^}}    scf.parallel
// CHECK-LABEL: func.func @overlapping(
// CHECK-COUNT-2: {{^}}    scf.parallel
// CHECK-LABEL: func.func @arguments(
// CHECK-COUNT-2: {{^}}    scf.parallel
func.func @disjoint() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %one = arith.constant 1.0 : f32
  %arena = memref.alloc() : memref<1024xi8>
  %v0 = memref.view %arena[%c0][] : memref<1024xi8> to memref<64xf32>
  %v1 = memref.view %arena[%c256][] : memref<1024xi8> to memref<64xf32>
  %v2 = memref.view %arena[%c512][] : memref<1024xi8> to memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %one, %v0[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %r = memref.load %v1[%i] : memref<64xf32>
    memref.store %r, %v2[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
func.func @overlapping() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c512 = arith.constant 512 : index
  %one = arith.constant 1.0 : f32
  %arena = memref.alloc() : memref<1024xi8>
  %v0 = memref.view %arena[%c0][] : memref<1024xi8> to memref<64xf32>
  %v1 = memref.view %arena[%c128][] : memref<1024xi8> to memref<64xf32>
  %v2 = memref.view %arena[%c512][] : memref<1024xi8> to memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %one, %v0[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %r = memref.load %v1[%i] : memref<64xf32>
    memref.store %r, %v2[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
func.func @arguments(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %out = memref.alloc() : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %one, %x[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %r = memref.load %y[%i] : memref<64xf32>
    memref.store %r, %out[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
