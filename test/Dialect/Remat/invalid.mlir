// RUN: remat-opt %s -split-input-file -verify-diagnostics

// Checks that a function may hold only one backward region.
func.func @two_backward(%x: tensor<4xf32>) {
  // expected-note @+1 {{the first one is here}}
  remat.backward {
    remat.yield
  }
  // expected-error @+1 {{'remat.backward' op is the second 'remat.backward' in this function; a training step has exactly one backward region}}
  remat.backward {
    remat.yield
  }
  return
}

// -----

// Checks that a forward op cannot use a value defined in the backward region
// (here through a forward reference, which the parser resolves).
func.func @forward_uses_backward_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op uses a value defined inside 'remat.backward'; ops outside the backward region may only use its results}}
  %y = arith.addf %inner, %x : tensor<4xf32>
  %g = remat.backward {
    // expected-note @+1 {{the value is defined here}}
    %inner = arith.mulf %x, %x : tensor<4xf32>
    remat.yield %inner : tensor<4xf32>
  } : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that the yielded types must match the backward op's results.
func.func @yield_type_mismatch(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-note @+1 {{enclosing 'remat.backward' is here}}
  %g = remat.backward {
    // expected-error @+1 {{'remat.yield' op yields 1 value(s) of types ('tensor<4xf32>') but the enclosing 'remat.backward' returns ('tensor<4xf16>')}}
    remat.yield %x : tensor<4xf32>
  } : tensor<4xf16>
  return %g : tensor<4xf16>
}

// -----

// Checks that the yield must produce as many values as the op returns.
func.func @yield_count_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{enclosing 'remat.backward' is here}}
  %g = remat.backward {
    // expected-error @+1 {{'remat.yield' op yields 0 value(s) of types () but the enclosing 'remat.backward' returns ('tensor<4xf32>')}}
    remat.yield
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Checks that the backward region belongs directly to a function.
func.func @nested_backward(%c: i1) {
  scf.if %c {
    // expected-error @+1 {{'remat.backward' op must be directly inside a function body}}
    remat.backward {
      remat.yield
    }
  }
  return
}

// -----

// Checks that backward results have static shapes.
func.func @dynamic_backward_result(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'remat.backward' op result #0 has the dynamic shape 'tensor<?xf32>'; training steps need static shapes}}
  %g = remat.backward {
    remat.yield %x : tensor<?xf32>
  } : tensor<?xf32>
  return %g : tensor<?xf32>
}

// -----

// Checks that backward ops cannot carry segment marks.
func.func @segment_in_backward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = remat.backward {
    // expected-error @+1 {{'arith.mulf' op 'remat.segment' is not allowed inside 'remat.backward': only forward ops belong to segments}}
    %d = arith.mulf %x, %x {remat.segment = 0 : i64} : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Checks that segment ids are non-negative.
func.func @negative_segment(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'remat.segment' must be a non-negative i64 or a non-empty array of them, got -1 : i64}}
  %y = arith.addf %x, %x {remat.segment = -1 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that segment ids are i64.
func.func @i32_segment(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'remat.segment' must be a non-negative i64 or a non-empty array of them, got 1 : i32}}
  %y = arith.addf %x, %x {remat.segment = 1 : i32} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that a nested segment path is not empty.
func.func @empty_segment_path(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'remat.segment' must be a non-negative i64 or a non-empty array of them, got []}}
  %y = arith.addf %x, %x {remat.segment = []} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that every element of a nested segment path is a segment id.
func.func @bad_segment_path(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'remat.segment' must be a non-negative i64 or a non-empty array of them, got [0, "a"]}}
  %y = arith.addf %x, %x {remat.segment = [0, "a"]} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that ops of a segment have static shapes.
func.func @dynamic_segment(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'arith.addf' op is in a checkpoint segment but result #0 has the dynamic shape 'tensor<?xf32>'; segments need static shapes}}
  %y = arith.addf %x, %x {remat.segment = 0 : i64} : tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// Checks that the policy is one of the two known ones.
func.func @bad_policy(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'remat.policy' must be "save" or "recompute", got "keep"}}
  %y = arith.addf %x, %x {remat.policy = "keep"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that policies are forward-only.
func.func @policy_in_backward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = remat.backward {
    // expected-error @+1 {{'arith.mulf' op 'remat.policy' is not allowed inside 'remat.backward'}}
    %d = arith.mulf %x, %x {remat.policy = "save"} : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Checks that a value name is a non-empty string.
func.func @bad_name(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'remat.name' must be a non-empty string, got 3 : i64}}
  %y = arith.addf %x, %x {remat.name = 3} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that unknown remat attributes are rejected rather than ignored.
func.func @unknown_attribute(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op has unknown remat attribute 'remat.segments'}}
  %y = arith.addf %x, %x {remat.segments = 0 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that the seed marker is an argument attribute, not an op attribute.
func.func @seed_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'remat.rng_seed' belongs on an i64 function argument, not on an operation}}
  %y = arith.addf %x, %x {remat.rng_seed} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that the seed argument is an i64.
// expected-error @+1 {{'func.func' op 'remat.rng_seed' argument #0 must be i64, got 'i32'}}
func.func @seed_not_i64(%seed: i32 {remat.rng_seed}) {
  return
}

// -----

// Checks that the seed marker is a unit attribute.
// expected-error @+1 {{'func.func' op 'remat.rng_seed' on argument #0 must be a unit attribute, got 1 : i64}}
func.func @seed_not_unit(%seed: i64 {remat.rng_seed = 1}) {
  return
}

// -----

// Checks that a step has one seed.
// expected-error @+1 {{'func.func' op has two 'remat.rng_seed' arguments (#0 and #1); a step has one seed}}
func.func @two_seeds(%a: i64 {remat.rng_seed}, %b: i64 {remat.rng_seed}) {
  return
}

// -----

// Checks that unknown remat argument attributes are rejected.
// expected-error @+1 {{'func.func' op has unknown remat argument attribute 'remat.segment' on argument #0}}
func.func @unknown_arg_attribute(%a: i64 {remat.segment = 0 : i64}) {
  return
}

// -----

// Checks that random values are floats.
func.func @integer_random() {
  // expected-error @+1 {{'remat.rng_uniform' op result #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %u = remat.rng_uniform : tensor<4xi32>
  return
}

// -----

// Checks that random tensors have static shapes.
func.func @dynamic_random() {
  // expected-error @+1 {{'remat.rng_uniform' op result #0 must be statically shaped tensor of floating-point values, but got 'tensor<?xf32>'}}
  %u = remat.rng_uniform : tensor<?xf32>
  return
}

// -----

// Checks that counter-based random values are floats.
func.func @integer_philox(%seed: i64, %off: i64) {
  // expected-error @+1 {{'remat.philox_uniform' op result #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi8>'}}
  %u = remat.philox_uniform %seed, %off : tensor<4xi8>
  return
}

// -----

// Checks that the seed and offset of a counter-based random op are i64.
// expected-note @+1 {{prior use here}}
func.func @i32_offset(%seed: i64, %off: i32) {
  // expected-error @+1 {{use of value '%off' expects different type than prior uses: 'i64' vs 'i32'}}
  %u = remat.philox_uniform %seed, %off : tensor<4xf32>
  return
}

// -----

// Checks the seed/offset operand types in generic form too.
func.func @generic_i32_seed(%seed: i32, %off: i64) {
  // expected-error @+1 {{'remat.philox_uniform' op operand #0 must be 64-bit signless integer, but got 'i32'}}
  %u = "remat.philox_uniform"(%seed, %off) : (i32, i64) -> tensor<4xf32>
  return
}

// -----

// Checks that a barrier returns exactly its operands' types.
func.func @barrier_types(%x: tensor<4xf32>) {
  // expected-error @+2 {{'remat.barrier' op failed to infer returned types}}
  // expected-error @+1 {{'remat.barrier' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4xf16>'}}
  %b = "remat.barrier"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// Checks that remat.yield only terminates a backward region.
func.func @stray_yield(%x: tensor<4xf32>) {
  // expected-error @+1 {{'remat.yield' op expects parent op 'remat.backward'}}
  remat.yield %x : tensor<4xf32>
}

// -----

// Checks that clone bookkeeping is well formed and on the right side.
func.func @clone_of_in_forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'remat.clone_of' marks recomputed ops; it is only allowed inside 'remat.backward'}}
  %y = arith.addf %x, %x {remat.clone_of = 0 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that a rerun mark, like a clone's, belongs in the backward region.
func.func @rerun_of_in_forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'remat.rerun_of' marks recomputed ops; it is only allowed inside 'remat.backward'}}
  %y = arith.addf %x, %x {remat.rerun_of = 0 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @negative_rerun_of(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = remat.backward {
    // expected-error @+1 {{'arith.mulf' op 'remat.rerun_of' must be a non-negative i64, got -1 : i64}}
    %d = arith.mulf %x, %x {remat.rerun_of = -1 : i64} : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

func.func @id_in_backward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = remat.backward {
    // expected-error @+1 {{'arith.mulf' op 'remat.id' marks forward ops; it is not allowed inside 'remat.backward'}}
    %d = arith.mulf %x, %x {remat.id = 1 : i64} : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

func.func @bad_id(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'remat.id' must be a non-negative i64, got "a"}}
  %y = arith.addf %x, %x {remat.id = "a"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{a plan's 'predictedPeak' is negative: -1}}
func.func @bad_plan(%x: tensor<4xf32>) -> tensor<4xf32> attributes {remat.plan = #remat.plan<policy = "budget", segments = 0, predictedPeak = -1, recomputeFlops = 0>} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{a plan has both 'predictedPeak' and 'recomputeFlops', or neither}}
func.func @half_prediction(%x: tensor<4xf32>) -> tensor<4xf32> attributes {remat.plan = #remat.plan<policy = "sqrt", segments = 1, predictedPeak = 16>} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{a plan's policy is one of -remat-mark's, not ''}}
func.func @empty_policy(%x: tensor<4xf32>) -> tensor<4xf32> attributes {remat.plan = #remat.plan<policy = "", segments = 1>} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{a plan's policy is one of -remat-mark's, not 'always'}}
func.func @unknown_policy(%x: tensor<4xf32>) -> tensor<4xf32> attributes {remat.plan = #remat.plan<policy = "always", segments = 1>} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'remat.plan' must be a #remat.plan<...>, got {policy = "sqrt", segments = 1 : i64}}}
func.func @plan_dictionary(%x: tensor<4xf32>) -> tensor<4xf32> attributes {remat.plan = {policy = "sqrt", segments = 1 : i64}} {
  return %x : tensor<4xf32>
}

// -----

func.func @plan_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'remat.plan' belongs on a function}}
  %y = arith.addf %x, %x {remat.plan = #remat.plan<policy = "sqrt", segments = 0>} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that the function body of a training step is one block: a backward
// region after a branch is rejected, not silently skipped by every pass.
// expected-note @+1 {{in this function}}
func.func @backward_after_branch(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^bb1
^bb1:
  // expected-error @+1 {{'remat.backward' op is in a function body of 2 blocks; a training step's body is a single block}}
  %g = remat.backward {
    remat.yield %x : tensor<4xf32>
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Checks that two backward regions in different blocks are rejected too.
// expected-note @+1 {{in this function}}
func.func @backward_per_block(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.backward' op is in a function body of 2 blocks}}
  %g = remat.backward {
    remat.yield %x : tensor<4xf32>
  } : tensor<4xf32>
  cf.br ^bb1
^bb1:
  %h = remat.backward {
    remat.yield %g : tensor<4xf32>
  } : tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// Checks that the backward region has no block arguments: nothing could
// pass them.
func.func @backward_block_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.backward' op has a region with 1 block argument(s); the backward region takes none}}
  %g = remat.backward {
  ^bb0(%a: tensor<4xf32>):
    %d = arith.mulf %a, %x : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Checks that a segment mark on an op nested in a loop body below the
// function's own loops is rejected: segments are formed from ops directly in
// the function body or directly in the body of a loop there (a scan's body).
func.func @segment_in_inner_loop(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %x) -> (tensor<4xf32>) {
    %s = scf.for %j = %c0 to %c4 step %c1 iter_args(%u = %t) -> (tensor<4xf32>) {
      // expected-error @+1 {{'math.tanh' op carries 'remat.segment' but is nested in 'scf.for'; segments are formed from the ops directly in a function body or in a scan's body (an 'scf.for' there): mark the enclosing op instead}}
      %y = math.tanh %u {remat.segment = 0 : i64} : tensor<4xf32>
      scf.yield %y : tensor<4xf32>
    }
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Checks that a policy mark inside an scf.if branch is rejected the same way.
func.func @policy_in_if(%c: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    // expected-error @+1 {{'math.tanh' op carries 'remat.policy' but is nested in 'scf.if'}}
    %y = math.tanh %x {remat.segment = 0 : i64, remat.policy = "save"} : tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Checks that a mark on a function is rejected: it has no effect there.
// expected-error @+1 {{'func.func' op carries 'remat.segment', which belongs on the forward ops of a training step}}
func.func @marked_function(%x: tensor<4xf32>) -> tensor<4xf32> attributes {remat.segment = 0 : i64} {
  return %x : tensor<4xf32>
}

// -----

// Checks that a mark on the module is rejected.
// expected-error @+1 {{'builtin.module' op carries 'remat.policy', which belongs on the forward ops of a training step}}
module attributes {remat.policy = "save"} {
}

// -----

// Checks that a mark on the backward op itself is rejected.
func.func @marked_backward(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.backward' op carries 'remat.segment', which belongs on the forward ops of a training step}}
  %g = remat.backward attributes {remat.segment = 0 : i64} {
    remat.yield %x : tensor<4xf32>
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Checks that a policy outside any segment is rejected: it chooses between
// saving and recomputing only inside one.
func.func @policy_without_segment(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'math.tanh' op carries 'remat.policy' but no 'remat.segment': a policy only chooses between saving and recomputing inside a checkpoint segment}}
  %y = math.tanh %x {remat.policy = "recompute"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that a backward region outside a func.func is rejected: no pass and
// no lowering would touch it.
llvm.func @llvm_step(%x: f32) -> f32 {
  // expected-error @+1 {{'remat.backward' op is inside 'llvm.func'; a training step is a 'func.func'}}
  %g = remat.backward {
    remat.yield %x : f32
  } : f32
  llvm.return %g : f32
}

// -----

// Checks that each position of a scatter-add of rows has one index.
func.func @scatter_add_rows_positions(%v: tensor<6x4xf32>, %i: tensor<5xi64>, %d: tensor<10x4xf32>) -> tensor<10x4xf32> {
  // expected-error @+1 {{'remat.scatter_add_rows' op has 6 rows of values but 5 indices; each position adds one row}}
  %r = remat.scatter_add_rows %v into %d[%i] : tensor<6x4xf32>, tensor<5xi64> into tensor<10x4xf32>
  return %r : tensor<10x4xf32>
}

// -----

// Checks that the rows a scatter-add adds are as wide as dest's.
func.func @scatter_add_rows_columns(%v: tensor<6x3xf32>, %i: tensor<6xi64>, %d: tensor<10x4xf32>) -> tensor<10x4xf32> {
  // expected-error @+1 {{'remat.scatter_add_rows' op adds rows of 3 values into rows of 4; values and dest must have as many columns}}
  %r = remat.scatter_add_rows %v into %d[%i] : tensor<6x3xf32>, tensor<6xi64> into tensor<10x4xf32>
  return %r : tensor<10x4xf32>
}

// -----

// Checks that a scatter-add adds values of dest's element type.
func.func @scatter_add_rows_element_type(%v: tensor<6x4xf16>, %i: tensor<6xi64>, %d: tensor<10x4xf32>) -> tensor<10x4xf32> {
  // expected-error @+1 {{'remat.scatter_add_rows' op adds values of 'f16' into a dest of 'f32'; the element types must match}}
  %r = remat.scatter_add_rows %v into %d[%i] : tensor<6x4xf16>, tensor<6xi64> into tensor<10x4xf32>
  return %r : tensor<10x4xf32>
}

// -----

// Checks that the skipped row is a row of dest (-1, PyTorch's "no
// padding_idx", is spelled by leaving skip out).
func.func @scatter_add_rows_skip(%v: tensor<6x4xf32>, %i: tensor<6xi64>, %d: tensor<10x4xf32>) -> tensor<10x4xf32> {
  // expected-error @+1 {{'remat.scatter_add_rows' op skips row -1, which is not a row of dest (0 to 9); leave skip out to skip no row}}
  %r = remat.scatter_add_rows %v into %d[%i] skip -1 : tensor<6x4xf32>, tensor<6xi64> into tensor<10x4xf32>
  return %r : tensor<10x4xf32>
}

// -----

// Checks that a scatter-add's shapes are static.
func.func @scatter_add_rows_dynamic(%v: tensor<?x4xf32>, %i: tensor<?xi64>, %d: tensor<10x4xf32>) -> tensor<10x4xf32> {
  // expected-error @+1 {{'remat.scatter_add_rows' op values has the dynamic shape 'tensor<?x4xf32>'; training steps need static shapes}}
  %r = remat.scatter_add_rows %v into %d[%i] : tensor<?x4xf32>, tensor<?xi64> into tensor<10x4xf32>
  return %r : tensor<10x4xf32>
}

// -----

// Checks that the indices are one row of i64 (the exporter flattens them).
func.func @scatter_add_rows_index_rank(%v: tensor<6x4xf32>, %i: tensor<2x3xi64>, %d: tensor<10x4xf32>) -> tensor<10x4xf32> {
  // expected-error @+1 {{'remat.scatter_add_rows' op operand #1 must be 1D tensor of 64-bit signless integer values}}
  %r = remat.scatter_add_rows %v into %d[%i] : tensor<6x4xf32>, tensor<2x3xi64> into tensor<10x4xf32>
  return %r : tensor<10x4xf32>
}

// -----

// Checks that the result is dest's type.
func.func @scatter_add_rows_result(%v: tensor<6x4xf32>, %i: tensor<6xi64>, %d: tensor<10x4xf32>) -> tensor<10x4xf64> {
  // expected-error @+1 {{'remat.scatter_add_rows' op failed to verify that all of {dest, result} have same type}}
  %r = "remat.scatter_add_rows"(%v, %i, %d) : (tensor<6x4xf32>, tensor<6xi64>, tensor<10x4xf32>) -> tensor<10x4xf64>
  return %r : tensor<10x4xf64>
}
