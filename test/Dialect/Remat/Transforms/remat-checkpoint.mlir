// RUN: remat-opt %s -split-input-file -remat-checkpoint -remat-verify | FileCheck %s
// RUN: remat-opt %s -split-input-file -remat-checkpoint -remat-checkpoint -remat-verify | FileCheck %s
// RUN: remat-opt %s -split-input-file -remat-checkpoint=early-stop=false -remat-verify | FileCheck %s --check-prefix=REENT
// RUN: remat-opt %s -split-input-file -remat-checkpoint -cse -canonicalize -remat-verify | FileCheck %s --check-prefix=CANON

// The second RUN line checks that the pass is idempotent: a second run finds
// nothing left to recompute and changes nothing.

// Checks that a value of a segment used by the backward region is recomputed
// there from the segment's input, read through a barrier; the original gets
// remat.id, the clone remat.clone_of and none of the forward attributes.
// CHECK-LABEL: func.func @basic
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[DY:.*]]: tensor<4xf32>)
// CHECK: %[[A:.*]] = math.tanh %[[X]] {remat.id = 0 : i64, remat.name = "act", remat.policy = "recompute", remat.segment = 0 : i64}
// CHECK: %[[B:.*]] = math.exp %[[A]] {remat.id = 1 : i64, remat.segment = 0 : i64}
// CHECK: remat.backward {
// CHECK-NEXT: %[[XB:.*]] = remat.barrier %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[AR:.*]] = math.tanh %[[XB]] {remat.clone_of = 0 : i64} : tensor<4xf32>
// CHECK-NEXT: %[[BR:.*]] = math.exp %[[AR]] {remat.clone_of = 1 : i64} : tensor<4xf32>
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[DY]], %[[BR]]
// CHECK-NEXT: remat.yield %[[D]]
// CHECK: return %[[B]]
func.func @basic(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.segment = 0 : i64, remat.name = "act", remat.policy = "recompute"} : tensor<4xf32>
  %b = math.exp %a {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %dy, %b : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %b, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks early stop: only the backward slice of the needed value is cloned;
// the segment's tail (%c) and an unrelated branch (%e) are not.
// CHECK-LABEL: func.func @early_stop
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK: math.sin %[[Y]] {remat.segment = 0 : i64}
// CHECK: math.cos %{{.*}} {remat.segment = 0 : i64}
// CHECK: remat.backward {
// CHECK-NEXT: %[[XB:.*]] = remat.barrier %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[AR:.*]] = math.tanh %[[XB]] {remat.clone_of = 0 : i64}
// CHECK-NEXT: %[[BR:.*]] = math.exp %[[AR]] {remat.clone_of = 1 : i64}
// CHECK-NEXT: arith.mulf %[[BR]], %[[BR]]
// CHECK-NEXT: remat.yield
func.func @early_stop(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %e = math.sin %y {remat.segment = 0 : i64} : tensor<4xf32>
  %b = math.exp %a {remat.segment = 0 : i64} : tensor<4xf32>
  %c = math.cos %b {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %b, %b : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %c, %e, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks the reentrant mode: early-stop=false clones the whole segment, in
// program order, at the first use of any of its values, tail included.
// REENT-LABEL: func.func @reentrant
// REENT-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// REENT: remat.backward {
// REENT-NEXT: %[[IN:.*]]:2 = remat.barrier %[[X]], %[[Y]] : tensor<4xf32>, tensor<4xf32>
// REENT-NEXT: %[[AR:.*]] = math.tanh %[[IN]]#0 {remat.clone_of = 0 : i64}
// REENT-NEXT: math.sin %[[IN]]#1 {remat.clone_of = 1 : i64}
// REENT-NEXT: %[[BR:.*]] = math.exp %[[AR]] {remat.clone_of = 2 : i64}
// REENT-NEXT: math.cos %[[BR]] {remat.clone_of = 3 : i64}
// REENT-NEXT: arith.mulf %[[BR]], %[[BR]]
// REENT-NEXT: remat.yield
// CHECK-LABEL: func.func @reentrant
// CHECK: remat.backward {
// CHECK-NEXT: remat.barrier
// CHECK-NEXT: math.tanh
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.mulf
func.func @reentrant(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %e = math.sin %y {remat.segment = 0 : i64} : tensor<4xf32>
  %b = math.exp %a {remat.segment = 0 : i64} : tensor<4xf32>
  %c = math.cos %b {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %b, %b : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %c, %e, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks placement: each clone goes immediately before the first backward op
// that needs it (%a's before %d1, %b's and %c's before %d2), a later backward
// op reuses it (%d3 and the clone of %b use the clone of %a), and each
// insertion point has its own barrier ahead of its clones.
// CHECK-LABEL: func.func @placement
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[DY:.*]]: tensor<4xf32>)
// CHECK: remat.backward {
// CHECK-NEXT: %[[D0:.*]] = arith.mulf %[[DY]], %[[DY]]
// CHECK-NEXT: %[[XB1:.*]] = remat.barrier %[[X]]
// CHECK-NEXT: %[[AR:.*]] = math.tanh %[[XB1]] {remat.clone_of = 0 : i64}
// CHECK-NEXT: %[[D1:.*]] = arith.mulf %[[D0]], %[[AR]]
// CHECK-NEXT: %[[XB2:.*]] = remat.barrier %[[X]]
// CHECK-NEXT: %[[BR:.*]] = arith.mulf %[[AR]], %[[XB2]] {remat.clone_of = 1 : i64}
// CHECK-NEXT: %[[CR:.*]] = math.exp %[[BR]] {remat.clone_of = 2 : i64}
// CHECK-NEXT: %[[D2:.*]] = arith.mulf %[[D1]], %[[CR]]
// CHECK-NEXT: arith.mulf %[[D2]], %[[AR]]
// CHECK-NEXT: remat.yield
func.func @placement(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %b = arith.mulf %a, %x {remat.segment = 0 : i64} : tensor<4xf32>
  %c = math.exp %b {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d0 = arith.mulf %dy, %dy : tensor<4xf32>
    %d1 = arith.mulf %d0, %a : tensor<4xf32>
    %d2 = arith.mulf %d1, %c : tensor<4xf32>
    %d3 = arith.mulf %d2, %a : tensor<4xf32>
    remat.yield %d3 : tensor<4xf32>
  } : tensor<4xf32>
  return %c, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks several segments: each is recomputed from its own inputs right
// before its first use, with its own barrier.
// CHECK-LABEL: func.func @two_segments
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK: remat.backward {
// CHECK-NEXT: %[[YB:.*]] = remat.barrier %[[Y]]
// CHECK-NEXT: %[[BR:.*]] = math.exp %[[YB]] {remat.clone_of = 1 : i64}
// CHECK-NEXT: %[[D0:.*]] = arith.mulf %[[BR]], %[[BR]]
// CHECK-NEXT: %[[XB:.*]] = remat.barrier %[[X]]
// CHECK-NEXT: %[[AR:.*]] = math.tanh %[[XB]] {remat.clone_of = 0 : i64}
// CHECK-NEXT: arith.mulf %[[D0]], %[[AR]]
func.func @two_segments(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %b = math.exp %y {remat.segment = 1 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d0 = arith.mulf %b, %b : tensor<4xf32>
    %d1 = arith.mulf %d0, %a : tensor<4xf32>
    remat.yield %d1 : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %b, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks chained segments (checkpoint_sequential): segment 1's input %a is
// segment 0's output; it is saved and read through the barrier, not
// recomputed, although only segment 1's recomputation needs it.
// CHECK-LABEL: func.func @chained
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[A:.*]] = math.exp %{{.*}} {remat.segment = 0 : i64}
// CHECK: remat.backward {
// CHECK-NEXT: %[[AB:.*]] = remat.barrier %[[A]]
// CHECK-NEXT: %[[B0R:.*]] = math.sin %[[AB]] {remat.clone_of = 1 : i64}
// CHECK-NEXT: %[[BR:.*]] = math.cos %[[B0R]] {remat.clone_of = 2 : i64}
// CHECK-NEXT: %[[D0:.*]] = arith.mulf %[[B0R]], %[[BR]]
// CHECK-NEXT: %[[XB:.*]] = remat.barrier %[[X]]
// CHECK-NEXT: %[[A0R:.*]] = math.tanh %[[XB]] {remat.clone_of = 0 : i64}
// CHECK-NEXT: arith.mulf %[[D0]], %[[A0R]]
// CHECK-NOT: math.exp
func.func @chained(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a0 = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %a = math.exp %a0 {remat.segment = 0 : i64} : tensor<4xf32>
  %b0 = math.sin %a {remat.segment = 1 : i64} : tensor<4xf32>
  %b = math.cos %b0 {remat.segment = 1 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d0 = arith.mulf %b0, %b : tensor<4xf32>
    %d1 = arith.mulf %d0, %a0 : tensor<4xf32>
    remat.yield %d1 : tensor<4xf32>
  } : tensor<4xf32>
  return %b, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks nested segments: %a and %b are in segment 1 inside segment 0. The
// recomputation of segment 0 before %d0 clones them for the chain that
// computes %c; the later uses of %b (by %d1) and %a (by %d2) get a second,
// level-1 clone made before %d1 from the inner segment's input (the clone of
// the outer op %s, through a new barrier), so that only that input stays live
// between %d0 and %d1. Under -cse -canonicalize both recomputations survive.
// CHECK-LABEL: func.func @nested
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: remat.backward {
// CHECK-NEXT: %[[XB:.*]] = remat.barrier %[[X]]
// CHECK-NEXT: %[[SR:.*]] = math.sin %[[XB]] {remat.clone_of = 0 : i64}
// CHECK-NEXT: %[[AR:.*]] = math.tanh %[[SR]] {remat.clone_of = 1 : i64}
// CHECK-NEXT: %[[BR:.*]] = math.exp %[[AR]] {remat.clone_of = 2 : i64}
// CHECK-NEXT: %[[CR:.*]] = math.cos %[[BR]] {remat.clone_of = 3 : i64}
// CHECK-NEXT: %[[D0:.*]] = arith.mulf %[[CR]], %[[CR]]
// CHECK-NEXT: %[[SB:.*]] = remat.barrier %[[SR]]
// CHECK-NEXT: %[[AR2:.*]] = math.tanh %[[SB]] {remat.clone_of = 1 : i64}
// CHECK-NEXT: %[[BR2:.*]] = math.exp %[[AR2]] {remat.clone_of = 2 : i64}
// CHECK-NEXT: %[[D1:.*]] = arith.mulf %[[D0]], %[[BR2]]
// CHECK-NEXT: arith.mulf %[[D1]], %[[AR2]]
// CANON-LABEL: func.func @nested
// CANON: remat.backward {
// CANON-COUNT-2: math.tanh %{{.*}} {remat.clone_of = 1 : i64}
func.func @nested(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = math.sin %x {remat.segment = 0 : i64} : tensor<4xf32>
  %a = math.tanh %s {remat.segment = [0, 1]} : tensor<4xf32>
  %b = math.exp %a {remat.segment = [0, 1]} : tensor<4xf32>
  %c = math.cos %b {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d0 = arith.mulf %c, %c : tensor<4xf32>
    %d1 = arith.mulf %d0, %b : tensor<4xf32>
    %d2 = arith.mulf %d1, %a : tensor<4xf32>
    remat.yield %d2 : tensor<4xf32>
  } : tensor<4xf32>
  return %c, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks three nesting levels: the use of %c (in [0, 1, 2]) by %d2 is
// recomputed at level 1 from the clone of %a made before %d1, and the level-1
// clone of %b is reused; the use of %b itself by %d1 stays at level 1 since
// the level-1 clone was made right there.
// CHECK-LABEL: func.func @deep
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: remat.backward {
// CHECK-NEXT: %[[XB:.*]] = remat.barrier %[[X]]
// CHECK-NEXT: %[[OR:.*]] = math.sin %[[XB]] {remat.clone_of = 0 : i64}
// CHECK-NEXT: %[[AR:.*]] = math.tanh %[[OR]] {remat.clone_of = 1 : i64}
// CHECK-NEXT: %[[BR:.*]] = math.exp %[[AR]] {remat.clone_of = 2 : i64}
// CHECK-NEXT: %[[CR:.*]] = math.cos %[[BR]] {remat.clone_of = 3 : i64}
// CHECK-NEXT: %[[DR:.*]] = arith.addf %[[CR]], %[[OR]] {remat.clone_of = 4 : i64}
// CHECK-NEXT: %[[G1:.*]] = arith.mulf %[[DR]], %[[DR]]
// CHECK-NEXT: %[[OB:.*]] = remat.barrier %[[OR]]
// CHECK-NEXT: %[[AR1:.*]] = math.tanh %[[OB]] {remat.clone_of = 1 : i64}
// CHECK-NEXT: %[[BR1:.*]] = math.exp %[[AR1]] {remat.clone_of = 2 : i64}
// CHECK-NEXT: %[[G2:.*]] = arith.mulf %[[G1]], %[[BR1]]
// CHECK-NEXT: %[[CR1:.*]] = math.cos %[[BR1]] {remat.clone_of = 3 : i64}
// CHECK-NEXT: %[[G3:.*]] = arith.mulf %[[G2]], %[[CR1]]
// CHECK-NEXT: arith.mulf %[[G3]], %[[AR1]]
func.func @deep(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %o = math.sin %x {remat.segment = 0 : i64} : tensor<4xf32>
  %a = math.tanh %o {remat.segment = [0, 1]} : tensor<4xf32>
  %b = math.exp %a {remat.segment = [0, 1, 2]} : tensor<4xf32>
  %c = math.cos %b {remat.segment = [0, 1, 2]} : tensor<4xf32>
  %d = arith.addf %c, %o {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %g1 = arith.mulf %d, %d : tensor<4xf32>
    %g2 = arith.mulf %g1, %b : tensor<4xf32>
    %g3 = arith.mulf %g2, %c : tensor<4xf32>
    %g4 = arith.mulf %g3, %a : tensor<4xf32>
    remat.yield %g4 : tensor<4xf32>
  } : tensor<4xf32>
  return %d, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a recomputed remat.philox_uniform reads the very same seed and
// offset as the forward one (through the barrier), also after -cse
// -canonicalize.
// CHECK-LABEL: func.func @philox
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[SEED:.*]]: i64 {remat.rng_seed})
// CHECK: %[[OFF:.*]] = arith.constant 8 : i64
// CHECK: remat.backward {
// CHECK-NEXT: %[[IN:.*]]:3 = remat.barrier %[[SEED]], %[[OFF]], %[[X]] : i64, i64, tensor<4xf32>
// CHECK-NEXT: %[[UR:.*]] = remat.philox_uniform %[[IN]]#0, %[[IN]]#1 {remat.clone_of = 0 : i64}
// CHECK-NEXT: arith.mulf %[[IN]]#2, %[[UR]] {remat.clone_of = 1 : i64}
// CANON-LABEL: func.func @philox
// CANON-SAME: (%[[X:.*]]: tensor<4xf32>, %[[SEED:.*]]: i64 {remat.rng_seed})
// CANON: %[[OFF:.*]] = arith.constant 8 : i64
// CANON: remat.philox_uniform %[[SEED]], %[[OFF]] {remat.id = 0 : i64, remat.segment = 0 : i64}
// CANON: remat.backward {
// CANON-NEXT: %[[IN:.*]]:3 = remat.barrier %[[SEED]], %[[OFF]], %[[X]]
// CANON-NEXT: remat.philox_uniform %[[IN]]#0, %[[IN]]#1 {remat.clone_of = 0 : i64}
func.func @philox(%x: tensor<4xf32>, %seed: i64 {remat.rng_seed}) -> (tensor<4xf32>, tensor<4xf32>) {
  %off = arith.constant 8 : i64
  %u = remat.philox_uniform %seed, %off {remat.segment = 0 : i64} : tensor<4xf32>
  %m = arith.mulf %x, %u {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %m, %m : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %m, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that the clones survive -cse -canonicalize: the barrier keeps CSE
// from merging them with their originals (which compute the same values from
// the same saved inputs). A constant of the segment is copied without
// bookkeeping attributes, so canonicalization may merge it with the forward
// one without leaving a clone without its original.
// CHECK-LABEL: func.func @survives_cse
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: arith.constant {remat.segment = 0 : i64} dense<2.000000e+00>
// CHECK: remat.backward {
// CHECK-NEXT: %[[XB:.*]] = remat.barrier %[[X]]
// CHECK-NEXT: %[[CR:.*]] = arith.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[AR:.*]] = arith.mulf %[[XB]], %[[CR]] {remat.clone_of = 0 : i64}
// CANON-LABEL: func.func @survives_cse
// CANON-SAME: (%[[X:.*]]: tensor<4xf32>)
// CANON: %[[CST:.*]] = arith.constant {{.*}}dense<2.000000e+00>
// CANON: %[[A:.*]] = arith.mulf %[[X]], %[[CST]] {remat.id = 0 : i64, remat.segment = 0 : i64}
// CANON: %[[B:.*]] = math.exp %[[A]] {remat.id = 1 : i64, remat.segment = 0 : i64}
// CANON: remat.backward {
// CANON-NEXT: %[[XB:.*]] = remat.barrier %[[X]]
// CANON-NEXT: %[[AR:.*]] = arith.mulf %[[XB]], %[[CST]] {remat.clone_of = 0 : i64}
// CANON-NEXT: %[[BR:.*]] = math.exp %[[AR]] {remat.clone_of = 1 : i64}
// CANON-NEXT: arith.mulf %[[BR]], %[[BR]]
// CANON: return %[[B]]
func.func @survives_cse(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant {remat.segment = 0 : i64} dense<2.0> : tensor<4xf32>
  %a = arith.mulf %x, %c {remat.segment = 0 : i64} : tensor<4xf32>
  %b = math.exp %a {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %b, %b : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %b, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that the backward region's own recomputation of a forward op (here
// %t2 = tanh(%x), as AOTAutograd's decompositions recompute GELU's tanh)
// stays apart from it: the backward does not read %t, so CSE merging %t2
// into %t would make %t a saved activation the plan did not count. %t2 reads
// %x through a barrier instead. %s2 duplicates %s, whose result the backward
// reads anyway (saved): merging it costs no memory, so it is left alone.
// CHECK-LABEL: func.func @backward_twin
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[T:.*]] = math.tanh %[[X]] : tensor<4xf32>
// CHECK: %[[S:.*]] = math.sin %[[X]] : tensor<4xf32>
// CHECK: remat.backward {
// CHECK-NEXT: %[[XB:.*]] = remat.barrier %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[AR:.*]] = math.exp %[[XB]] {remat.clone_of = 0 : i64}
// CHECK-NEXT: arith.mulf %[[AR]], %[[S]]
// CHECK-NEXT: %[[XT:.*]] = remat.barrier %[[X]] : tensor<4xf32>
// CHECK-NEXT: math.tanh %[[XT]] : tensor<4xf32>
// CHECK-NEXT: math.sin %[[X]] : tensor<4xf32>
// CHECK: remat.yield
// CANON-LABEL: func.func @backward_twin
// CANON-SAME: (%[[X:.*]]: tensor<4xf32>)
// CANON: %[[S:.*]] = math.sin %[[X]] : tensor<4xf32>
// CANON: remat.backward {
// CANON-NEXT: %[[XB:.*]] = remat.barrier %[[X]] : tensor<4xf32>
// CANON-NEXT: %[[AR:.*]] = math.exp %[[XB]] {remat.clone_of = 0 : i64}
// CANON-NEXT: arith.mulf %[[AR]], %[[S]]
// CANON-NEXT: %[[XT:.*]] = remat.barrier %[[X]] : tensor<4xf32>
// CANON-NEXT: math.tanh %[[XT]] : tensor<4xf32>
// CANON-NOT: math.sin
// CANON: remat.yield
func.func @backward_twin(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = math.tanh %x : tensor<4xf32>
  %s = math.sin %x : tensor<4xf32>
  %a = math.exp %x {remat.segment = 0 : i64} : tensor<4xf32>
  %b = arith.mulf %t, %a : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %a, %s : tensor<4xf32>
    %t2 = math.tanh %x : tensor<4xf32>
    %s2 = math.sin %x : tensor<4xf32>
    %e = arith.mulf %d, %t2 : tensor<4xf32>
    %f = arith.mulf %e, %s2 : tensor<4xf32>
    remat.yield %f : tensor<4xf32>
  } : tensor<4xf32>
  return %b, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a backward twin whose destination is made of its own constant
// and empty tensor (a pad of an argument, as the exporter writes the weight
// gradient's input) is kept apart too: CSE would merge the constants, the
// empties, the fills and then the twin, two ops below it.
// CHECK-LABEL: func.func @backward_pad_twin
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: remat.backward {
// CHECK: %[[XB:.*]] = remat.barrier %[[X]] : tensor<4xf32>
// CHECK-NEXT: tensor.insert_slice %[[XB]] into
// CANON-LABEL: func.func @backward_pad_twin
// CANON: remat.backward {
// CANON: remat.barrier
// CANON-NEXT: tensor.insert_slice
func.func @backward_pad_twin(%x: tensor<4xf32>) -> (tensor<f32>, tensor<6xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %p = tensor.insert_slice %x into %z[1] [4] [1] : tensor<4xf32> into tensor<6xf32>
  %se = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%c0 : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%p : tensor<6xf32>) outs(%s0 : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %t = arith.addf %a, %acc : f32
      linalg.yield %t : f32
    }
  %g = remat.backward {
    %c1 = arith.constant 0.0 : f32
    %e2 = tensor.empty() : tensor<6xf32>
    %z2 = linalg.fill ins(%c1 : f32) outs(%e2 : tensor<6xf32>) -> tensor<6xf32>
    %p2 = tensor.insert_slice %x into %z2[1] [4] [1] : tensor<4xf32> into tensor<6xf32>
    %d = arith.mulf %p2, %p2 : tensor<6xf32>
    remat.yield %d : tensor<6xf32>
  } : tensor<6xf32>
  return %s, %g : tensor<f32>, tensor<6xf32>
}

// -----

// Checks selective checkpointing: an op with remat.policy = "save" keeps its
// result saved (the backward reads %b directly) and acts as an input of the
// segment (%c is recomputed from it).
// CHECK-LABEL: func.func @save_policy
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[B:.*]] = math.exp %{{.*}} {remat.policy = "save", remat.segment = 0 : i64}
// CHECK: remat.backward {
// CHECK-NEXT: %[[BB:.*]] = remat.barrier %[[B]]
// CHECK-NEXT: %[[CR:.*]] = math.cos %[[BB]] {remat.clone_of = 1 : i64}
// CHECK-NEXT: %[[D0:.*]] = arith.mulf %[[CR]], %[[B]]
// CHECK-NEXT: %[[XB:.*]] = remat.barrier %[[X]]
// CHECK-NEXT: %[[AR:.*]] = math.tanh %[[XB]] {remat.clone_of = 0 : i64}
// CHECK-NEXT: arith.mulf %[[D0]], %[[AR]]
func.func @save_policy(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %b = math.exp %a {remat.segment = 0 : i64, remat.policy = "save"} : tensor<4xf32>
  %c = math.cos %b {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d0 = arith.mulf %c, %b : tensor<4xf32>
    %d1 = arith.mulf %d0, %a : tensor<4xf32>
    remat.yield %d1 : tensor<4xf32>
  } : tensor<4xf32>
  return %c, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks ops with regions: a clone of a linalg.generic keeps its body, and a
// value its body captures from the forward (%s) is remapped through the
// barrier; a use nested in a backward op's region counts for that op.
// CHECK-LABEL: func.func @regions
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[S:.*]]: f32)
// CHECK: %[[E:.*]] = tensor.empty()
// CHECK: remat.backward {
// CHECK-NEXT: %[[IN:.*]]:3 = remat.barrier %[[X]], %[[E]], %[[S]] : tensor<4xf32>, tensor<4xf32>, f32
// CHECK-NEXT: %[[AR:.*]] = linalg.generic {{.*}} ins(%[[IN]]#0 : tensor<4xf32>) outs(%[[IN]]#1 : tensor<4xf32>) attrs = {remat.clone_of = 0 : i64} {
// CHECK-NEXT: ^bb0(%[[IN0:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf %[[IN0]], %[[IN]]#2 : f32
// CHECK: linalg.generic
// CHECK: tensor.extract %[[AR]]
func.func @regions(%x: tensor<4xf32>, %s: f32) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {remat.segment = 0 : i64} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %g = remat.backward {
    %d = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        outs(%e : tensor<4xf32>) {
    ^bb0(%out: f32):
      %c0 = arith.constant 0 : index
      %v = tensor.extract %a[%c0] : tensor<4xf32>
      linalg.yield %v : f32
    } -> tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a forward value the backward region yields directly is
// recomputed before the yield.
// CHECK-LABEL: func.func @yielded
// CHECK: remat.backward {
// CHECK-NEXT: remat.barrier
// CHECK-NEXT: %[[AR:.*]] = math.tanh {{.*}} {remat.clone_of = 0 : i64}
// CHECK-NEXT: remat.yield %[[AR]]
func.func @yielded(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    remat.yield %a : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that new ids do not collide with remat.id values already in the
// function, and that a function without a backward region is left alone.
// CHECK-LABEL: func.func @fresh_ids
// CHECK: math.tanh %{{.*}} {remat.id = 8 : i64, remat.segment = 0 : i64}
// CHECK: math.tanh %{{.*}} {remat.clone_of = 8 : i64}
// CHECK-LABEL: func.func @no_backward
// CHECK-NEXT: math.tanh %{{.*}} : tensor<4xf32>
// CHECK-NEXT: return
func.func @fresh_ids(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %k = math.sin %x {remat.id = 7 : i64} : tensor<4xf32>
  %a = math.tanh %k {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %a, %a : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}

func.func @no_backward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = math.tanh %x : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// Checks that no value defined inside a segment, other than its inputs and
// its save/unclonable ops, is used by the backward region after the pass: in
// this two-layer step (segment 0 feeds segment 1, with a saved op in
// segment 1), the backward region reads only the arguments, segment 1's input
// %h1 (through barriers) and the saved %z2; the other segment values (%z1,
// %a1, %s2, %a2, %o) are used only through their clones.
// CHECK-LABEL: func.func @no_segment_value_saved
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[W1:.*]]: tensor<4xf32>, %[[W2:.*]]: tensor<4xf32>, %[[DY:.*]]: tensor<4xf32>)
// CHECK: %[[Z1:.*]] = arith.mulf %[[X]], %[[W1]] {remat.id
// CHECK: %[[A1:.*]] = math.tanh %[[Z1]] {remat.id
// CHECK: %[[H1:.*]] = arith.addf %[[A1]], %[[X]] {remat.id
// CHECK: %[[S2:.*]] = arith.mulf %[[H1]], %[[W2]] {remat.id
// CHECK: %[[Z2:.*]] = math.exp %[[S2]] {remat.policy = "save", remat.segment = 1
// CHECK: %[[A2:.*]] = math.tanh %[[Z2]] {remat.id
// CHECK: %[[O:.*]] = arith.addf %[[A2]], %[[H1]] {remat.id
// CHECK: remat.backward {
// CHECK-NOT: {{%}}[[Z1]]{{[^0-9]}}
// CHECK-NOT: {{%}}[[A1]]{{[^0-9]}}
// CHECK-NOT: {{%}}[[S2]]{{[^0-9]}}
// CHECK-NOT: {{%}}[[A2]]{{[^0-9]}}
// CHECK-NOT: {{%}}[[O]]{{[^0-9]}}
// CHECK: remat.yield
func.func @no_segment_value_saved(%x: tensor<4xf32>, %w1: tensor<4xf32>, %w2: tensor<4xf32>, %dy: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %z1 = arith.mulf %x, %w1 {remat.segment = 0 : i64} : tensor<4xf32>
  %a1 = math.tanh %z1 {remat.segment = 0 : i64} : tensor<4xf32>
  %h1 = arith.addf %a1, %x {remat.segment = 0 : i64} : tensor<4xf32>
  %s2 = arith.mulf %h1, %w2 {remat.segment = 1 : i64} : tensor<4xf32>
  %z2 = math.exp %s2 {remat.segment = 1 : i64, remat.policy = "save"} : tensor<4xf32>
  %a2 = math.tanh %z2 {remat.segment = 1 : i64} : tensor<4xf32>
  %o = arith.addf %a2, %h1 {remat.segment = 1 : i64} : tensor<4xf32>
  %g = remat.backward {
    %da2 = arith.mulf %dy, %a2 : tensor<4xf32>
    %dz2 = arith.mulf %da2, %z2 : tensor<4xf32>
    %ds2 = arith.mulf %dz2, %s2 : tensor<4xf32>
    %gw2 = arith.mulf %ds2, %h1 : tensor<4xf32>
    %dh1 = arith.addf %ds2, %o : tensor<4xf32>
    %da1 = arith.mulf %dh1, %a1 : tensor<4xf32>
    %dz1 = arith.mulf %da1, %z1 : tensor<4xf32>
    %gw1 = arith.mulf %dz1, %x : tensor<4xf32>
    %sum = arith.addf %gw1, %gw2 : tensor<4xf32>
    remat.yield %sum : tensor<4xf32>
  } : tensor<4xf32>
  return %o, %h1, %a1, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
