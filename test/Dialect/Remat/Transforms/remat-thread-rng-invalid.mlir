// RUN: remat-opt %s -split-input-file -remat-thread-rng -verify-diagnostics

// Checks that random ops without a seed are an error naming the first one.
func.func @no_seed(%x: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'remat.rng_uniform' op has no seed to thread: mark an i64 argument of @no_seed with {remat.rng_seed} or add a 'remat.rng_seed' op}}
  %a = remat.rng_uniform : tensor<4xf32>
  %b = remat.rng_uniform : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a random op in an scf.while is an error at the loop with a
// note at the random op: the loop has no iteration index to advance the
// offset by, so every iteration would draw the same numbers.
func.func @while(%seed: i64 {remat.rng_seed}, %n: i64) -> i64 {
  // expected-error @+1 {{'scf.while' op draws random numbers in a region that may run any number of times and has no iteration index to advance their offsets by, so every run would draw the same numbers; -remat-thread-rng threads random ops in scf.for, scf.if, scf.index_switch and scf.execute_region}}
  %r = scf.while (%i = %n) : (i64) -> i64 {
    %c0 = arith.constant 0 : i64
    %go = arith.cmpi sgt, %i, %c0 : i64
    scf.condition(%go) %i : i64
  } do {
  ^bb0(%i: i64):
    // expected-note @+1 {{a random op is here}}
    %u = remat.rng_uniform : tensor<4xf32>
    %c1 = arith.constant 1 : i64
    %next = arith.subi %i, %c1 : i64
    scf.yield %next : i64
  }
  return %r : i64
}

// -----

// Checks that a random op in an scf.for with a trip count that is not a
// constant is an error: the words after the loop would depend on it.
func.func @dynamic_trip_count(%seed: i64 {remat.rng_seed}, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'scf.for' op draws random numbers in its body but its trip count is not a constant: each iteration's offset is the loop's first offset plus the iteration index times the words one iteration draws, so the bounds and step must be constants}}
  scf.for %i = %c0 to %n step %c1 {
    // expected-note @+1 {{a random op is here}}
    %u = remat.rng_uniform : tensor<4xf32>
  }
  return
}

// -----

// Checks that the check looks through nested loops: the inner loop's trip
// count is not a constant.
func.func @dynamic_inner_trip_count(%seed: i64 {remat.rng_seed}, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{'scf.for' op draws random numbers in its body but its trip count is not a constant}}
    scf.for %j = %c0 to %n step %c1 {
      // expected-note @+1 {{a random op is here}}
      %u = remat.rng_uniform : tensor<4xf32>
    }
  }
  return
}

// -----

// Checks that a random op in a region of several blocks is an error: a
// branch could run it again with the same offset.
func.func @blocks(%seed: i64 {remat.rng_seed}) -> tensor<4xf32> {
  %r = scf.execute_region -> tensor<4xf32> {
    cf.br ^bb1
  ^bb1:
    // expected-error @+1 {{'remat.rng_uniform' op draws random numbers in a region of 2 blocks, whose branches may run it any number of times with the same offset; use structured control flow (scf.for, scf.if)}}
    %u = remat.rng_uniform : tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Checks that a loop whose iterations together draw more than 2^64 words is
// an error (2^62 iterations of 8 words).
func.func @exhausted(%seed: i64 {remat.rng_seed}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %big = arith.constant 4611686018427387904 : index
  // expected-error @+1 {{'scf.for' op exhausts the 2^64 random words of the step's stream}}
  scf.for %i = %c0 to %big step %c1 {
    %u = remat.rng_uniform : tensor<5xf32>
  }
  return
}

// -----

// Checks that the words after a loop are counted against the stream too:
// two loops of 2^60 iterations of 8 words each draw 2^64 words.
func.func @exhausted_after(%seed: i64 {remat.rng_seed}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1152921504606846976 : index
  scf.for %i = %c0 to %n step %c1 {
    %u = remat.rng_uniform : tensor<5xf32>
  }
  // expected-error @+1 {{'scf.for' op exhausts the 2^64 random words of the step's stream}}
  scf.for %i = %c0 to %n step %c1 {
    %u = remat.rng_uniform : tensor<5xf32>
  }
  return
}
