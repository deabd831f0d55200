// RUN: remat-opt %s -split-input-file -convert-remat-to-linalg | FileCheck %s
// RUN: remat-opt %s -split-input-file -convert-remat-to-linalg \
// RUN:   -convert-remat-to-linalg | FileCheck %s --check-prefix=TWICE

// Checks that a counter-based random op becomes a linalg.generic that
// computes the linear index plus the offset, runs the ten Philox rounds (two
// 32x32->64 multiplications each), selects the word and scales it to [0, 1).
// CHECK-LABEL: func.func @philox(
// CHECK-SAME:      %[[SEED:.*]]: i64, %[[OFF:.*]]: i64)
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<3x5xf32>
// CHECK:         linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "parallel"]
// CHECK-SAME:        outs(%[[INIT]] : tensor<3x5xf32>)
// CHECK:           linalg.index 0
// CHECK:           %[[C5:.*]] = arith.constant 5 : i64
// CHECK:           linalg.index 1
// CHECK-COUNT-20:  arith.mului_extended
// CHECK:           arith.shrui %{{.*}}, %{{.*}} : i32
// CHECK:           arith.uitofp %{{.*}} : i32 to f32
// CHECK:           %[[SCALE:.*]] = arith.constant 5.96046448E-8 : f32
// CHECK:           arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK-NOT:       arith.truncf
// CHECK:           linalg.yield
// TWICE-LABEL: func.func @philox(
// TWICE-COUNT-20: arith.mului_extended
func.func @philox(%seed: i64, %off: i64) -> tensor<3x5xf32> {
  %u = remat.philox_uniform %seed, %off : tensor<3x5xf32>
  return %u : tensor<3x5xf32>
}

// -----

// Checks that narrower floats are rounded from the f32 value.
// CHECK-LABEL: func.func @philox_bf16(
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    arith.truncf %{{.*}} : f32 to bf16
func.func @philox_bf16(%seed: i64, %off: i64) -> tensor<8xbf16> {
  %u = remat.philox_uniform %seed, %off : tensor<8xbf16>
  return %u : tensor<8xbf16>
}

// -----

// Checks that f64 values extend the f32 value exactly.
// CHECK-LABEL: func.func @philox_f64(
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    arith.extf %{{.*}} : f32 to f64
func.func @philox_f64(%seed: i64, %off: i64) -> tensor<8xf64> {
  %u = remat.philox_uniform %seed, %off : tensor<8xf64>
  return %u : tensor<8xf64>
}

// -----

// Checks that the backward region is inlined after the forward ops, its
// yielded values replacing its results, that barriers are kept for
// bufferization, and that the contract's attributes are dropped.
// CHECK-LABEL: func.func @inline_backward(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4xf32>, %[[SEED:[^:]*]]: i64)
// CHECK:         %[[A:.*]] = math.tanh %[[X]] : tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = remat.barrier %[[X]] : tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = math.tanh %[[B]] : tensor<4xf32>
// CHECK-NEXT:    %[[G:.*]] = arith.mulf %[[R]], %[[A]] : tensor<4xf32>
// CHECK-NEXT:    return %[[A]], %[[G]]
// CHECK-NOT:     remat.
func.func @inline_backward(%x: tensor<4xf32>, %seed: i64 {remat.rng_seed})
    -> (tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.segment = 0 : i64, remat.id = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %b = remat.barrier %x : tensor<4xf32>
    %r = math.tanh %b {remat.clone_of = 0 : i64} : tensor<4xf32>
    %d = arith.mulf %r, %a : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that the generator's seed becomes a call of the runtime's
// @remat_rng_seed, declared once in the module for every function that reads
// it, and that a second run leaves the declaration as it is.
// CHECK:       func.func private @remat_rng_seed() -> i64
// CHECK-NOT:   func.func private @remat_rng_seed
// CHECK-LABEL: func.func @seed_op(
// CHECK:         %[[SEED:.*]] = call @remat_rng_seed() : () -> i64
// CHECK:         linalg.generic
// CHECK:         return %[[SEED]], %{{.*}} : i64, tensor<4xf32>
// CHECK-LABEL: func.func @seed_op_again(
// CHECK:         %[[SEED2:.*]] = call @remat_rng_seed() : () -> i64
// CHECK:         return %[[SEED2]] : i64
// TWICE:       func.func private @remat_rng_seed() -> i64
// TWICE-NOT:   func.func private @remat_rng_seed
// TWICE-LABEL: func.func @seed_op(
// TWICE:         call @remat_rng_seed() : () -> i64
func.func @seed_op() -> (i64, tensor<4xf32>) {
  %s = remat.rng_seed
  %off = arith.constant 0 : i64
  %u = remat.philox_uniform %s, %off : tensor<4xf32>
  return %s, %u : i64, tensor<4xf32>
}

func.func @seed_op_again() -> i64 {
  %s = remat.rng_seed
  return %s : i64
}

// -----

// Checks that an existing declaration of the runtime's function is used.
// CHECK:       func.func private @remat_rng_seed() -> i64
// CHECK-NOT:   func.func private @remat_rng_seed
// CHECK-LABEL: func.func @seed_declared(
// CHECK:         call @remat_rng_seed() : () -> i64
func.func private @remat_rng_seed() -> i64

func.func @seed_declared() -> i64 {
  %s = remat.rng_seed
  return %s : i64
}

// -----

// Checks that a scatter-add of rows becomes a loop over the columns whose
// body walks the positions in order on its column of dest: an index names a
// row when clamping it to [0, rows) changes nothing and it is not the
// skipped row; the element the clamp names is written back, with the term
// added only then.
// CHECK-LABEL: func.func @scatter_add_rows(
// CHECK-SAME:      %[[V:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<5xi64>, %[[D:.*]]: tensor<4x3xf32>)
// CHECK:         %[[R:.*]] = scf.forall (%[[J:.*]]) in (3) shared_outs(%[[O:.*]] = %[[D]]) -> (tensor<4x3xf32>) {
// CHECK:           %[[COL:.*]] = tensor.extract_slice %[[O]][0, %[[J]]] [4, 1] [1, 1] : tensor<4x3xf32> to tensor<4x1xf32>
// CHECK:           %[[SUM:.*]] = scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[COL]]) -> (tensor<4x1xf32>) {
// CHECK:             %[[IX:.*]] = tensor.extract %[[I]][%[[P]]] : tensor<5xi64>
// CHECK:             %[[LO:.*]] = arith.maxsi %[[IX]], %{{.*}} : i64
// CHECK:             %[[CL:.*]] = arith.minsi %[[LO]], %{{.*}} : i64
// CHECK:             %[[IN:.*]] = arith.cmpi eq, %[[IX]], %[[CL]] : i64
// CHECK:             %[[NS:.*]] = arith.cmpi ne, %[[IX]], %{{.*}} : i64
// CHECK:             %[[OK:.*]] = arith.andi %[[IN]], %[[NS]] : i1
// CHECK:             %[[ROW:.*]] = arith.index_cast %[[CL]] : i64 to index
// CHECK:             %[[OLD:.*]] = tensor.extract %[[ACC]][%[[ROW]], %{{.*}}] : tensor<4x1xf32>
// CHECK:             %[[TERM:.*]] = tensor.extract %[[V]][%[[P]], %[[J]]] : tensor<5x3xf32>
// CHECK:             %[[ADD:.*]] = arith.addf %[[OLD]], %[[TERM]] : f32
// CHECK:             %[[NEW:.*]] = arith.select %[[OK]], %[[ADD]], %[[OLD]] : f32
// CHECK:             %[[INS:.*]] = tensor.insert %[[NEW]] into %[[ACC]][%[[ROW]], %{{.*}}] : tensor<4x1xf32>
// CHECK:             scf.yield %[[INS]] : tensor<4x1xf32>
// CHECK:           scf.forall.in_parallel {
// CHECK:             tensor.parallel_insert_slice %[[SUM]] into %[[O]][0, %[[J]]] [4, 1] [1, 1] : tensor<4x1xf32> into tensor<4x3xf32>
// CHECK:         return %[[R]] : tensor<4x3xf32>
func.func @scatter_add_rows(%v: tensor<5x3xf32>, %i: tensor<5xi64>, %d: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = remat.scatter_add_rows %v into %d[%i] skip 1 : tensor<5x3xf32>, tensor<5xi64> into tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// Checks that without a skipped row an index only has to be in range, and
// that a scatter-add without positions is its dest.
// CHECK-LABEL: func.func @scatter_add_rows_no_skip(
// CHECK:         arith.cmpi eq
// CHECK-NOT:     arith.cmpi ne
// CHECK:         scf.forall.in_parallel
// CHECK-LABEL: func.func @scatter_add_rows_empty(
// CHECK-SAME:      %[[D:[^:]*]]: tensor<4x3xf32>)
// CHECK-NEXT:    return %[[D]] : tensor<4x3xf32>
func.func @scatter_add_rows_no_skip(%v: tensor<5x3xf32>, %i: tensor<5xi64>, %d: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = remat.scatter_add_rows %v into %d[%i] : tensor<5x3xf32>, tensor<5xi64> into tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

func.func @scatter_add_rows_empty(%v: tensor<0x3xf32>, %i: tensor<0xi64>, %d: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = remat.scatter_add_rows %v into %d[%i] : tensor<0x3xf32>, tensor<0xi64> into tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
