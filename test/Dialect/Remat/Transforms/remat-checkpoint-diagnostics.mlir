// RUN: remat-opt %s -split-input-file -allow-unregistered-dialect -verify-diagnostics -remat-checkpoint | FileCheck %s

// Checks that an op of unknown side effects in a segment is not cloned: the
// pass says so with a remark, and its result stays saved and becomes an input
// of the segment (the clone of %b reads it through the barrier).
// CHECK-LABEL: func.func @unregistered
// CHECK: %[[O:.*]] = "test.opaque"
// CHECK: remat.backward {
// CHECK-NEXT: %[[IN:.*]]:2 = remat.barrier %arg0, %[[O]]
// CHECK-NEXT: %[[AR:.*]] = math.tanh %[[IN]]#0 {remat.clone_of = 0 : i64}
// CHECK-NEXT: %[[BR:.*]] = math.exp %[[IN]]#1 {remat.clone_of = 1 : i64}
// CHECK-NEXT: %[[D0:.*]] = arith.mulf %[[BR]], %[[AR]]
// CHECK-NEXT: arith.mulf %[[D0]], %[[O]]
func.func @unregistered(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  // expected-remark @+1 {{'test.opaque' in checkpoint segment 0 cannot be recomputed (it is unregistered, so its side effects are unknown); its results stay saved}}
  %o = "test.opaque"(%a) {remat.segment = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %b = math.exp %o {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d0 = arith.mulf %b, %a : tensor<4xf32>
    %d1 = arith.mulf %d0, %o : tensor<4xf32>
    remat.yield %d1 : tensor<4xf32>
  } : tensor<4xf32>
  return %b, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that an op with memory effects in a (nested) segment is kept with a
// remark naming the effect, even when no backward op needs it.
// CHECK-LABEL: func.func @memory_effect
// CHECK: remat.rng_seed {remat.segment = [1, 2]}
// CHECK-NOT: remat.clone_of
func.func @memory_effect(%x: tensor<4xf32>) -> (i64, tensor<4xf32>) {
  // expected-remark @+1 {{'remat.rng_seed' in checkpoint segment [1, 2] cannot be recomputed (it has a read effect on 'remat::RngState'); its results stay saved}}
  %s = remat.rng_seed {remat.segment = [1, 2]}
  %g = remat.backward {
    remat.yield %x : tensor<4xf32>
  } : tensor<4xf32>
  return %s, %g : i64, tensor<4xf32>
}

// -----

// Checks that an op whose region has side effects cannot be cloned.
func.func @region_effect(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-remark @+1 {{'scf.execute_region' in checkpoint segment 0 cannot be recomputed (its region holds 'test.effect' and it is unregistered, so its side effects are unknown); its results stay saved}}
  %r = scf.execute_region -> tensor<4xf32> {
    "test.effect"() : () -> ()
    scf.yield %x : tensor<4xf32>
  } {remat.segment = 0 : i64}
  %g = remat.backward {
    remat.yield %r : tensor<4xf32>
  } : tensor<4xf32>
  return %r, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a stateful remat.rng_uniform in a segment is an error: a clone
// would draw different numbers.
func.func @stateful_rng(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'remat.rng_uniform' op is a stateful random op in checkpoint segment 0: a recomputed copy would draw different numbers; run -remat-thread-rng first}}
  %u = remat.rng_uniform {remat.segment = 0 : i64} : tensor<4xf32>
  %m = arith.mulf %x, %u {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %m, %m : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %m, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a remat.rng_uniform with remat.policy = "save" is accepted: it
// is never recomputed, only its consumers are, reading it through the barrier.
// CHECK-LABEL: func.func @saved_rng
// CHECK: %[[U:.*]] = remat.rng_uniform {remat.policy = "save", remat.segment = 0 : i64}
// CHECK: remat.backward {
// CHECK-NEXT: %[[IN:.*]]:2 = remat.barrier %arg0, %[[U]]
// CHECK-NEXT: arith.mulf %[[IN]]#0, %[[IN]]#1 {remat.clone_of = 0 : i64}
func.func @saved_rng(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %u = remat.rng_uniform {remat.segment = 0 : i64, remat.policy = "save"} : tensor<4xf32>
  %m = arith.mulf %x, %u {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %m, %m : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %m, %g : tensor<4xf32>, tensor<4xf32>
}
