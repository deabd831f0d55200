// RUN: remat-opt %s -split-input-file -verify-diagnostics -remat-verify | FileCheck %s

// Checks that faithful clones pass and the IR is left unchanged: operands
// read through a barrier (or two), produced by another clone, or equal
// constants are equivalent; bookkeeping attributes are ignored.
// CHECK-LABEL: func.func @faithful
// CHECK: remat.philox_uniform %{{.*}}#0, %{{.*}}#1 {remat.clone_of = 0 : i64}
func.func @faithful(%x: tensor<4xf32>, %seed: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %off = arith.constant 4 : i64
  %u = remat.philox_uniform %seed, %off {remat.id = 0 : i64, remat.segment = 0 : i64} : tensor<4xf32>
  %m = arith.mulf %x, %u {remat.id = 1 : i64, remat.segment = [0, 1], remat.name = "m"} : tensor<4xf32>
  %c = arith.constant dense<2.0> : tensor<4xf32>
  %a = arith.addf %m, %c fastmath<fast> {remat.id = 2 : i64, remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %b:3 = remat.barrier %seed, %off, %x : i64, i64, tensor<4xf32>
    %ur = remat.philox_uniform %b#0, %b#1 {remat.clone_of = 0 : i64} : tensor<4xf32>
    %bb = remat.barrier %b#2 : tensor<4xf32>
    %mr = arith.mulf %bb, %ur {remat.clone_of = 1 : i64} : tensor<4xf32>
    %c2 = arith.constant dense<2.0> : tensor<4xf32>
    %ar = arith.addf %mr, %c2 fastmath<fast> {remat.clone_of = 2 : i64} : tensor<4xf32>
    remat.yield %ar : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a clone whose attribute differs from its original's fails.
func.func @attribute_differs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-note @+1 {{the original 'arith.addf' is here}}
  %a = arith.addf %x, %x fastmath<fast> {remat.id = 0 : i64, remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %b = remat.barrier %x : tensor<4xf32>
    // expected-error @+1 {{'arith.addf' op is not a faithful clone of its original (remat.clone_of = 0): it has attribute 'fastmath' = #arith.fastmath<none> but its original has #arith.fastmath<fast>}}
    %ar = arith.addf %b, %b {remat.clone_of = 0 : i64} : tensor<4xf32>
    remat.yield %ar : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that an attribute the original lacks is a mismatch too.
func.func @extra_attribute(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-note @+1 {{the original 'math.tanh' is here}}
  %a = math.tanh %x {remat.id = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %b = remat.barrier %x : tensor<4xf32>
    // expected-error @+1 {{'math.tanh' op is not a faithful clone of its original (remat.clone_of = 0): it has attribute 'extra' that its original lacks}}
    %ar = math.tanh %b {remat.clone_of = 0 : i64, extra} : tensor<4xf32>
    remat.yield %ar : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a clone whose result type differs from its original's fails.
func.func @type_differs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf16>) {
  // expected-note @+1 {{the original 'arith.truncf' is here}}
  %a = arith.truncf %x {remat.id = 0 : i64} : tensor<4xf32> to tensor<4xbf16>
  %g = remat.backward {
    %b = remat.barrier %x : tensor<4xf32>
    // expected-error @+1 {{'arith.truncf' op is not a faithful clone of its original (remat.clone_of = 0): its result #0 has type 'tensor<4xf16>' but its original's has type 'tensor<4xbf16>'}}
    %ar = arith.truncf %b {remat.clone_of = 0 : i64} : tensor<4xf32> to tensor<4xf16>
    remat.yield %ar : tensor<4xf16>
  } : tensor<4xf16>
  %e = arith.extf %a : tensor<4xbf16> to tensor<4xf32>
  return %e, %g : tensor<4xf32>, tensor<4xf16>
}

// -----

// Checks that a clone reading a different value than its original fails,
// even through a barrier.
func.func @operand_differs(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-note @+1 {{the original 'arith.subf' is here}}
  %a = arith.subf %x, %y {remat.id = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %b:2 = remat.barrier %x, %y : tensor<4xf32>, tensor<4xf32>
    // expected-error @+1 {{'arith.subf' op is not a faithful clone of its original (remat.clone_of = 0): its operand #1 is not equivalent to its original's operand #1 (not the same value, nor a barrier or clone of it)}}
    %ar = arith.subf %b#0, %b#0 {remat.clone_of = 0 : i64} : tensor<4xf32>
    remat.yield %ar : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that an operand that no clone produces is still equivalent when its
// producer computes the same thing as the original operand's, on equivalent
// operands, without memory effects: canonicalization rebuilds ops (a folded
// transpose is a new op) in the forward and in the recomputation alike.
// CHECK-LABEL: func.func @rebuilt_operand(
func.func @rebuilt_operand(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = arith.negf %x : tensor<4xf32>
  %a = math.exp %n {remat.id = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %b = remat.barrier %x : tensor<4xf32>
    %nr = arith.negf %b : tensor<4xf32>
    %ar = math.exp %nr {remat.clone_of = 0 : i64} : tensor<4xf32>
    remat.yield %ar : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a rebuilt operand whose producer differs from the original
// operand's (an attribute, or an operand further up) is not equivalent.
func.func @rebuilt_operand_differs(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %n = arith.negf %x : tensor<4xf32>
  // expected-note @+1 {{the original 'math.exp' is here}}
  %a = math.exp %n {remat.id = 0 : i64} : tensor<4xf32>
  // expected-note @+1 {{the original 'math.tanh' is here}}
  %t = math.tanh %n {remat.id = 1 : i64} : tensor<4xf32>
  %g = remat.backward {
    %b:2 = remat.barrier %x, %y : tensor<4xf32>, tensor<4xf32>
    %nf = arith.negf %b#0 fastmath<fast> : tensor<4xf32>
    // expected-error @+1 {{'math.exp' op is not a faithful clone of its original (remat.clone_of = 0): its operand #0 is not equivalent to its original's operand #0}}
    %ar = math.exp %nf {remat.clone_of = 0 : i64} : tensor<4xf32>
    %ny = arith.negf %b#1 : tensor<4xf32>
    // expected-error @+1 {{'math.tanh' op is not a faithful clone of its original (remat.clone_of = 1): its operand #0 is not equivalent to its original's operand #0}}
    %tr = math.tanh %ny {remat.clone_of = 1 : i64} : tensor<4xf32>
    %s = arith.addf %ar, %tr : tensor<4xf32>
    remat.yield %s : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %t, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that an operand produced by the clone of another op than the
// original operand's producer is not equivalent, nor is a different constant.
func.func @wrong_clone_operand(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.id = 0 : i64} : tensor<4xf32>
  %e = math.exp %x {remat.id = 1 : i64} : tensor<4xf32>
  // expected-note @+1 {{the original 'math.sin' is here}}
  %s = math.sin %a {remat.id = 2 : i64} : tensor<4xf32>
  %c = arith.constant dense<1.0> : tensor<4xf32>
  // expected-note @+1 {{the original 'arith.addf' is here}}
  %t = arith.addf %x, %c {remat.id = 3 : i64} : tensor<4xf32>
  %g = remat.backward {
    %b = remat.barrier %x : tensor<4xf32>
    %er = math.exp %b {remat.clone_of = 1 : i64} : tensor<4xf32>
    // expected-error @+1 {{'math.sin' op is not a faithful clone of its original (remat.clone_of = 2): its operand #0 is not equivalent to its original's operand #0}}
    %sr = math.sin %er {remat.clone_of = 2 : i64} : tensor<4xf32>
    %c2 = arith.constant dense<2.0> : tensor<4xf32>
    // expected-error @+1 {{'arith.addf' op is not a faithful clone of its original (remat.clone_of = 3): its operand #1 is not equivalent to its original's operand #1}}
    %tr = arith.addf %b, %c2 {remat.clone_of = 3 : i64} : tensor<4xf32>
    %d = arith.addf %sr, %tr : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %s, %e, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a clone of a different op than its original fails.
func.func @op_differs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-note @+1 {{the original 'math.tanh' is here}}
  %a = math.tanh %x {remat.id = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    // expected-error @+1 {{'math.exp' op is not a faithful clone of its original (remat.clone_of = 0): it is 'math.exp' but its original is 'math.tanh'}}
    %ar = math.exp %x {remat.clone_of = 0 : i64} : tensor<4xf32>
    remat.yield %ar : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a clone whose region differs from its original's fails.
func.func @region_differs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  // expected-note @+1 {{the original 'linalg.generic' is here}}
  %a = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {remat.id = 0 : i64} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %g = remat.backward {
    %b:2 = remat.barrier %x, %e : tensor<4xf32>, tensor<4xf32>
    // expected-error @+1 {{'linalg.generic' op is not a faithful clone of its original (remat.clone_of = 0): in region #0, 'arith.mulf' differs from its original: its operand #1 is not equivalent to its original's operand #1}}
    %ar = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%b#0 : tensor<4xf32>) outs(%b#1 : tensor<4xf32>) attrs = {remat.clone_of = 0 : i64} {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %out : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    remat.yield %ar : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a clone free of memory effects whose original is gone (as
// canonicalization erases a forward op that only the backward read) is not
// an error, only a remark: it computes the same wherever it runs.
func.func @missing_original(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = remat.backward {
    // expected-remark @+1 {{has 'remat.clone_of' = 5 but no op has 'remat.id' = 5 (removed, e.g. as dead after recomputation): it has no memory effects; nothing to compare it with}}
    %ar = math.tanh %x {remat.clone_of = 5 : i64} : tensor<4xf32>
    remat.yield %ar : tensor<4xf32>
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Checks that two forward ops with the same remat.id fail.
func.func @duplicate_id(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-note @+1 {{the other op is here}}
  %a = math.tanh %x {remat.id = 3 : i64} : tensor<4xf32>
  // expected-error @+1 {{'math.exp' op has 'remat.id' = 3 like another op; ids are unique within a function}}
  %b = math.exp %x {remat.id = 3 : i64} : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
