// RUN: remat-opt %s -split-input-file -remat-thread-rng | FileCheck %s

// Checks that offsets follow program order, forward then backward, each op
// reserving its element count rounded up to a multiple of 4 (15 -> 16,
// 2 -> 4, 8 -> 8), and that the seed argument is used.
// CHECK-LABEL: func.func @offsets(
// CHECK-SAME:      %[[SEED:.*]]: i64 {remat.rng_seed})
// CHECK:         %[[O0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %{{.*}} = remat.philox_uniform %[[SEED]], %[[O0]] : tensor<3x5xf32>
// CHECK:         %[[O1:.*]] = arith.constant 16 : i64
// CHECK-NEXT:    %{{.*}} = remat.philox_uniform %[[SEED]], %[[O1]] : tensor<2xf16>
// CHECK:         remat.backward {
// CHECK:           %[[O2:.*]] = arith.constant 20 : i64
// CHECK-NEXT:      %{{.*}} = remat.philox_uniform %[[SEED]], %[[O2]] : tensor<8xf32>
// CHECK-NOT:     remat.rng_uniform
func.func @offsets(%seed: i64 {remat.rng_seed}) -> (tensor<3x5xf32>, tensor<2xf16>, tensor<8xf32>) {
  %a = remat.rng_uniform : tensor<3x5xf32>
  %b = remat.rng_uniform : tensor<2xf16>
  %g = remat.backward {
    %c = remat.rng_uniform : tensor<8xf32>
    remat.yield %c : tensor<8xf32>
  } : tensor<8xf32>
  return %a, %b, %g : tensor<3x5xf32>, tensor<2xf16>, tensor<8xf32>
}

// -----

// Checks that the random op's attributes carry over and that the offset
// constant joins its segment, so that recomputation clones it.
// CHECK-LABEL: func.func @attributes(
// CHECK:         %[[O:.*]] = arith.constant {remat.segment = [0, 1]} 0 : i64
// CHECK-NEXT:    remat.philox_uniform %{{.*}}, %[[O]] {remat.name = "mask", remat.segment = [0, 1]} : tensor<4xf32>
func.func @attributes(%seed: i64 {remat.rng_seed}) -> tensor<4xf32> {
  %a = remat.rng_uniform {remat.segment = [0, 1], remat.name = "mask"} : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// Checks that a remat.rng_seed op serves as the seed when there is no seed
// argument, moved to the entry so that it dominates the first random op.
// CHECK-LABEL: func.func @seed_op(
// CHECK-NEXT:    %[[S:.*]] = remat.rng_seed
// CHECK:         remat.philox_uniform %[[S]], %{{.*}} : tensor<4xf32>
// CHECK:         remat.philox_uniform %[[S]], %{{.*}} : tensor<4xf32>
func.func @seed_op() -> (tensor<4xf32>, tensor<4xf32>, i64) {
  %a = remat.rng_uniform : tensor<4xf32>
  %s = remat.rng_seed
  %b = remat.rng_uniform : tensor<4xf32>
  return %a, %b, %s : tensor<4xf32>, tensor<4xf32>, i64
}

// -----

// Checks that functions without random ops are left alone, seed or not.
// CHECK-LABEL: func.func @no_random(
// CHECK-NEXT:    return
func.func @no_random(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Checks that a random op in an scf.for takes a new range every iteration:
// the loop's first offset (4, after %a) plus the iteration index times the
// 8 words one iteration draws; the op after the loop starts past all four
// iterations (4 + 4 * 8 = 36).
// CHECK-LABEL: func.func @loop(
// CHECK-SAME:      %[[SEED:.*]]: i64 {remat.rng_seed}
// CHECK:         %[[O0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    remat.philox_uniform %[[SEED]], %[[O0]] : tensor<4xf32>
// CHECK:         scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NEXT:      %[[I:.*]] = arith.index_castui %[[IV]] : index to i64
// CHECK-NEXT:      %[[W:.*]] = arith.constant 8 : i64
// CHECK-NEXT:      %[[IW:.*]] = arith.muli %[[I]], %[[W]] : i64
// CHECK-NEXT:      %[[S:.*]] = arith.constant 4 : i64
// CHECK-NEXT:      %[[B:.*]] = arith.addi %[[IW]], %[[S]] : i64
// CHECK-NEXT:      remat.philox_uniform %[[SEED]], %[[B]] : tensor<6xf32>
// CHECK:         %[[O2:.*]] = arith.constant 36 : i64
// CHECK-NEXT:    remat.philox_uniform %[[SEED]], %[[O2]] : tensor<2xf32>
func.func @loop(%seed: i64 {remat.rng_seed}, %acc0: tensor<4x6xf32>) -> (tensor<4xf32>, tensor<4x6xf32>, tensor<2xf32>) {
  %a = remat.rng_uniform : tensor<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %acc0) -> tensor<4x6xf32> {
    %u = remat.rng_uniform : tensor<6xf32>
    %ins = tensor.insert_slice %u into %acc[%i, 0] [1, 6] [1, 1] : tensor<6xf32> into tensor<4x6xf32>
    scf.yield %ins : tensor<4x6xf32>
  }
  %b = remat.rng_uniform : tensor<2xf32>
  return %a, %r, %b : tensor<4xf32>, tensor<4x6xf32>, tensor<2xf32>
}

// -----

// Checks that the iteration index of a loop with a non-zero lower bound and
// step is (iv - lb) / step (3, 5, 7, 9 -> 0, 1, 2, 3), that an i32 induction
// variable is widened, and that the ops of one iteration follow each other
// (4 + 12 = 16 words per iteration, after 16 for the loop: 16 + 4 * 16).
// CHECK-LABEL: func.func @bounds_and_step(
// CHECK-SAME:      %[[SEED:[^:]*]]: i64 {remat.rng_seed}
// CHECK:         %[[LB:.*]] = arith.constant 3 : i32
// CHECK:         %[[STEP:.*]] = arith.constant 2 : i32
// CHECK:         scf.for %[[IV:.*]] = %[[LB]] to %{{.*}} step %[[STEP]] iter_args
// CHECK-NEXT:      %[[D:.*]] = arith.subi %[[IV]], %[[LB]] : i32
// CHECK-NEXT:      %[[Q:.*]] = arith.divui %[[D]], %[[STEP]] : i32
// CHECK-NEXT:      %[[I:.*]] = arith.extui %[[Q]] : i32 to i64
// CHECK-NEXT:      %[[W:.*]] = arith.constant 16 : i64
// CHECK-NEXT:      %[[IW:.*]] = arith.muli %[[I]], %[[W]] : i64
// CHECK-NEXT:      %[[S:.*]] = arith.constant 16 : i64
// CHECK-NEXT:      %[[B:.*]] = arith.addi %[[IW]], %[[S]] : i64
// CHECK-NEXT:      remat.philox_uniform %[[SEED]], %[[B]] : tensor<3xf32>
// CHECK-NEXT:      %[[C4:.*]] = arith.constant 4 : i64
// CHECK-NEXT:      %[[B4:.*]] = arith.addi %[[B]], %[[C4]] : i64
// CHECK-NEXT:      remat.philox_uniform %[[SEED]], %[[B4]] : tensor<12xf32>
// CHECK:         %[[END:.*]] = arith.constant 80 : i64
// CHECK-NEXT:    remat.philox_uniform %[[SEED]], %[[END]] : tensor<1xf32>
func.func @bounds_and_step(%seed: i64 {remat.rng_seed}, %x: tensor<3xf32>) -> (tensor<16xf32>, tensor<3xf32>, tensor<1xf32>) {
  %first = remat.rng_uniform : tensor<16xf32>
  %lb = arith.constant 3 : i32
  %ub = arith.constant 10 : i32
  %step = arith.constant 2 : i32
  %r = scf.for %i = %lb to %ub step %step iter_args(%acc = %x) -> tensor<3xf32> : i32 {
    %u = remat.rng_uniform : tensor<3xf32>
    %v = remat.rng_uniform : tensor<12xf32>
    %s = arith.addf %acc, %u : tensor<3xf32>
    scf.yield %s : tensor<3xf32>
  }
  %last = remat.rng_uniform : tensor<1xf32>
  return %first, %r, %last : tensor<16xf32>, tensor<3xf32>, tensor<1xf32>
}

// -----

// Checks nested loops: the inner loop's first offset is the outer
// iteration's plus the words drawn before it in the outer body (4), its
// iterations 8 words apart; an outer iteration draws 4 + 2 * 8 = 20 words,
// so the op after the loops starts at 3 * 20 = 60.
// CHECK-LABEL: func.func @nested(
// CHECK-SAME:      %[[SEED:[^:]*]]: i64 {remat.rng_seed}
// CHECK:         scf.for %[[I:[^ ]*]] =
// CHECK-NEXT:      %[[II:.*]] = arith.index_castui %[[I]] : index to i64
// CHECK-NEXT:      %[[W20:.*]] = arith.constant 20 : i64
// CHECK-NEXT:      %[[OUTER:.*]] = arith.muli %[[II]], %[[W20]] : i64
// CHECK-NEXT:      remat.philox_uniform %[[SEED]], %[[OUTER]] : tensor<4xf32>
// CHECK:           scf.for %[[J:[^ ]*]] =
// CHECK-NEXT:        %[[JI:.*]] = arith.index_castui %[[J]] : index to i64
// CHECK-NEXT:        %[[W8:.*]] = arith.constant 8 : i64
// CHECK-NEXT:        %[[JW:.*]] = arith.muli %[[JI]], %[[W8]] : i64
// CHECK-NEXT:        %[[C4:.*]] = arith.constant 4 : i64
// CHECK-NEXT:        %[[JS:.*]] = arith.addi %[[JW]], %[[C4]] : i64
// CHECK-NEXT:        %[[INNER:.*]] = arith.addi %[[OUTER]], %[[JS]] : i64
// CHECK-NEXT:        remat.philox_uniform %[[SEED]], %[[INNER]] : tensor<5xf32>
// CHECK:         %[[END:.*]] = arith.constant 60 : i64
// CHECK-NEXT:    remat.philox_uniform %[[SEED]], %[[END]] : tensor<4xf32>
func.func @nested(%seed: i64 {remat.rng_seed}, %x: tensor<5xf32>) -> (tensor<5xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> tensor<5xf32> {
    %w = remat.rng_uniform : tensor<4xf32>
    %in = scf.for %j = %c0 to %c2 step %c1 iter_args(%a = %acc) -> tensor<5xf32> {
      %u = remat.rng_uniform : tensor<5xf32>
      %s = arith.addf %a, %u : tensor<5xf32>
      scf.yield %s : tensor<5xf32>
    }
    scf.yield %in : tensor<5xf32>
  }
  %last = remat.rng_uniform : tensor<4xf32>
  return %r, %last : tensor<5xf32>, tensor<4xf32>
}

// -----

// Checks that the branches of an scf.if in a loop take disjoint ranges (then
// 0..7, else 8..11 of each iteration's 12 words), that an scf.if without
// else reserves only its then branch, and that an scf.index_switch lays its
// regions out one after the other (the default region first).
// CHECK-LABEL: func.func @branches(
// CHECK-SAME:      %[[SEED:[^:]*]]: i64 {remat.rng_seed}
// CHECK:         scf.for %[[I:[^ ]*]] =
// CHECK-NEXT:      %[[II:.*]] = arith.index_castui %[[I]] : index to i64
// CHECK-NEXT:      %[[W:.*]] = arith.constant 12 : i64
// CHECK-NEXT:      %[[B:.*]] = arith.muli %[[II]], %[[W]] : i64
// CHECK:           scf.if
// CHECK-NEXT:        remat.philox_uniform %[[SEED]], %[[B]] : tensor<8xf32>
// CHECK:           } else {
// CHECK-NEXT:        %[[C8:.*]] = arith.constant 8 : i64
// CHECK-NEXT:        %[[E:.*]] = arith.addi %[[B]], %[[C8]] : i64
// CHECK-NEXT:        remat.philox_uniform %[[SEED]], %[[E]] : tensor<4xf32>
// CHECK:         %[[T:.*]] = arith.constant 48 : i64
// CHECK-NEXT:    remat.philox_uniform %[[SEED]], %[[T]] : tensor<2xf32>
// CHECK:         scf.index_switch
// CHECK:           case 1 {
// CHECK-NEXT:        %[[K1:.*]] = arith.constant 56 : i64
// CHECK-NEXT:        remat.philox_uniform %[[SEED]], %[[K1]] : tensor<4xf32>
// CHECK:           default {
// CHECK-NEXT:        %[[K0:.*]] = arith.constant 52 : i64
// CHECK-NEXT:        remat.philox_uniform %[[SEED]], %[[K0]] : tensor<4xf32>
// CHECK:         %[[END:.*]] = arith.constant 60 : i64
// CHECK-NEXT:    remat.philox_uniform %[[SEED]], %[[END]] : tensor<1xf32>
func.func @branches(%seed: i64 {remat.rng_seed}, %c: i1, %k: index) -> (i1, tensor<4xf32>, tensor<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %c) -> i1 {
    %b = scf.if %acc -> i1 {
      %u = remat.rng_uniform : tensor<8xf32>
      scf.yield %acc : i1
    } else {
      %v = remat.rng_uniform : tensor<4xf32>
      scf.yield %c : i1
    }
    scf.yield %b : i1
  }
  scf.if %c {
    %u = remat.rng_uniform : tensor<2xf32>
  }
  %s = scf.index_switch %k -> tensor<4xf32>
  case 1 {
    %u = remat.rng_uniform : tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  }
  default {
    %u = remat.rng_uniform : tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  }
  %last = remat.rng_uniform : tensor<1xf32>
  return %r, %s, %last : i1, tensor<4xf32>, tensor<1xf32>
}

// -----

// Checks that a loop that runs no iteration reserves nothing (its random op
// is threaded all the same), and that loops without random ops are left
// alone whatever their bounds.
// CHECK-LABEL: func.func @no_draws(
// CHECK:         scf.for
// CHECK:           remat.philox_uniform
// CHECK:         scf.for
// CHECK-NOT:       arith.muli
// CHECK-NOT:       arith.muli
// CHECK:         %[[O:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    remat.philox_uniform %{{.*}}, %[[O]] : tensor<4xf32>
func.func @no_draws(%seed: i64 {remat.rng_seed}, %n: index, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c5 to %c0 step %c1 {
    %u = remat.rng_uniform : tensor<4xf32>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %s = arith.addf %acc, %x : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  %u = remat.rng_uniform : tensor<4xf32>
  return %r, %u : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that the offset ops of random ops in a loop that carries a segment
// are made inside the loop (so they are recomputed with it; marks belong on
// the loop, not on the ops in its body), and that a loop in the backward
// region continues the forward's stream (8 + 3 * 8 = 32).
// CHECK-LABEL: func.func @backward_loop(
// CHECK-SAME:      %[[SEED:[^:]*]]: i64 {remat.rng_seed}
// CHECK:         scf.for %[[I:[^ ]*]] =
// CHECK-NEXT:      %[[II:.*]] = arith.index_castui %[[I]] : index to i64
// CHECK-NEXT:      %[[W:.*]] = arith.constant 8 : i64
// CHECK-NEXT:      %[[IW:.*]] = arith.muli %[[II]], %[[W]] : i64
// CHECK-NEXT:      %[[S:.*]] = arith.constant 8 : i64
// CHECK-NEXT:      %[[B:.*]] = arith.addi %[[IW]], %[[S]] : i64
// CHECK-NEXT:      remat.philox_uniform %[[SEED]], %[[B]] : tensor<4xf32>
// CHECK-NEXT:      %[[C4:.*]] = arith.constant 4 : i64
// CHECK-NEXT:      %[[B4:.*]] = arith.addi %[[B]], %[[C4]] : i64
// CHECK-NEXT:      remat.philox_uniform %[[SEED]], %[[B4]] : tensor<4xf32>
// CHECK:         } {remat.segment = 3 : i64}
// CHECK:         remat.backward
// CHECK:           scf.for %[[J:[^ ]*]] =
// CHECK-NEXT:        %[[JI:.*]] = arith.index_castui %[[J]] : index to i64
// CHECK-NEXT:        %[[W4:.*]] = arith.constant 4 : i64
// CHECK-NEXT:        %[[JW:.*]] = arith.muli %[[JI]], %[[W4]] : i64
// CHECK-NEXT:        %[[S32:.*]] = arith.constant 32 : i64
// CHECK-NEXT:        %[[BB:.*]] = arith.addi %[[JW]], %[[S32]] : i64
// CHECK-NEXT:        remat.philox_uniform %[[SEED]], %[[BB]] : tensor<4xf32>
func.func @backward_loop(%seed: i64 {remat.rng_seed}, %x: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = remat.rng_uniform : tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %f = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %u = remat.rng_uniform : tensor<4xf32>
    %v = remat.rng_uniform : tensor<4xf32>
    %s = arith.addf %acc, %u : tensor<4xf32>
    %t = arith.addf %s, %v : tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  } {remat.segment = 3 : i64}
  %g = remat.backward {
    %r = scf.for %j = %c0 to %c3 step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
      %u = remat.rng_uniform : tensor<4xf32>
      %s = arith.addf %acc, %u : tensor<4xf32>
      scf.yield %s : tensor<4xf32>
    }
    remat.yield %r : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %f, %g : tensor<8xf32>, tensor<4xf32>, tensor<4xf32>
}
