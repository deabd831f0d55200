// RUN: remat-opt %s -remat-lower-cpu="vector-bits=256 outline-loop-nests=false" | FileCheck %s
// RUN: remat-opt %s -remat-lower-cpu="vectorize=false outline-loop-nests=false" | FileCheck %s --check-prefix=SCALAR

// Checks that -remat-lower-cpu vectorizes a softmax's row maximum, row sum
// and elementwise ops down to LLVM vector code (exp a polynomial of fused
// multiply-adds in vector lanes, -remat-approximate-math), the sum an ordered
// llvm.vector.reduce.fadd (no reassoc flag: the scalar loops' order), and
// that vectorize=false keeps every loop scalar (the loop nests kept in the
// step's function, where one CHECK sequence sees them all).
// CHECK-LABEL: llvm.func @softmax(
// CHECK-NOT:     vector.
// CHECK:         llvm.load {{.*}} -> vector<8xf32>
// CHECK:         llvm.intr.vector.reduce.fmaximum({{.*}}) : (vector<8xf32>) -> f32
// CHECK-NOT:     llvm.intr.exp
// CHECK:         llvm.intr.fma({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NOT:     llvm.intr.exp
// CHECK:         "llvm.intr.vector.reduce.fadd"({{.*}}) <{fastmathFlags = #llvm.fastmath<none>}> : (f32, vector<8xf32>) -> f32
// CHECK:         llvm.fdiv {{.*}} : vector<8xf32>
// CHECK:         llvm.return
// SCALAR-LABEL: llvm.func @softmax(
// SCALAR-NOT:    vector<
// SCALAR:        llvm.return
func.func @softmax(%x: tensor<4x24xf32>) -> tensor<4x24xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x24xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %ee = tensor.empty() : tensor<4x24xf32>
  %exp = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0)>,
                                          affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4x24xf32>, tensor<4xf32>) outs(%ee : tensor<4x24xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %x2 = math.exp %d : f32
    linalg.yield %x2 : f32
  } -> tensor<4x24xf32>
  %se = tensor.empty() : tensor<4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%se : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<4x24xf32>) outs(%sinit : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %oe = tensor.empty() : tensor<4x24xf32>
  %out = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0)>,
                                          affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<4x24xf32>, tensor<4xf32>) outs(%oe : tensor<4x24xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<4x24xf32>
  return %out : tensor<4x24xf32>
}
