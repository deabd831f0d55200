// A step whose forward runs dropout in a loop: iteration i (i = 2, 4, 6, 8)
// takes row (i - 2) / 2 of x, applies tanh and a dropout mask drawn in the
// loop (p = 0.5 for the first two rows, p = 0.25 for the others, from
// different random ops in the two branches of an scf.if), and writes the
// row and its mask scale. The backward needs the masks; the loop is marked
// for recomputation.
func.func @step(%x: tensor<4x16xf32>, %dy: tensor<4x16xf32>,
                %seed: i64 {remat.rng_seed})
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %c2 = arith.constant 2 : index
  %c10 = arith.constant 10 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y, %m = scf.for %i = %c2 to %c10 step %c2
      iter_args(%ya = %init, %ma = %init) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
    %row = affine.apply affine_map<(i) -> ((i - 2) floordiv 2)>(%i)
    %xr = tensor.extract_slice %x[%row, 0] [1, 16] [1, 1] : tensor<4x16xf32> to tensor<16xf32>
    %a = math.tanh %xr : tensor<16xf32>
    %first = arith.cmpi ult, %row, %c2 : index
    %scale = scf.if %first -> tensor<16xf32> {
      %u = remat.rng_uniform : tensor<16xf32>
      %p = arith.constant dense<0.5> : tensor<16xf32>
      %keep = arith.cmpf oge, %u, %p : tensor<16xf32>
      %two = arith.constant dense<2.0> : tensor<16xf32>
      %zeros = arith.constant dense<0.0> : tensor<16xf32>
      %s = arith.select %keep, %two, %zeros : tensor<16xi1>, tensor<16xf32>
      scf.yield %s : tensor<16xf32>
    } else {
      %u = remat.rng_uniform : tensor<16xf32>
      %p = arith.constant dense<0.25> : tensor<16xf32>
      %keep = arith.cmpf oge, %u, %p : tensor<16xf32>
      %s4 = arith.constant dense<1.33333337> : tensor<16xf32>
      %zeros = arith.constant dense<0.0> : tensor<16xf32>
      %s = arith.select %keep, %s4, %zeros : tensor<16xi1>, tensor<16xf32>
      scf.yield %s : tensor<16xf32>
    }
    %yr = arith.mulf %a, %scale : tensor<16xf32>
    %yn = tensor.insert_slice %yr into %ya[%row, 0] [1, 16] [1, 1] : tensor<16xf32> into tensor<4x16xf32>
    %mn = tensor.insert_slice %scale into %ma[%row, 0] [1, 16] [1, 1] : tensor<16xf32> into tensor<4x16xf32>
    scf.yield %yn, %mn : tensor<4x16xf32>, tensor<4x16xf32>
  } {remat.segment = 0 : i64}
  %g = remat.backward {
    %t = math.tanh %x : tensor<4x16xf32>
    %t2 = arith.mulf %t, %t : tensor<4x16xf32>
    %one = arith.constant dense<1.0> : tensor<4x16xf32>
    %dt = arith.subf %one, %t2 : tensor<4x16xf32>
    %dm = arith.mulf %dy, %m : tensor<4x16xf32>
    %dx = arith.mulf %dm, %dt : tensor<4x16xf32>
    remat.yield %dx : tensor<4x16xf32>
  } : tensor<4x16xf32>
  return %y, %m, %g : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}
