module {
  func.func @step(%arg0: tensor<4x4xf32>, %arg1: tensor<4x2xf32>, %arg2: i64 {remat.rng_seed}, %arg3: tensor<2xf32>, %arg4: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x2xf32>, tensor<2xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x2xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %2 = linalg.matmul ins(%arg0, %arg1 : tensor<4x4xf32>, tensor<4x2xf32>) outs(%1 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %cst_0 = arith.constant {remat.segment = 0 : i64} dense<7.500000e-01> : tensor<4x2xf32>
    %3 = arith.mulf %2, %cst_0 {remat.segment = 0 : i64} : tensor<4x2xf32>
    %4 = remat.rng_uniform {remat.segment = 0 : i64} : tensor<4x2xf32>
    %cst_1 = arith.constant {remat.segment = 0 : i64} dense<5.000000e-01> : tensor<4x2xf32>
    %5 = arith.cmpf oge, %4, %cst_1 {remat.segment = 0 : i64} : tensor<4x2xf32>
    %cst_2 = arith.constant {remat.segment = 0 : i64} dense<2.000000e+00> : tensor<4x2xf32>
    %6 = arith.mulf %3, %cst_2 {remat.segment = 0 : i64} : tensor<4x2xf32>
    %cst_3 = arith.constant {remat.segment = 0 : i64} dense<0.000000e+00> : tensor<4x2xf32>
    %7 = arith.select %5, %6, %cst_3 {remat.segment = 0 : i64} : tensor<4x2xi1>, tensor<4x2xf32>
    %8 = tensor.empty() {remat.segment = 0 : i64} : tensor<2x4xf32>
    %transposed = linalg.transpose ins(%7 : tensor<4x2xf32>) outs(%8 : tensor<2x4xf32>) permutation = [1, 0]  {remat.segment = 0 : i64}
    %9 = remat.rng_uniform : tensor<2x4xf32>
    %cst_4 = arith.constant dense<5.000000e-01> : tensor<2x4xf32>
    %10 = arith.cmpf oge, %9, %cst_4 : tensor<2x4xf32>
    %cst_5 = arith.constant dense<2.000000e+00> : tensor<2x4xf32>
    %11 = arith.mulf %transposed, %cst_5 : tensor<2x4xf32>
    %cst_6 = arith.constant dense<0.000000e+00> : tensor<2x4xf32>
    %12 = arith.select %10, %11, %cst_6 : tensor<2x4xi1>, tensor<2x4xf32>
    %cst_7 = arith.constant {remat.segment = 1 : i64} 0.000000e+00 : f32
    %13 = tensor.empty() {remat.segment = 1 : i64} : tensor<2xf32>
    %14 = linalg.fill {remat.segment = 1 : i64} ins(%cst_7 : f32) outs(%13 : tensor<2xf32>) -> tensor<2xf32>
    %reduced = linalg.reduce ins(%12 : tensor<2x4xf32>) outs(%14 : tensor<2xf32>) dimensions = [1]  {remat.segment = 1 : i64}
      (%in: f32, %init: f32) {
        %29 = arith.addf %in, %init : f32
        linalg.yield %29 : f32
      }
    %15 = tensor.empty() {remat.segment = 1 : i64} : tensor<2x2xf32>
    %broadcasted = linalg.broadcast ins(%reduced : tensor<2xf32>) outs(%15 : tensor<2x2xf32>) dimensions = [1]  {remat.segment = 1 : i64}
    %16 = tensor.empty() {remat.segment = 2 : i64} : tensor<2x2xf32>
    %broadcasted_8 = linalg.broadcast ins(%arg3 : tensor<2xf32>) outs(%16 : tensor<2x2xf32>) dimensions = [0]  {remat.segment = 2 : i64}
    %17 = arith.addf %broadcasted, %broadcasted_8 {remat.segment = 2 : i64} : tensor<2x2xf32>
    %concat = tensor.concat dim(0) %broadcasted, %2 {remat.policy = "save", remat.segment = 2 : i64} : (tensor<2x2xf32>, tensor<4x2xf32>) -> tensor<6x2xf32>
    %18 = remat.rng_uniform {remat.segment = 2 : i64} : tensor<4x4xf32>
    %cst_9 = arith.constant {remat.segment = 2 : i64} dense<1.250000e-01> : tensor<4x4xf32>
    %19 = arith.cmpf oge, %18, %cst_9 {remat.segment = 2 : i64} : tensor<4x4xf32>
    %cst_10 = arith.constant {remat.segment = 2 : i64} dense<1.14285719> : tensor<4x4xf32>
    %20 = arith.mulf %arg0, %cst_10 {remat.segment = 2 : i64} : tensor<4x4xf32>
    %cst_11 = arith.constant {remat.segment = 2 : i64} dense<0.000000e+00> : tensor<4x4xf32>
    %21 = arith.select %19, %20, %cst_11 {remat.segment = 2 : i64} : tensor<4x4xi1>, tensor<4x4xf32>
    %22 = arith.negf %21 {remat.segment = 2 : i64} : tensor<4x4xf32>
    %23 = remat.rng_uniform {remat.segment = 2 : i64} : tensor<4x4xf32>
    %cst_12 = arith.constant {remat.segment = 2 : i64} dense<5.000000e-01> : tensor<4x4xf32>
    %24 = arith.cmpf oge, %23, %cst_12 {remat.segment = 2 : i64} : tensor<4x4xf32>
    %cst_13 = arith.constant {remat.segment = 2 : i64} dense<2.000000e+00> : tensor<4x4xf32>
    %25 = arith.mulf %21, %cst_13 {remat.segment = 2 : i64} : tensor<4x4xf32>
    %cst_14 = arith.constant {remat.segment = 2 : i64} dense<0.000000e+00> : tensor<4x4xf32>
    %26 = arith.select %24, %25, %cst_14 {remat.segment = 2 : i64} : tensor<4x4xi1>, tensor<4x4xf32>
    %27 = arith.addf %26, %22 {remat.segment = 2 : i64} : tensor<4x4xf32>
    %28:3 = remat.backward {
      %cst_15 = arith.constant dense<2.000000e+00> : tensor<4x4xf32>
      %29 = arith.mulf %arg4, %cst_15 : tensor<4x4xf32>
      %cst_16 = arith.constant dense<0.000000e+00> : tensor<4x4xf32>
      %30 = arith.select %24, %29, %cst_16 : tensor<4x4xi1>, tensor<4x4xf32>
      %31 = arith.negf %arg4 : tensor<4x4xf32>
      %32 = arith.addf %30, %31 : tensor<4x4xf32>
      %cst_17 = arith.constant dense<1.14285719> : tensor<4x4xf32>
      %33 = arith.mulf %32, %cst_17 : tensor<4x4xf32>
      %cst_18 = arith.constant dense<0.000000e+00> : tensor<4x4xf32>
      %34 = arith.select %19, %33, %cst_18 : tensor<4x4xi1>, tensor<4x4xf32>
      %cst_19 = arith.constant dense<0.000000e+00> : tensor<4x2xf32>
      %cst_20 = arith.constant dense<0.000000e+00> : tensor<2xf32>
      remat.yield %34, %cst_19, %cst_20 : tensor<4x4xf32>, tensor<4x2xf32>, tensor<2xf32>
    } : tensor<4x4xf32>, tensor<4x2xf32>, tensor<2xf32>
    return %27, %28#0, %28#1, %28#2 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x2xf32>, tensor<2xf32>
  }
}
