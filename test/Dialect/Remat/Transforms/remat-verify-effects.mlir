// RUN: remat-opt %s -split-input-file -verify-diagnostics -remat-verify

// Checks that a clone of a stateful random op is an error at the clone with
// a note at the original: recomputed, it draws the generator's next numbers.
func.func @stateful_random(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-note @+1 {{the original 'remat.rng_uniform' is here}}
  %u = remat.rng_uniform {remat.id = 0 : i64} : tensor<4xf32>
  %y = arith.mulf %x, %u : tensor<4xf32>
  %g = remat.backward {
    // expected-error @+1 {{'remat.rng_uniform' op is a recomputation (remat.clone_of = 0) that draws from the stateful generator ('remat.rng_uniform'): it gets the generator's next numbers, not those its original drew; run -remat-thread-rng before -remat-checkpoint}}
    %ur = remat.rng_uniform {remat.clone_of = 0 : i64} : tensor<4xf32>
    %d = arith.mulf %x, %ur : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %y, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a stateful random op nested in a recomputed loop is found.
func.func @stateful_random_in_loop(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // expected-note @+1 {{the original 'scf.for' is here}}
  %y = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x) -> tensor<4xf32> {
    %u = remat.rng_uniform : tensor<4xf32>
    %s = arith.addf %a, %u : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  } {remat.id = 0 : i64}
  %g = remat.backward {
    %b:4 = remat.barrier %c0, %c1, %c2, %x : index, index, index, tensor<4xf32>
    // expected-error @+1 {{'scf.for' op is a recomputation (remat.clone_of = 0) that draws from the stateful generator}}
    %yr = scf.for %i = %b#0 to %b#2 step %b#1 iter_args(%a = %b#3) -> tensor<4xf32> {
      // expected-note @+1 {{the random op is here}}
      %u = remat.rng_uniform : tensor<4xf32>
      %s = arith.addf %a, %u : tensor<4xf32>
      scf.yield %s : tensor<4xf32>
    } {remat.clone_of = 0 : i64}
    remat.yield %yr : tensor<4xf32>
  } : tensor<4xf32>
  return %y, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a clone reading the generator state (remat.rng_seed) after a
// stateful draw is an error: the draw writes that state.
func.func @seed_after_draw() -> (i64, tensor<4xf32>, i64) {
  // expected-note @+1 {{the original 'remat.rng_seed' is here}}
  %s = remat.rng_seed {remat.id = 0 : i64}
  // expected-note @+1 {{this 'remat.rng_uniform' may write what it reads}}
  %u = remat.rng_uniform : tensor<4xf32>
  %g = remat.backward {
    // expected-error @+1 {{'remat.rng_seed' op is a recomputation (remat.clone_of = 0) that reads 'remat::RngState', which may be written between its original and it, so it may read a different value}}
    %sr = remat.rng_seed {remat.clone_of = 0 : i64}
    remat.yield %sr : i64
  } : i64
  return %s, %u, %g : i64, tensor<4xf32>, i64
}

// -----

// Checks that a memref.load clone that reads after a store to the same
// memory is an error with notes at the original and at the store.
func.func @load_after_store(%v: f32, %w: f32, %i: index) -> (f32, f32) {
  %m = memref.alloc() : memref<4xf32>
  memref.store %v, %m[%i] : memref<4xf32>
  // expected-note @+1 {{the original 'memref.load' is here}}
  %l = memref.load %m[%i] {remat.id = 0 : i64} : memref<4xf32>
  // expected-note @+1 {{this 'memref.store' may write what it reads}}
  memref.store %w, %m[%i] : memref<4xf32>
  %g = remat.backward {
    %b:2 = remat.barrier %m, %i : memref<4xf32>, index
    // expected-error @+1 {{'memref.load' op is a recomputation (remat.clone_of = 0) that reads '<Default>', which may be written between its original and it, so it may read a different value}}
    %lr = memref.load %b#0[%b#1] {remat.clone_of = 0 : i64} : memref<4xf32>
    remat.yield %lr : f32
  } : f32
  return %l, %g : f32, f32
}

// -----

// Checks that a store only before the original, or only after the clone,
// and a store to another allocation in between leave a load clone valid.
func.func @load_unclobbered(%v: f32, %w: f32, %i: index) -> (f32, f32) {
  %m = memref.alloc() : memref<4xf32>
  %n = memref.alloc() : memref<4xf32>
  memref.store %v, %m[%i] : memref<4xf32>
  %l = memref.load %m[%i] {remat.id = 0 : i64} : memref<4xf32>
  memref.store %w, %n[%i] : memref<4xf32>
  %g = remat.backward {
    %b:2 = remat.barrier %m, %i : memref<4xf32>, index
    %lr = memref.load %b#0[%b#1] {remat.clone_of = 0 : i64} : memref<4xf32>
    memref.store %w, %b#0[%b#1] : memref<4xf32>
    remat.yield %lr : f32
  } : f32
  return %l, %g : f32, f32
}

// -----

// Checks that a store through another function argument may clobber the
// load's memory: arguments may alias.
func.func @load_argument(%m: memref<4xf32>, %n: memref<4xf32>, %w: f32, %i: index) -> (f32, f32) {
  // expected-note @+1 {{the original 'memref.load' is here}}
  %l = memref.load %m[%i] {remat.id = 0 : i64} : memref<4xf32>
  // expected-note @+1 {{this 'memref.store' may write what it reads}}
  memref.store %w, %n[%i] : memref<4xf32>
  %g = remat.backward {
    // expected-error @+1 {{'memref.load' op is a recomputation (remat.clone_of = 0) that reads '<Default>', which may be written between its original and it}}
    %lr = memref.load %m[%i] {remat.clone_of = 0 : i64} : memref<4xf32>
    remat.yield %lr : f32
  } : f32
  return %l, %g : f32, f32
}

// -----

// Checks that a store in the backward region before the clone, nested in a
// loop and through a subview, clobbers it too.
func.func @store_in_backward_loop(%w: f32, %i: index) -> (f32, f32) {
  %m = memref.alloc() : memref<8xf32>
  // expected-note @+1 {{the original 'memref.load' is here}}
  %l = memref.load %m[%i] {remat.id = 0 : i64} : memref<8xf32>
  %g = remat.backward {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = memref.subview %m[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
    scf.for %j = %c0 to %c4 step %c1 {
      // expected-note @+1 {{this 'memref.store' may write what it reads}}
      memref.store %w, %s[%j] : memref<4xf32, strided<[1], offset: 4>>
    }
    // expected-error @+1 {{'memref.load' op is a recomputation (remat.clone_of = 0) that reads '<Default>', which may be written between its original and it}}
    %lr = memref.load %m[%i] {remat.clone_of = 0 : i64} : memref<8xf32>
    remat.yield %lr : f32
  } : f32
  return %l, %g : f32, f32
}

// -----

func.func private @opaque(memref<4xf32>)

// Checks that an op of unknown effects between original and clone (a call)
// may clobber the read.
func.func @call_between(%i: index) -> (f32, f32) {
  %m = memref.alloc() : memref<4xf32>
  // expected-note @+1 {{the original 'memref.load' is here}}
  %l = memref.load %m[%i] {remat.id = 0 : i64} : memref<4xf32>
  // expected-note @+1 {{this 'func.call' may write what it reads}}
  func.call @opaque(%m) : (memref<4xf32>) -> ()
  %g = remat.backward {
    // expected-error @+1 {{'memref.load' op is a recomputation (remat.clone_of = 0) that reads '<Default>', which may be written between its original and it}}
    %lr = memref.load %m[%i] {remat.clone_of = 0 : i64} : memref<4xf32>
    remat.yield %lr : f32
  } : f32
  return %l, %g : f32, f32
}

// -----

// Checks that a clone that writes memory is an error: recomputing it
// repeats the write.
func.func @clone_writes(%m: memref<4xf32>, %w: f32, %i: index) -> f32 {
  // expected-note @+1 {{the original 'memref.store' is here}}
  memref.store %w, %m[%i] {remat.id = 0 : i64} : memref<4xf32>
  %g = remat.backward {
    // expected-error @+1 {{'memref.store' op is a recomputation (remat.clone_of = 0) that writes '<Default>' again after its original did}}
    memref.store %w, %m[%i] {remat.clone_of = 0 : i64} : memref<4xf32>
    %c = arith.constant 0.0 : f32
    remat.yield %c : f32
  } : f32
  return %g : f32
}

// -----

// Checks that a clone of unknown effects is an error.
func.func private @opaque(f32) -> f32

func.func @clone_unknown(%x: f32) -> (f32, f32) {
  // expected-note @+1 {{the original 'func.call' is here}}
  %y = func.call @opaque(%x) {remat.id = 0 : i64} : (f32) -> f32
  %g = remat.backward {
    // expected-error @+1 {{'func.call' op is a recomputation (remat.clone_of = 0) that holds 'func.call', whose memory effects are unknown, so it may change state or read what changed since its original ran}}
    %yr = func.call @opaque(%x) {remat.clone_of = 0 : i64} : (f32) -> f32
    remat.yield %yr : f32
  } : f32
  return %y, %g : f32, f32
}

// -----

// Checks that a reading clone whose original is gone is an error: nothing
// shows what the original read.
func.func @reads_without_original(%m: memref<4xf32>, %i: index) -> f32 {
  %g = remat.backward {
    // expected-error @+1 {{'memref.load' op is a recomputation (remat.clone_of = 3) that reads '<Default>' and its original is gone, so nothing shows that it reads what the original read}}
    %lr = memref.load %m[%i] {remat.clone_of = 3 : i64} : memref<4xf32>
    remat.yield %lr : f32
  } : f32
  return %g : f32
}

// -----

// Checks that a recomputed region writing only memory it allocates itself
// is valid, and reads nothing that was written in between.
func.func @local_buffer(%v: f32, %i: index) -> (f32, f32) {
  %l = scf.execute_region -> f32 {
    %m = memref.alloca() : memref<4xf32>
    memref.store %v, %m[%i] : memref<4xf32>
    %r = memref.load %m[%i] : memref<4xf32>
    scf.yield %r : f32
  } {remat.id = 0 : i64}
  %g = remat.backward {
    %b:2 = remat.barrier %v, %i : f32, index
    %lr = scf.execute_region -> f32 {
      %m = memref.alloca() : memref<4xf32>
      memref.store %b#0, %m[%b#1] : memref<4xf32>
      %r = memref.load %m[%b#1] : memref<4xf32>
      scf.yield %r : f32
    } {remat.clone_of = 0 : i64}
    remat.yield %lr : f32
  } : f32
  return %l, %g : f32, f32
}
