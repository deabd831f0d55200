// RUN: remat-opt %s -split-input-file -remat-schedule | FileCheck %s
// RUN: remat-opt %s -split-input-file -remat-schedule -remat-reuse-buffers -remat-plan-arena | FileCheck %s --check-prefix=REUSE

#id = affine_map<(d0) -> (d0)>

// Checks that two independent chains run one after the other: each big
// buffer is filled, reduced and freed before the next is allocated, so one
// 4 KiB buffer is live at a time instead of two.
// CHECK-LABEL: func.func @chains(
// CHECK:         %[[A:.*]] = memref.alloc() : memref<1024xf32>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<1024xf32>)
// CHECK-NEXT:    linalg.reduce ins(%[[A]] : memref<1024xf32>) outs(%arg0 : memref<f32>)
// CHECK:         memref.dealloc %[[A]] : memref<1024xf32>
// CHECK:         %[[B:.*]] = memref.alloc() : memref<1024xf32>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<1024xf32>)
// CHECK-NEXT:    linalg.reduce ins(%[[B]] : memref<1024xf32>) outs(%arg1 : memref<f32>)
// CHECK:         memref.dealloc %[[B]] : memref<1024xf32>
// CHECK-NEXT:    return
func.func @chains(%s: memref<f32>, %t: memref<f32>) {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<1024xf32>
  %b = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%c0 : f32) outs(%a : memref<1024xf32>)
  linalg.fill ins(%c1 : f32) outs(%b : memref<1024xf32>)
  linalg.reduce ins(%a : memref<1024xf32>) outs(%s : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  memref.dealloc %a : memref<1024xf32>
  linalg.reduce ins(%b : memref<1024xf32>) outs(%t : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  memref.dealloc %b : memref<1024xf32>
  return
}

// -----

// Checks that memory dependences hold: both reductions accumulate into the
// same argument, so they keep their order, and the fill that writes %a
// after the first reduction read it stays after it (a write after a read).
// Within those, %b is filled only once %a is dead: one buffer at a time.
// CHECK-LABEL: func.func @dependences(
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[A:.*]] : memref<1024xf32>)
// CHECK-NEXT:    linalg.reduce ins(%[[A]] : memref<1024xf32>) outs(%arg0 : memref<f32>)
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<1024xf32>)
// CHECK:         memref.dealloc %[[A]]
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() : memref<1024xf32>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<1024xf32>)
// CHECK-NEXT:    linalg.reduce ins(%[[B]] : memref<1024xf32>) outs(%arg0 : memref<f32>)
func.func @dependences(%s: memref<f32>) {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<1024xf32>
  %b = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%c0 : f32) outs(%a : memref<1024xf32>)
  linalg.fill ins(%c1 : f32) outs(%b : memref<1024xf32>)
  linalg.reduce ins(%a : memref<1024xf32>) outs(%s : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  linalg.fill ins(%c1 : f32) outs(%a : memref<1024xf32>)
  linalg.reduce ins(%b : memref<1024xf32>) outs(%s : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  memref.dealloc %a : memref<1024xf32>
  memref.dealloc %b : memref<1024xf32>
  return
}

// -----

// Checks that an op whose memory effects are unknown (a call) keeps its
// place among every memory access: %b, filled before the call and read
// after it, stays live across it, so nothing can lower the peak and
// nothing moves.
// CHECK-LABEL: func.func @unknown_effects(
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[A:.*]] : memref<1024xf32>)
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[B:.*]] : memref<1024xf32>)
// CHECK-NEXT:    call @opaque(%[[A]])
// CHECK:         memref.dealloc %[[A]]
// CHECK-NEXT:    linalg.reduce ins(%[[B]] : memref<1024xf32>)
func.func private @opaque(memref<1024xf32>)
func.func @unknown_effects(%s: memref<f32>) {
  %c0 = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<1024xf32>
  %b = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%c0 : f32) outs(%a : memref<1024xf32>)
  linalg.fill ins(%c0 : f32) outs(%b : memref<1024xf32>)
  call @opaque(%a) : (memref<1024xf32>) -> ()
  memref.dealloc %a : memref<1024xf32>
  linalg.reduce ins(%b : memref<1024xf32>) outs(%s : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  memref.dealloc %b : memref<1024xf32>
  return
}

// -----

// Checks that a loop is one item with the effects of its body: it reads %a
// and writes %s, so it stays after %a's fill and before the reduction into
// %s, while the independent chain of %b moves after it (%a dies before %b
// is born).
// CHECK-LABEL: func.func @loop(
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[A:.*]] : memref<1024xf32>)
// CHECK-NOT:     linalg.fill
// CHECK:         scf.for
// CHECK:           memref.load %[[A]]
// CHECK:           memref.store %{{.*}}, %arg0[]
// CHECK:         memref.dealloc %[[A]]
// CHECK:         %[[B:.*]] = memref.alloc() : memref<1024xf32>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<1024xf32>)
// CHECK-NEXT:    linalg.reduce ins(%[[B]] : memref<1024xf32>) outs(%arg0 : memref<f32>)
func.func @loop(%s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %z = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<1024xf32>
  %b = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%z : f32) outs(%a : memref<1024xf32>)
  linalg.fill ins(%z : f32) outs(%b : memref<1024xf32>)
  scf.for %i = %c0 to %c1024 step %c1 {
    %x = memref.load %a[%i] : memref<1024xf32>
    %acc = memref.load %s[] : memref<f32>
    %sum = arith.addf %x, %acc : f32
    memref.store %sum, %s[] : memref<f32>
  }
  memref.dealloc %a : memref<1024xf32>
  linalg.reduce ins(%b : memref<1024xf32>) outs(%s : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  memref.dealloc %b : memref<1024xf32>
  return
}

// -----

// Checks that a function of several blocks is left alone.
// CHECK-LABEL: func.func @blocks(
// CHECK:         memref.alloc() : memref<1024xf32>
// CHECK-NEXT:    memref.alloc() : memref<1024xf32>
// CHECK-NEXT:    cf.br ^bb1
func.func @blocks() {
  %a = memref.alloc() : memref<1024xf32>
  %b = memref.alloc() : memref<1024xf32>
  cf.br ^bb1
^bb1:
  memref.dealloc %a : memref<1024xf32>
  memref.dealloc %b : memref<1024xf32>
  return
}


// -----

// Checks that the schedule weighs the in-place reuse that follows it: run
// before the elementwise op, the reduction leaves %x dying there, so %y can
// take %x's bytes (-remat-reuse-buffers) and one 4 KiB buffer is live at a
// time; in the given order %x is still read after the op and both are live.
// REUSE-LABEL: func.func @reuse(
// REUSE:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4096xi8>
// REUSE-NOT:     memref.alloc()
// REUSE:         %[[X:.*]] = memref.view %[[ARENA]]
// REUSE:         linalg.fill ins(%{{.*}} : f32) outs(%[[X]] : memref<1024xf32>)
// REUSE:         linalg.reduce ins(%[[X]] : memref<1024xf32>)
// REUSE:         linalg.generic {{.*}} ins(%[[X]] : memref<1024xf32>) outs(%[[X]] : memref<1024xf32>)
// REUSE-NOT:     memref.alloc()
// REUSE:         return
#id1 = affine_map<(d0) -> (d0)>
func.func @reuse(%s: memref<f32>, %out: memref<1024xf32>) {
  %c0 = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%c0 : f32) outs(%x : memref<1024xf32>)
  %y = memref.alloc() : memref<1024xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<1024xf32>) outs(%y : memref<1024xf32>) {
  ^bb0(%in: f32, %o: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  linalg.reduce ins(%x : memref<1024xf32>) outs(%s : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  memref.dealloc %x : memref<1024xf32>
  memref.copy %y, %out : memref<1024xf32> to memref<1024xf32>
  memref.dealloc %y : memref<1024xf32>
  return
}
