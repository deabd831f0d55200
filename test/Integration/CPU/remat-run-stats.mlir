// RUN: remat-run %s --random-inputs 7 --stats --repeat 3 --threads 2 | FileCheck %s
// RUN: remat-run %s --random-inputs 7 --stats --no-arena | FileCheck %s --check-prefix=NOARENA

// Checks the allocator's counters on a step small enough to count by hand:
// buffers h = x*w (4x16 f32, 256 B), the fused tanh(h)*u result d, written
// into h's buffer (h dies there), and the gradient (8x16, 512 B); x^T is no
// buffer, since the gradient's matmul reads x transposed
// (-remat-fold-transposes). 256 + 512 = 768 B are live at once, and the
// step's arena places them in exactly that: one allocation of 768 B.
// Without the arena (--no-arena) the allocator sees the two buffers.
// CHECK: {"alloc_count":1,"allocated_bytes":768,"cache":"{{hit|miss}}","compile_ms":{{[0-9.e+-]+}},"file":"{{.*}}","host_compile_ms":{{[0-9.e+-]+}},"load_ms":{{[0-9.e+-]+}},"lower_ms":{{[0-9.e+-]+}},"min_wall_ms":{{[0-9.e+-]+}},"parse_ms":{{[0-9.e+-]+}},"peak_bytes":768,"repeat":3,"wall_ms":{{[0-9.e+-]+}}}
// NOARENA: {"alloc_count":2,"allocated_bytes":768,"cache":"{{hit|miss}}","compile_ms":{{[0-9.e+-]+}},"file":"{{.*}}","host_compile_ms":{{[0-9.e+-]+}},"load_ms":{{[0-9.e+-]+}},"lower_ms":{{[0-9.e+-]+}},"min_wall_ms":{{[0-9.e+-]+}},"parse_ms":{{[0-9.e+-]+}},"peak_bytes":768,"repeat":1,
func.func @step(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %seed: i64 {remat.rng_seed})
    -> (tensor<4x16xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>)
         outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  %a = math.tanh %h : tensor<4x16xf32>
  %off = arith.constant 0 : i64
  %u = remat.philox_uniform %seed, %off : tensor<4x16xf32>
  %d = arith.mulf %a, %u : tensor<4x16xf32>
  %g = remat.backward {
    %et = tensor.empty() : tensor<8x4xf32>
    %t = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) permutation = [1, 0]
    %ez = tensor.empty() : tensor<8x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%ez : tensor<8x16xf32>) -> tensor<8x16xf32>
    %gw = linalg.matmul ins(%t, %d : tensor<8x4xf32>, tensor<4x16xf32>)
            outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    remat.yield %gw : tensor<8x16xf32>
  } : tensor<8x16xf32>
  return %d, %g : tensor<4x16xf32>, tensor<8x16xf32>
}
