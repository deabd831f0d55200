// remat_torch.zoo:mlp: exported by remat-torch-export (AOTAutograd joint graph, core ATen ops)
func.func @step(%layers_0_weight: tensor<128x64xf64>, %layers_0_bias: tensor<128xf64>, %layers_1_weight: tensor<128x128xf64>, %layers_1_bias: tensor<128xf64>, %layers_2_weight: tensor<128x128xf64>, %layers_2_bias: tensor<128xf64>, %layers_3_weight: tensor<32x128xf64>, %layers_3_bias: tensor<32xf64>, %x: tensor<64x64xf64>, %target: tensor<64x32xf64>, %tangent0: tensor<f64>, %seed: i64 {remat.rng_seed})
    -> (tensor<f64>, tensor<128x64xf64>, tensor<128xf64>, tensor<128x128xf64>, tensor<128xf64>, tensor<128x128xf64>, tensor<128xf64>, tensor<32x128xf64>, tensor<32xf64>) {
  %e1 = tensor.empty() {remat.segment = 0 : i64} : tensor<64x128xf64>
  %t2 = linalg.transpose ins(%layers_0_weight : tensor<128x64xf64>) outs(%e1 : tensor<64x128xf64>) permutation = [1, 0] {remat.segment = 0 : i64}
  %e3 = tensor.empty() {remat.segment = 0 : i64} : tensor<64x128xf64>
  %c4 = arith.constant {remat.segment = 0 : i64} 0.00000000000000000e+00 : f64
  %f5 = linalg.fill {remat.segment = 0 : i64} ins(%c4 : f64) outs(%e3 : tensor<64x128xf64>) -> tensor<64x128xf64>
  %mm6 = linalg.matmul {remat.segment = 0 : i64} ins(%x, %t2 : tensor<64x64xf64>, tensor<64x128xf64>) outs(%f5 : tensor<64x128xf64>) -> tensor<64x128xf64>
  %e7 = tensor.empty() {remat.segment = 0 : i64} : tensor<64x128xf64>
  %b8 = linalg.broadcast ins(%layers_0_bias : tensor<128xf64>) outs(%e7 : tensor<64x128xf64>) dimensions = [0] {remat.segment = 0 : i64}
  %v9 = arith.addf %mm6, %b8 {remat.segment = 0 : i64} : tensor<64x128xf64>
  %v10 = math.tanh %v9 {remat.segment = 0 : i64} : tensor<64x128xf64>
  %u11 = remat.rng_uniform {remat.segment = 0 : i64} : tensor<64x128xf32>
  %cst12 = arith.constant {remat.segment = 0 : i64} dense<1.000000000e-01> : tensor<64x128xf32>
  %m13 = arith.cmpf oge, %u11, %cst12 {remat.segment = 0 : i64} : tensor<64x128xf32>
  %cst14 = arith.constant {remat.segment = 0 : i64} dense<1.11111111111111116e+00> : tensor<64x128xf64>
  %v15 = arith.mulf %v10, %cst14 {remat.segment = 0 : i64} : tensor<64x128xf64>
  %cst16 = arith.constant {remat.segment = 0 : i64} dense<0.00000000000000000e+00> : tensor<64x128xf64>
  %v17 = arith.select %m13, %v15, %cst16 {remat.segment = 0 : i64} : tensor<64x128xi1>, tensor<64x128xf64>
  %e18 = tensor.empty() {remat.segment = 0 : i64} : tensor<128x128xf64>
  %t19 = linalg.transpose ins(%layers_1_weight : tensor<128x128xf64>) outs(%e18 : tensor<128x128xf64>) permutation = [1, 0] {remat.segment = 0 : i64}
  %e20 = tensor.empty() {remat.segment = 0 : i64} : tensor<64x128xf64>
  %c21 = arith.constant {remat.segment = 0 : i64} 0.00000000000000000e+00 : f64
  %f22 = linalg.fill {remat.segment = 0 : i64} ins(%c21 : f64) outs(%e20 : tensor<64x128xf64>) -> tensor<64x128xf64>
  %mm23 = linalg.matmul {remat.segment = 0 : i64} ins(%v17, %t19 : tensor<64x128xf64>, tensor<128x128xf64>) outs(%f22 : tensor<64x128xf64>) -> tensor<64x128xf64>
  %e24 = tensor.empty() {remat.segment = 0 : i64} : tensor<64x128xf64>
  %b25 = linalg.broadcast ins(%layers_1_bias : tensor<128xf64>) outs(%e24 : tensor<64x128xf64>) dimensions = [0] {remat.segment = 0 : i64}
  %v26 = arith.addf %mm23, %b25 {remat.segment = 0 : i64} : tensor<64x128xf64>
  %v27 = math.tanh %v26 {remat.segment = 0 : i64} : tensor<64x128xf64>
  %u28 = remat.rng_uniform {remat.segment = 0 : i64} : tensor<64x128xf32>
  %cst29 = arith.constant {remat.segment = 0 : i64} dense<1.000000000e-01> : tensor<64x128xf32>
  %m30 = arith.cmpf oge, %u28, %cst29 {remat.segment = 0 : i64} : tensor<64x128xf32>
  %cst31 = arith.constant {remat.segment = 0 : i64} dense<1.11111111111111116e+00> : tensor<64x128xf64>
  %v32 = arith.mulf %v27, %cst31 {remat.segment = 0 : i64} : tensor<64x128xf64>
  %cst33 = arith.constant {remat.segment = 0 : i64} dense<0.00000000000000000e+00> : tensor<64x128xf64>
  %v34 = arith.select %m30, %v32, %cst33 {remat.segment = 0 : i64} : tensor<64x128xi1>, tensor<64x128xf64>
  %e35 = tensor.empty() {remat.segment = 1 : i64} : tensor<128x128xf64>
  %t36 = linalg.transpose ins(%layers_2_weight : tensor<128x128xf64>) outs(%e35 : tensor<128x128xf64>) permutation = [1, 0] {remat.segment = 1 : i64}
  %e37 = tensor.empty() {remat.segment = 1 : i64} : tensor<64x128xf64>
  %c38 = arith.constant {remat.segment = 1 : i64} 0.00000000000000000e+00 : f64
  %f39 = linalg.fill {remat.segment = 1 : i64} ins(%c38 : f64) outs(%e37 : tensor<64x128xf64>) -> tensor<64x128xf64>
  %mm40 = linalg.matmul {remat.segment = 1 : i64} ins(%v34, %t36 : tensor<64x128xf64>, tensor<128x128xf64>) outs(%f39 : tensor<64x128xf64>) -> tensor<64x128xf64>
  %e41 = tensor.empty() {remat.segment = 1 : i64} : tensor<64x128xf64>
  %b42 = linalg.broadcast ins(%layers_2_bias : tensor<128xf64>) outs(%e41 : tensor<64x128xf64>) dimensions = [0] {remat.segment = 1 : i64}
  %v43 = arith.addf %mm40, %b42 {remat.segment = 1 : i64} : tensor<64x128xf64>
  %v44 = math.tanh %v43 {remat.segment = 1 : i64} : tensor<64x128xf64>
  %u45 = remat.rng_uniform {remat.segment = 1 : i64} : tensor<64x128xf32>
  %cst46 = arith.constant {remat.segment = 1 : i64} dense<1.000000000e-01> : tensor<64x128xf32>
  %m47 = arith.cmpf oge, %u45, %cst46 {remat.segment = 1 : i64} : tensor<64x128xf32>
  %cst48 = arith.constant {remat.segment = 1 : i64} dense<1.11111111111111116e+00> : tensor<64x128xf64>
  %v49 = arith.mulf %v44, %cst48 {remat.segment = 1 : i64} : tensor<64x128xf64>
  %cst50 = arith.constant {remat.segment = 1 : i64} dense<0.00000000000000000e+00> : tensor<64x128xf64>
  %v51 = arith.select %m47, %v49, %cst50 {remat.segment = 1 : i64} : tensor<64x128xi1>, tensor<64x128xf64>
  %e52 = tensor.empty() : tensor<128x32xf64>
  %t53 = linalg.transpose ins(%layers_3_weight : tensor<32x128xf64>) outs(%e52 : tensor<128x32xf64>) permutation = [1, 0]
  %e54 = tensor.empty() : tensor<64x32xf64>
  %c55 = arith.constant 0.00000000000000000e+00 : f64
  %f56 = linalg.fill ins(%c55 : f64) outs(%e54 : tensor<64x32xf64>) -> tensor<64x32xf64>
  %mm57 = linalg.matmul ins(%v51, %t53 : tensor<64x128xf64>, tensor<128x32xf64>) outs(%f56 : tensor<64x32xf64>) -> tensor<64x32xf64>
  %e58 = tensor.empty() : tensor<64x32xf64>
  %b59 = linalg.broadcast ins(%layers_3_bias : tensor<32xf64>) outs(%e58 : tensor<64x32xf64>) dimensions = [0]
  %v60 = arith.addf %mm57, %b59 : tensor<64x32xf64>
  %v61 = arith.subf %v60, %target : tensor<64x32xf64>
  %v62 = arith.mulf %v61, %v61 : tensor<64x32xf64>
  %e63 = tensor.empty() : tensor<f64>
  %c64 = arith.constant 0.00000000000000000e+00 : f64
  %f65 = linalg.fill ins(%c64 : f64) outs(%e63 : tensor<f64>) -> tensor<f64>
  %red66 = linalg.reduce ins(%v62 : tensor<64x32xf64>) outs(%f65 : tensor<f64>) dimensions = [0, 1]
    (%in67: f64, %acc68: f64) {
      %s69 = arith.addf %in67, %acc68 : f64
      linalg.yield %s69 : f64
    }
  %cst70 = arith.constant dense<4.88281250000000000e-04> : tensor<f64>
  %v71 = arith.mulf %red66, %cst70 : tensor<f64>
  %cst72 = arith.constant dense<5.00000000000000000e-01> : tensor<f64>
  %v73 = arith.mulf %v71, %cst72 : tensor<f64>
  %grads:8 = remat.backward {
    %cst74 = arith.constant dense<5.00000000000000000e-01> : tensor<f64>
    %v75 = arith.mulf %tangent0, %cst74 : tensor<f64>
    %e76 = tensor.empty() : tensor<64x32xf64>
    %b77 = linalg.broadcast ins(%v75 : tensor<f64>) outs(%e76 : tensor<64x32xf64>) dimensions = [0, 1]
    %cst78 = arith.constant dense<2.04800000000000000e+03> : tensor<64x32xf64>
    %v79 = arith.divf %b77, %cst78 : tensor<64x32xf64>
    %cst80 = arith.constant dense<2.00000000000000000e+00> : tensor<64x32xf64>
    %v81 = arith.mulf %v61, %cst80 : tensor<64x32xf64>
    %v82 = arith.mulf %v79, %v81 : tensor<64x32xf64>
    %e83 = tensor.empty() : tensor<128x32xf64>
    %t84 = linalg.transpose ins(%layers_3_weight : tensor<32x128xf64>) outs(%e83 : tensor<128x32xf64>) permutation = [1, 0]
    %e85 = tensor.empty() : tensor<32x128xf64>
    %t86 = linalg.transpose ins(%t84 : tensor<128x32xf64>) outs(%e85 : tensor<32x128xf64>) permutation = [1, 0]
    %e87 = tensor.empty() : tensor<64x128xf64>
    %c88 = arith.constant 0.00000000000000000e+00 : f64
    %f89 = linalg.fill ins(%c88 : f64) outs(%e87 : tensor<64x128xf64>) -> tensor<64x128xf64>
    %mm90 = linalg.matmul ins(%v82, %t86 : tensor<64x32xf64>, tensor<32x128xf64>) outs(%f89 : tensor<64x128xf64>) -> tensor<64x128xf64>
    %e91 = tensor.empty() : tensor<32x64xf64>
    %t92 = linalg.transpose ins(%v82 : tensor<64x32xf64>) outs(%e91 : tensor<32x64xf64>) permutation = [1, 0]
    %e93 = tensor.empty() : tensor<32x128xf64>
    %c94 = arith.constant 0.00000000000000000e+00 : f64
    %f95 = linalg.fill ins(%c94 : f64) outs(%e93 : tensor<32x128xf64>) -> tensor<32x128xf64>
    %mm96 = linalg.matmul ins(%t92, %v51 : tensor<32x64xf64>, tensor<64x128xf64>) outs(%f95 : tensor<32x128xf64>) -> tensor<32x128xf64>
    %e97 = tensor.empty() : tensor<128x32xf64>
    %t98 = linalg.transpose ins(%mm96 : tensor<32x128xf64>) outs(%e97 : tensor<128x32xf64>) permutation = [1, 0]
    %e99 = tensor.empty() : tensor<32xf64>
    %c100 = arith.constant 0.00000000000000000e+00 : f64
    %f101 = linalg.fill ins(%c100 : f64) outs(%e99 : tensor<32xf64>) -> tensor<32xf64>
    %red102 = linalg.reduce ins(%v82 : tensor<64x32xf64>) outs(%f101 : tensor<32xf64>) dimensions = [0]
      (%in103: f64, %acc104: f64) {
        %s105 = arith.addf %in103, %acc104 : f64
        linalg.yield %s105 : f64
      }
    %shape106 = arith.constant dense<[1, 32]> : tensor<2xi64>
    %r107 = tensor.reshape %red102(%shape106) : (tensor<32xf64>, tensor<2xi64>) -> tensor<1x32xf64>
    %shape108 = arith.constant dense<[32]> : tensor<1xi64>
    %r109 = tensor.reshape %r107(%shape108) : (tensor<1x32xf64>, tensor<1xi64>) -> tensor<32xf64>
    %e110 = tensor.empty() : tensor<32x128xf64>
    %t111 = linalg.transpose ins(%t98 : tensor<128x32xf64>) outs(%e110 : tensor<32x128xf64>) permutation = [1, 0]
    %cst112 = arith.constant dense<1.000000000e+00> : tensor<64x128xf32>
    %cst113 = arith.constant dense<0.000000000e+00> : tensor<64x128xf32>
    %v114 = arith.select %m47, %cst112, %cst113 : tensor<64x128xi1>, tensor<64x128xf32>
    %cv115 = arith.extf %v114 : tensor<64x128xf32> to tensor<64x128xf64>
    %cst116 = arith.constant dense<1.11111111111111116e+00> : tensor<64x128xf64>
    %v117 = arith.mulf %cv115, %cst116 : tensor<64x128xf64>
    %v118 = arith.mulf %mm90, %v117 : tensor<64x128xf64>
    %v119 = arith.mulf %v44, %v44 : tensor<64x128xf64>
    %cst120 = arith.constant dense<1.00000000000000000e+00> : tensor<64x128xf64>
    %v121 = arith.subf %cst120, %v119 : tensor<64x128xf64>
    %v122 = arith.mulf %v118, %v121 : tensor<64x128xf64>
    %e123 = tensor.empty() : tensor<128x128xf64>
    %t124 = linalg.transpose ins(%layers_2_weight : tensor<128x128xf64>) outs(%e123 : tensor<128x128xf64>) permutation = [1, 0]
    %e125 = tensor.empty() : tensor<128x128xf64>
    %t126 = linalg.transpose ins(%t124 : tensor<128x128xf64>) outs(%e125 : tensor<128x128xf64>) permutation = [1, 0]
    %e127 = tensor.empty() : tensor<64x128xf64>
    %c128 = arith.constant 0.00000000000000000e+00 : f64
    %f129 = linalg.fill ins(%c128 : f64) outs(%e127 : tensor<64x128xf64>) -> tensor<64x128xf64>
    %mm130 = linalg.matmul ins(%v122, %t126 : tensor<64x128xf64>, tensor<128x128xf64>) outs(%f129 : tensor<64x128xf64>) -> tensor<64x128xf64>
    %e131 = tensor.empty() : tensor<128x64xf64>
    %t132 = linalg.transpose ins(%v122 : tensor<64x128xf64>) outs(%e131 : tensor<128x64xf64>) permutation = [1, 0]
    %e133 = tensor.empty() : tensor<128x128xf64>
    %c134 = arith.constant 0.00000000000000000e+00 : f64
    %f135 = linalg.fill ins(%c134 : f64) outs(%e133 : tensor<128x128xf64>) -> tensor<128x128xf64>
    %mm136 = linalg.matmul ins(%t132, %v34 : tensor<128x64xf64>, tensor<64x128xf64>) outs(%f135 : tensor<128x128xf64>) -> tensor<128x128xf64>
    %e137 = tensor.empty() : tensor<128x128xf64>
    %t138 = linalg.transpose ins(%mm136 : tensor<128x128xf64>) outs(%e137 : tensor<128x128xf64>) permutation = [1, 0]
    %e139 = tensor.empty() : tensor<128xf64>
    %c140 = arith.constant 0.00000000000000000e+00 : f64
    %f141 = linalg.fill ins(%c140 : f64) outs(%e139 : tensor<128xf64>) -> tensor<128xf64>
    %red142 = linalg.reduce ins(%v122 : tensor<64x128xf64>) outs(%f141 : tensor<128xf64>) dimensions = [0]
      (%in143: f64, %acc144: f64) {
        %s145 = arith.addf %in143, %acc144 : f64
        linalg.yield %s145 : f64
      }
    %shape146 = arith.constant dense<[1, 128]> : tensor<2xi64>
    %r147 = tensor.reshape %red142(%shape146) : (tensor<128xf64>, tensor<2xi64>) -> tensor<1x128xf64>
    %shape148 = arith.constant dense<[128]> : tensor<1xi64>
    %r149 = tensor.reshape %r147(%shape148) : (tensor<1x128xf64>, tensor<1xi64>) -> tensor<128xf64>
    %e150 = tensor.empty() : tensor<128x128xf64>
    %t151 = linalg.transpose ins(%t138 : tensor<128x128xf64>) outs(%e150 : tensor<128x128xf64>) permutation = [1, 0]
    %cst152 = arith.constant dense<1.000000000e+00> : tensor<64x128xf32>
    %cst153 = arith.constant dense<0.000000000e+00> : tensor<64x128xf32>
    %v154 = arith.select %m30, %cst152, %cst153 : tensor<64x128xi1>, tensor<64x128xf32>
    %cv155 = arith.extf %v154 : tensor<64x128xf32> to tensor<64x128xf64>
    %cst156 = arith.constant dense<1.11111111111111116e+00> : tensor<64x128xf64>
    %v157 = arith.mulf %cv155, %cst156 : tensor<64x128xf64>
    %v158 = arith.mulf %mm130, %v157 : tensor<64x128xf64>
    %v159 = arith.mulf %v27, %v27 : tensor<64x128xf64>
    %cst160 = arith.constant dense<1.00000000000000000e+00> : tensor<64x128xf64>
    %v161 = arith.subf %cst160, %v159 : tensor<64x128xf64>
    %v162 = arith.mulf %v158, %v161 : tensor<64x128xf64>
    %e163 = tensor.empty() : tensor<128x128xf64>
    %t164 = linalg.transpose ins(%layers_1_weight : tensor<128x128xf64>) outs(%e163 : tensor<128x128xf64>) permutation = [1, 0]
    %e165 = tensor.empty() : tensor<128x128xf64>
    %t166 = linalg.transpose ins(%t164 : tensor<128x128xf64>) outs(%e165 : tensor<128x128xf64>) permutation = [1, 0]
    %e167 = tensor.empty() : tensor<64x128xf64>
    %c168 = arith.constant 0.00000000000000000e+00 : f64
    %f169 = linalg.fill ins(%c168 : f64) outs(%e167 : tensor<64x128xf64>) -> tensor<64x128xf64>
    %mm170 = linalg.matmul ins(%v162, %t166 : tensor<64x128xf64>, tensor<128x128xf64>) outs(%f169 : tensor<64x128xf64>) -> tensor<64x128xf64>
    %e171 = tensor.empty() : tensor<128x64xf64>
    %t172 = linalg.transpose ins(%v162 : tensor<64x128xf64>) outs(%e171 : tensor<128x64xf64>) permutation = [1, 0]
    %e173 = tensor.empty() : tensor<128x128xf64>
    %c174 = arith.constant 0.00000000000000000e+00 : f64
    %f175 = linalg.fill ins(%c174 : f64) outs(%e173 : tensor<128x128xf64>) -> tensor<128x128xf64>
    %mm176 = linalg.matmul ins(%t172, %v17 : tensor<128x64xf64>, tensor<64x128xf64>) outs(%f175 : tensor<128x128xf64>) -> tensor<128x128xf64>
    %e177 = tensor.empty() : tensor<128x128xf64>
    %t178 = linalg.transpose ins(%mm176 : tensor<128x128xf64>) outs(%e177 : tensor<128x128xf64>) permutation = [1, 0]
    %e179 = tensor.empty() : tensor<128xf64>
    %c180 = arith.constant 0.00000000000000000e+00 : f64
    %f181 = linalg.fill ins(%c180 : f64) outs(%e179 : tensor<128xf64>) -> tensor<128xf64>
    %red182 = linalg.reduce ins(%v162 : tensor<64x128xf64>) outs(%f181 : tensor<128xf64>) dimensions = [0]
      (%in183: f64, %acc184: f64) {
        %s185 = arith.addf %in183, %acc184 : f64
        linalg.yield %s185 : f64
      }
    %shape186 = arith.constant dense<[1, 128]> : tensor<2xi64>
    %r187 = tensor.reshape %red182(%shape186) : (tensor<128xf64>, tensor<2xi64>) -> tensor<1x128xf64>
    %shape188 = arith.constant dense<[128]> : tensor<1xi64>
    %r189 = tensor.reshape %r187(%shape188) : (tensor<1x128xf64>, tensor<1xi64>) -> tensor<128xf64>
    %e190 = tensor.empty() : tensor<128x128xf64>
    %t191 = linalg.transpose ins(%t178 : tensor<128x128xf64>) outs(%e190 : tensor<128x128xf64>) permutation = [1, 0]
    %cst192 = arith.constant dense<1.000000000e+00> : tensor<64x128xf32>
    %cst193 = arith.constant dense<0.000000000e+00> : tensor<64x128xf32>
    %v194 = arith.select %m13, %cst192, %cst193 : tensor<64x128xi1>, tensor<64x128xf32>
    %cv195 = arith.extf %v194 : tensor<64x128xf32> to tensor<64x128xf64>
    %cst196 = arith.constant dense<1.11111111111111116e+00> : tensor<64x128xf64>
    %v197 = arith.mulf %cv195, %cst196 : tensor<64x128xf64>
    %v198 = arith.mulf %mm170, %v197 : tensor<64x128xf64>
    %v199 = arith.mulf %v10, %v10 : tensor<64x128xf64>
    %cst200 = arith.constant dense<1.00000000000000000e+00> : tensor<64x128xf64>
    %v201 = arith.subf %cst200, %v199 : tensor<64x128xf64>
    %v202 = arith.mulf %v198, %v201 : tensor<64x128xf64>
    %e203 = tensor.empty() : tensor<128x64xf64>
    %t204 = linalg.transpose ins(%v202 : tensor<64x128xf64>) outs(%e203 : tensor<128x64xf64>) permutation = [1, 0]
    %e205 = tensor.empty() : tensor<128x64xf64>
    %c206 = arith.constant 0.00000000000000000e+00 : f64
    %f207 = linalg.fill ins(%c206 : f64) outs(%e205 : tensor<128x64xf64>) -> tensor<128x64xf64>
    %mm208 = linalg.matmul ins(%t204, %x : tensor<128x64xf64>, tensor<64x64xf64>) outs(%f207 : tensor<128x64xf64>) -> tensor<128x64xf64>
    %e209 = tensor.empty() : tensor<64x128xf64>
    %t210 = linalg.transpose ins(%mm208 : tensor<128x64xf64>) outs(%e209 : tensor<64x128xf64>) permutation = [1, 0]
    %e211 = tensor.empty() : tensor<128xf64>
    %c212 = arith.constant 0.00000000000000000e+00 : f64
    %f213 = linalg.fill ins(%c212 : f64) outs(%e211 : tensor<128xf64>) -> tensor<128xf64>
    %red214 = linalg.reduce ins(%v202 : tensor<64x128xf64>) outs(%f213 : tensor<128xf64>) dimensions = [0]
      (%in215: f64, %acc216: f64) {
        %s217 = arith.addf %in215, %acc216 : f64
        linalg.yield %s217 : f64
      }
    %shape218 = arith.constant dense<[1, 128]> : tensor<2xi64>
    %r219 = tensor.reshape %red214(%shape218) : (tensor<128xf64>, tensor<2xi64>) -> tensor<1x128xf64>
    %shape220 = arith.constant dense<[128]> : tensor<1xi64>
    %r221 = tensor.reshape %r219(%shape220) : (tensor<1x128xf64>, tensor<1xi64>) -> tensor<128xf64>
    %e222 = tensor.empty() : tensor<128x64xf64>
    %t223 = linalg.transpose ins(%t210 : tensor<64x128xf64>) outs(%e222 : tensor<128x64xf64>) permutation = [1, 0]
    remat.yield %t223, %r221, %t191, %r189, %t151, %r149, %t111, %r109 : tensor<128x64xf64>, tensor<128xf64>, tensor<128x128xf64>, tensor<128xf64>, tensor<128x128xf64>, tensor<128xf64>, tensor<32x128xf64>, tensor<32xf64>
  } : tensor<128x64xf64>, tensor<128xf64>, tensor<128x128xf64>, tensor<128xf64>, tensor<128x128xf64>, tensor<128xf64>, tensor<32x128xf64>, tensor<32xf64>
  return %v73, %grads#0, %grads#1, %grads#2, %grads#3, %grads#4, %grads#5, %grads#6, %grads#7 : tensor<f64>, tensor<128x64xf64>, tensor<128xf64>, tensor<128x128xf64>, tensor<128xf64>, tensor<128x128xf64>, tensor<128xf64>, tensor<32x128xf64>, tensor<32xf64>
}
