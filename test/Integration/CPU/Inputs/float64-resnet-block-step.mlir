// remat_torch.zoo:resnet_block: exported by remat-torch-export (AOTAutograd joint graph, core ATen ops)
func.func @step(%conv1_weight: tensor<8x8x3x3xf64>, %bn1_weight: tensor<8xf64>, %bn1_bias: tensor<8xf64>, %conv2_weight: tensor<8x8x3x3xf64>, %bn2_weight: tensor<8xf64>, %bn2_bias: tensor<8xf64>, %x: tensor<4x8x8x8xf64>, %target: tensor<4x8x8x8xf64>, %tangent0: tensor<f64>, %seed: i64 {remat.rng_seed})
    -> (tensor<f64>, tensor<8x8x3x3xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8x8x3x3xf64>, tensor<8xf64>, tensor<8xf64>) {
  %e1 = tensor.empty() {remat.segment = 0 : i64} : tensor<4x8x10x10xf64>
  %c2 = arith.constant {remat.segment = 0 : i64} 0.00000000000000000e+00 : f64
  %f3 = linalg.fill {remat.segment = 0 : i64} ins(%c2 : f64) outs(%e1 : tensor<4x8x10x10xf64>) -> tensor<4x8x10x10xf64>
  %ins4 = tensor.insert_slice %x into %f3[0, 0, 1, 1] [4, 8, 8, 8] [1, 1, 1, 1] {remat.segment = 0 : i64} : tensor<4x8x8x8xf64> into tensor<4x8x10x10xf64>
  %e5 = tensor.empty() {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %c6 = arith.constant {remat.segment = 0 : i64} 0.00000000000000000e+00 : f64
  %f7 = linalg.fill {remat.segment = 0 : i64} ins(%c6 : f64) outs(%e5 : tensor<4x8x8x8xf64>) -> tensor<4x8x8x8xf64>
  %conv8 = linalg.conv_2d_nchw_fchw {remat.segment = 0 : i64} ins(%ins4, %conv1_weight : tensor<4x8x10x10xf64>, tensor<8x8x3x3xf64>) outs(%f7 : tensor<4x8x8x8xf64>) -> tensor<4x8x8x8xf64>
  %e9 = tensor.empty() {remat.segment = 0 : i64} : tensor<8xf64>
  %c10 = arith.constant {remat.segment = 0 : i64} 0.00000000000000000e+00 : f64
  %f11 = linalg.fill {remat.segment = 0 : i64} ins(%c10 : f64) outs(%e9 : tensor<8xf64>) -> tensor<8xf64>
  %red12 = linalg.reduce ins(%conv8 : tensor<4x8x8x8xf64>) outs(%f11 : tensor<8xf64>) dimensions = [0, 2, 3] {remat.segment = 0 : i64}
    (%in13: f64, %acc14: f64) {
      %s15 = arith.addf %in13, %acc14 : f64
      linalg.yield %s15 : f64
    }
  %cst16 = arith.constant {remat.segment = 0 : i64} dense<3.90625000000000000e-03> : tensor<8xf64>
  %v17 = arith.mulf %red12, %cst16 {remat.segment = 0 : i64} : tensor<8xf64>
  %shape18 = arith.constant {remat.segment = 0 : i64} dense<[8, 1, 1]> : tensor<3xi64>
  %r19 = tensor.reshape %v17(%shape18) {remat.segment = 0 : i64} : (tensor<8xf64>, tensor<3xi64>) -> tensor<8x1x1xf64>
  %shape20 = arith.constant {remat.segment = 0 : i64} dense<[8]> : tensor<1xi64>
  %r21 = tensor.reshape %r19(%shape20) {remat.segment = 0 : i64} : (tensor<8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
  %e22 = tensor.empty() {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %b23 = linalg.broadcast ins(%r21 : tensor<8xf64>) outs(%e22 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3] {remat.segment = 0 : i64}
  %v24 = arith.subf %conv8, %b23 {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %v25 = arith.mulf %v24, %v24 {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %e26 = tensor.empty() {remat.segment = 0 : i64} : tensor<8xf64>
  %c27 = arith.constant {remat.segment = 0 : i64} 0.00000000000000000e+00 : f64
  %f28 = linalg.fill {remat.segment = 0 : i64} ins(%c27 : f64) outs(%e26 : tensor<8xf64>) -> tensor<8xf64>
  %red29 = linalg.reduce ins(%v25 : tensor<4x8x8x8xf64>) outs(%f28 : tensor<8xf64>) dimensions = [0, 2, 3] {remat.segment = 0 : i64}
    (%in30: f64, %acc31: f64) {
      %s32 = arith.addf %in30, %acc31 : f64
      linalg.yield %s32 : f64
    }
  %cst33 = arith.constant {remat.segment = 0 : i64} dense<3.90625000000000000e-03> : tensor<8xf64>
  %v34 = arith.mulf %red29, %cst33 {remat.segment = 0 : i64} : tensor<8xf64>
  %cst35 = arith.constant {remat.segment = 0 : i64} dense<1.00000000000000008e-05> : tensor<8xf64>
  %v36 = arith.addf %v34, %cst35 {remat.segment = 0 : i64} : tensor<8xf64>
  %v37 = math.rsqrt %v36 {remat.segment = 0 : i64} : tensor<8xf64>
  %shape38 = arith.constant {remat.segment = 0 : i64} dense<[8, 1, 1]> : tensor<3xi64>
  %r39 = tensor.reshape %v37(%shape38) {remat.segment = 0 : i64} : (tensor<8xf64>, tensor<3xi64>) -> tensor<8x1x1xf64>
  %shape40 = arith.constant {remat.segment = 0 : i64} dense<[8]> : tensor<1xi64>
  %r41 = tensor.reshape %r39(%shape40) {remat.segment = 0 : i64} : (tensor<8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
  %e42 = tensor.empty() {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %b43 = linalg.broadcast ins(%r41 : tensor<8xf64>) outs(%e42 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3] {remat.segment = 0 : i64}
  %v44 = arith.mulf %v24, %b43 {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %shape45 = arith.constant {remat.segment = 0 : i64} dense<[8, 1, 1]> : tensor<3xi64>
  %r46 = tensor.reshape %bn1_weight(%shape45) {remat.segment = 0 : i64} : (tensor<8xf64>, tensor<3xi64>) -> tensor<8x1x1xf64>
  %shape47 = arith.constant {remat.segment = 0 : i64} dense<[8]> : tensor<1xi64>
  %r48 = tensor.reshape %r46(%shape47) {remat.segment = 0 : i64} : (tensor<8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
  %e49 = tensor.empty() {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %b50 = linalg.broadcast ins(%r48 : tensor<8xf64>) outs(%e49 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3] {remat.segment = 0 : i64}
  %v51 = arith.mulf %v44, %b50 {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %shape52 = arith.constant {remat.segment = 0 : i64} dense<[8, 1, 1]> : tensor<3xi64>
  %r53 = tensor.reshape %bn1_bias(%shape52) {remat.segment = 0 : i64} : (tensor<8xf64>, tensor<3xi64>) -> tensor<8x1x1xf64>
  %shape54 = arith.constant {remat.segment = 0 : i64} dense<[8]> : tensor<1xi64>
  %r55 = tensor.reshape %r53(%shape54) {remat.segment = 0 : i64} : (tensor<8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
  %e56 = tensor.empty() {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %b57 = linalg.broadcast ins(%r55 : tensor<8xf64>) outs(%e56 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3] {remat.segment = 0 : i64}
  %v58 = arith.addf %v51, %b57 {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %cst59 = arith.constant {remat.segment = 0 : i64} dense<0.00000000000000000e+00> : tensor<4x8x8x8xf64>
  %v60 = arith.maximumf %v58, %cst59 {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %u61 = remat.rng_uniform {remat.segment = 0 : i64} : tensor<4x8x8x8xf32>
  %cst62 = arith.constant {remat.segment = 0 : i64} dense<1.000000000e-01> : tensor<4x8x8x8xf32>
  %m63 = arith.cmpf oge, %u61, %cst62 {remat.segment = 0 : i64} : tensor<4x8x8x8xf32>
  %cst64 = arith.constant {remat.segment = 0 : i64} dense<1.11111111111111116e+00> : tensor<4x8x8x8xf64>
  %v65 = arith.mulf %v60, %cst64 {remat.segment = 0 : i64} : tensor<4x8x8x8xf64>
  %cst66 = arith.constant {remat.segment = 0 : i64} dense<0.00000000000000000e+00> : tensor<4x8x8x8xf64>
  %v67 = arith.select %m63, %v65, %cst66 {remat.segment = 0 : i64} : tensor<4x8x8x8xi1>, tensor<4x8x8x8xf64>
  %e68 = tensor.empty() {remat.segment = 1 : i64} : tensor<4x8x10x10xf64>
  %c69 = arith.constant {remat.segment = 1 : i64} 0.00000000000000000e+00 : f64
  %f70 = linalg.fill {remat.segment = 1 : i64} ins(%c69 : f64) outs(%e68 : tensor<4x8x10x10xf64>) -> tensor<4x8x10x10xf64>
  %ins71 = tensor.insert_slice %v67 into %f70[0, 0, 1, 1] [4, 8, 8, 8] [1, 1, 1, 1] {remat.segment = 1 : i64} : tensor<4x8x8x8xf64> into tensor<4x8x10x10xf64>
  %e72 = tensor.empty() {remat.segment = 1 : i64} : tensor<4x8x8x8xf64>
  %c73 = arith.constant {remat.segment = 1 : i64} 0.00000000000000000e+00 : f64
  %f74 = linalg.fill {remat.segment = 1 : i64} ins(%c73 : f64) outs(%e72 : tensor<4x8x8x8xf64>) -> tensor<4x8x8x8xf64>
  %conv75 = linalg.conv_2d_nchw_fchw {remat.segment = 1 : i64} ins(%ins71, %conv2_weight : tensor<4x8x10x10xf64>, tensor<8x8x3x3xf64>) outs(%f74 : tensor<4x8x8x8xf64>) -> tensor<4x8x8x8xf64>
  %e76 = tensor.empty() {remat.segment = 1 : i64} : tensor<8xf64>
  %c77 = arith.constant {remat.segment = 1 : i64} 0.00000000000000000e+00 : f64
  %f78 = linalg.fill {remat.segment = 1 : i64} ins(%c77 : f64) outs(%e76 : tensor<8xf64>) -> tensor<8xf64>
  %red79 = linalg.reduce ins(%conv75 : tensor<4x8x8x8xf64>) outs(%f78 : tensor<8xf64>) dimensions = [0, 2, 3] {remat.segment = 1 : i64}
    (%in80: f64, %acc81: f64) {
      %s82 = arith.addf %in80, %acc81 : f64
      linalg.yield %s82 : f64
    }
  %cst83 = arith.constant {remat.segment = 1 : i64} dense<3.90625000000000000e-03> : tensor<8xf64>
  %v84 = arith.mulf %red79, %cst83 {remat.segment = 1 : i64} : tensor<8xf64>
  %shape85 = arith.constant {remat.segment = 1 : i64} dense<[8, 1, 1]> : tensor<3xi64>
  %r86 = tensor.reshape %v84(%shape85) {remat.segment = 1 : i64} : (tensor<8xf64>, tensor<3xi64>) -> tensor<8x1x1xf64>
  %shape87 = arith.constant {remat.segment = 1 : i64} dense<[8]> : tensor<1xi64>
  %r88 = tensor.reshape %r86(%shape87) {remat.segment = 1 : i64} : (tensor<8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
  %e89 = tensor.empty() {remat.segment = 1 : i64} : tensor<4x8x8x8xf64>
  %b90 = linalg.broadcast ins(%r88 : tensor<8xf64>) outs(%e89 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3] {remat.segment = 1 : i64}
  %v91 = arith.subf %conv75, %b90 {remat.segment = 1 : i64} : tensor<4x8x8x8xf64>
  %v92 = arith.mulf %v91, %v91 {remat.segment = 1 : i64} : tensor<4x8x8x8xf64>
  %e93 = tensor.empty() {remat.segment = 1 : i64} : tensor<8xf64>
  %c94 = arith.constant {remat.segment = 1 : i64} 0.00000000000000000e+00 : f64
  %f95 = linalg.fill {remat.segment = 1 : i64} ins(%c94 : f64) outs(%e93 : tensor<8xf64>) -> tensor<8xf64>
  %red96 = linalg.reduce ins(%v92 : tensor<4x8x8x8xf64>) outs(%f95 : tensor<8xf64>) dimensions = [0, 2, 3] {remat.segment = 1 : i64}
    (%in97: f64, %acc98: f64) {
      %s99 = arith.addf %in97, %acc98 : f64
      linalg.yield %s99 : f64
    }
  %cst100 = arith.constant {remat.segment = 1 : i64} dense<3.90625000000000000e-03> : tensor<8xf64>
  %v101 = arith.mulf %red96, %cst100 {remat.segment = 1 : i64} : tensor<8xf64>
  %cst102 = arith.constant {remat.segment = 1 : i64} dense<1.00000000000000008e-05> : tensor<8xf64>
  %v103 = arith.addf %v101, %cst102 {remat.segment = 1 : i64} : tensor<8xf64>
  %v104 = math.rsqrt %v103 {remat.segment = 1 : i64} : tensor<8xf64>
  %shape105 = arith.constant {remat.segment = 1 : i64} dense<[8, 1, 1]> : tensor<3xi64>
  %r106 = tensor.reshape %v104(%shape105) {remat.segment = 1 : i64} : (tensor<8xf64>, tensor<3xi64>) -> tensor<8x1x1xf64>
  %shape107 = arith.constant {remat.segment = 1 : i64} dense<[8]> : tensor<1xi64>
  %r108 = tensor.reshape %r106(%shape107) {remat.segment = 1 : i64} : (tensor<8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
  %e109 = tensor.empty() {remat.segment = 1 : i64} : tensor<4x8x8x8xf64>
  %b110 = linalg.broadcast ins(%r108 : tensor<8xf64>) outs(%e109 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3] {remat.segment = 1 : i64}
  %v111 = arith.mulf %v91, %b110 {remat.segment = 1 : i64} : tensor<4x8x8x8xf64>
  %shape112 = arith.constant {remat.segment = 1 : i64} dense<[8, 1, 1]> : tensor<3xi64>
  %r113 = tensor.reshape %bn2_weight(%shape112) {remat.segment = 1 : i64} : (tensor<8xf64>, tensor<3xi64>) -> tensor<8x1x1xf64>
  %shape114 = arith.constant {remat.segment = 1 : i64} dense<[8]> : tensor<1xi64>
  %r115 = tensor.reshape %r113(%shape114) {remat.segment = 1 : i64} : (tensor<8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
  %e116 = tensor.empty() {remat.segment = 1 : i64} : tensor<4x8x8x8xf64>
  %b117 = linalg.broadcast ins(%r115 : tensor<8xf64>) outs(%e116 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3] {remat.segment = 1 : i64}
  %v118 = arith.mulf %v111, %b117 {remat.segment = 1 : i64} : tensor<4x8x8x8xf64>
  %shape119 = arith.constant {remat.segment = 1 : i64} dense<[8, 1, 1]> : tensor<3xi64>
  %r120 = tensor.reshape %bn2_bias(%shape119) {remat.segment = 1 : i64} : (tensor<8xf64>, tensor<3xi64>) -> tensor<8x1x1xf64>
  %shape121 = arith.constant {remat.segment = 1 : i64} dense<[8]> : tensor<1xi64>
  %r122 = tensor.reshape %r120(%shape121) {remat.segment = 1 : i64} : (tensor<8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
  %e123 = tensor.empty() {remat.segment = 1 : i64} : tensor<4x8x8x8xf64>
  %b124 = linalg.broadcast ins(%r122 : tensor<8xf64>) outs(%e123 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3] {remat.segment = 1 : i64}
  %v125 = arith.addf %v118, %b124 {remat.segment = 1 : i64} : tensor<4x8x8x8xf64>
  %v126 = arith.addf %x, %v125 : tensor<4x8x8x8xf64>
  %cst127 = arith.constant dense<0.00000000000000000e+00> : tensor<4x8x8x8xf64>
  %v128 = arith.maximumf %v126, %cst127 : tensor<4x8x8x8xf64>
  %v129 = arith.subf %v128, %target : tensor<4x8x8x8xf64>
  %v130 = arith.mulf %v129, %v129 : tensor<4x8x8x8xf64>
  %e131 = tensor.empty() : tensor<f64>
  %c132 = arith.constant 0.00000000000000000e+00 : f64
  %f133 = linalg.fill ins(%c132 : f64) outs(%e131 : tensor<f64>) -> tensor<f64>
  %red134 = linalg.reduce ins(%v130 : tensor<4x8x8x8xf64>) outs(%f133 : tensor<f64>) dimensions = [0, 1, 2, 3]
    (%in135: f64, %acc136: f64) {
      %s137 = arith.addf %in135, %acc136 : f64
      linalg.yield %s137 : f64
    }
  %cst138 = arith.constant dense<4.88281250000000000e-04> : tensor<f64>
  %v139 = arith.mulf %red134, %cst138 : tensor<f64>
  %cst140 = arith.constant dense<5.00000000000000000e-01> : tensor<f64>
  %v141 = arith.mulf %v139, %cst140 : tensor<f64>
  %grads:6 = remat.backward {
    %cst142 = arith.constant dense<5.00000000000000000e-01> : tensor<f64>
    %v143 = arith.mulf %tangent0, %cst142 : tensor<f64>
    %e144 = tensor.empty() : tensor<4x8x8x8xf64>
    %b145 = linalg.broadcast ins(%v143 : tensor<f64>) outs(%e144 : tensor<4x8x8x8xf64>) dimensions = [0, 1, 2, 3]
    %cst146 = arith.constant dense<2.04800000000000000e+03> : tensor<4x8x8x8xf64>
    %v147 = arith.divf %b145, %cst146 : tensor<4x8x8x8xf64>
    %cst148 = arith.constant dense<2.00000000000000000e+00> : tensor<4x8x8x8xf64>
    %v149 = arith.mulf %v129, %cst148 : tensor<4x8x8x8xf64>
    %v150 = arith.mulf %v147, %v149 : tensor<4x8x8x8xf64>
    %cst151 = arith.constant dense<0.00000000000000000e+00> : tensor<4x8x8x8xf64>
    %m152 = arith.cmpf ole, %v128, %cst151 : tensor<4x8x8x8xf64>
    %cst153 = arith.constant dense<0.00000000000000000e+00> : tensor<f64>
    %e154 = tensor.empty() : tensor<4x8x8x8xf64>
    %b155 = linalg.broadcast ins(%cst153 : tensor<f64>) outs(%e154 : tensor<4x8x8x8xf64>) dimensions = [0, 1, 2, 3]
    %v156 = arith.select %m152, %b155, %v150 : tensor<4x8x8x8xi1>, tensor<4x8x8x8xf64>
    %shape157 = arith.constant dense<[1, 8]> : tensor<2xi64>
    %r158 = tensor.reshape %v84(%shape157) : (tensor<8xf64>, tensor<2xi64>) -> tensor<1x8xf64>
    %shape159 = arith.constant dense<[1, 8, 1]> : tensor<3xi64>
    %r160 = tensor.reshape %r158(%shape159) : (tensor<1x8xf64>, tensor<3xi64>) -> tensor<1x8x1xf64>
    %shape161 = arith.constant dense<[1, 8, 1, 1]> : tensor<4xi64>
    %r162 = tensor.reshape %r160(%shape161) : (tensor<1x8x1xf64>, tensor<4xi64>) -> tensor<1x8x1x1xf64>
    %e163 = tensor.empty() : tensor<8xf64>
    %c164 = arith.constant 0.00000000000000000e+00 : f64
    %f165 = linalg.fill ins(%c164 : f64) outs(%e163 : tensor<8xf64>) -> tensor<8xf64>
    %red166 = linalg.reduce ins(%v156 : tensor<4x8x8x8xf64>) outs(%f165 : tensor<8xf64>) dimensions = [0, 2, 3]
      (%in167: f64, %acc168: f64) {
        %s169 = arith.addf %in167, %acc168 : f64
        linalg.yield %s169 : f64
      }
    %shape170 = arith.constant dense<[8]> : tensor<1xi64>
    %r171 = tensor.reshape %r162(%shape170) : (tensor<1x8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
    %e172 = tensor.empty() : tensor<4x8x8x8xf64>
    %b173 = linalg.broadcast ins(%r171 : tensor<8xf64>) outs(%e172 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3]
    %v174 = arith.subf %conv75, %b173 : tensor<4x8x8x8xf64>
    %v175 = arith.mulf %v156, %v174 : tensor<4x8x8x8xf64>
    %e176 = tensor.empty() : tensor<8xf64>
    %c177 = arith.constant 0.00000000000000000e+00 : f64
    %f178 = linalg.fill ins(%c177 : f64) outs(%e176 : tensor<8xf64>) -> tensor<8xf64>
    %red179 = linalg.reduce ins(%v175 : tensor<4x8x8x8xf64>) outs(%f178 : tensor<8xf64>) dimensions = [0, 2, 3]
      (%in180: f64, %acc181: f64) {
        %s182 = arith.addf %in180, %acc181 : f64
        linalg.yield %s182 : f64
      }
    %cst183 = arith.constant dense<3.90625000000000000e-03> : tensor<8xf64>
    %v184 = arith.mulf %red166, %cst183 : tensor<8xf64>
    %shape185 = arith.constant dense<[1, 8]> : tensor<2xi64>
    %r186 = tensor.reshape %v184(%shape185) : (tensor<8xf64>, tensor<2xi64>) -> tensor<1x8xf64>
    %shape187 = arith.constant dense<[1, 8, 1]> : tensor<3xi64>
    %r188 = tensor.reshape %r186(%shape187) : (tensor<1x8xf64>, tensor<3xi64>) -> tensor<1x8x1xf64>
    %shape189 = arith.constant dense<[1, 8, 1, 1]> : tensor<4xi64>
    %r190 = tensor.reshape %r188(%shape189) : (tensor<1x8x1xf64>, tensor<4xi64>) -> tensor<1x8x1x1xf64>
    %cst191 = arith.constant dense<3.90625000000000000e-03> : tensor<8xf64>
    %v192 = arith.mulf %red179, %cst191 : tensor<8xf64>
    %v193 = arith.mulf %v104, %v104 : tensor<8xf64>
    %v194 = arith.mulf %v192, %v193 : tensor<8xf64>
    %shape195 = arith.constant dense<[1, 8]> : tensor<2xi64>
    %r196 = tensor.reshape %v194(%shape195) : (tensor<8xf64>, tensor<2xi64>) -> tensor<1x8xf64>
    %shape197 = arith.constant dense<[1, 8, 1]> : tensor<3xi64>
    %r198 = tensor.reshape %r196(%shape197) : (tensor<1x8xf64>, tensor<3xi64>) -> tensor<1x8x1xf64>
    %shape199 = arith.constant dense<[1, 8, 1, 1]> : tensor<4xi64>
    %r200 = tensor.reshape %r198(%shape199) : (tensor<1x8x1xf64>, tensor<4xi64>) -> tensor<1x8x1x1xf64>
    %v201 = arith.mulf %v104, %bn2_weight : tensor<8xf64>
    %shape202 = arith.constant dense<[1, 8]> : tensor<2xi64>
    %r203 = tensor.reshape %v201(%shape202) : (tensor<8xf64>, tensor<2xi64>) -> tensor<1x8xf64>
    %shape204 = arith.constant dense<[1, 8, 1]> : tensor<3xi64>
    %r205 = tensor.reshape %r203(%shape204) : (tensor<1x8xf64>, tensor<3xi64>) -> tensor<1x8x1xf64>
    %shape206 = arith.constant dense<[1, 8, 1, 1]> : tensor<4xi64>
    %r207 = tensor.reshape %r205(%shape206) : (tensor<1x8x1xf64>, tensor<4xi64>) -> tensor<1x8x1x1xf64>
    %shape208 = arith.constant dense<[8]> : tensor<1xi64>
    %r209 = tensor.reshape %r162(%shape208) : (tensor<1x8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
    %e210 = tensor.empty() : tensor<4x8x8x8xf64>
    %b211 = linalg.broadcast ins(%r209 : tensor<8xf64>) outs(%e210 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3]
    %v212 = arith.subf %conv75, %b211 : tensor<4x8x8x8xf64>
    %shape213 = arith.constant dense<[8]> : tensor<1xi64>
    %r214 = tensor.reshape %r200(%shape213) : (tensor<1x8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
    %e215 = tensor.empty() : tensor<4x8x8x8xf64>
    %b216 = linalg.broadcast ins(%r214 : tensor<8xf64>) outs(%e215 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3]
    %v217 = arith.mulf %v212, %b216 : tensor<4x8x8x8xf64>
    %v218 = arith.subf %v156, %v217 : tensor<4x8x8x8xf64>
    %shape219 = arith.constant dense<[8]> : tensor<1xi64>
    %r220 = tensor.reshape %r190(%shape219) : (tensor<1x8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
    %e221 = tensor.empty() : tensor<4x8x8x8xf64>
    %b222 = linalg.broadcast ins(%r220 : tensor<8xf64>) outs(%e221 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3]
    %v223 = arith.subf %v218, %b222 : tensor<4x8x8x8xf64>
    %shape224 = arith.constant dense<[8]> : tensor<1xi64>
    %r225 = tensor.reshape %r207(%shape224) : (tensor<1x8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
    %e226 = tensor.empty() : tensor<4x8x8x8xf64>
    %b227 = linalg.broadcast ins(%r225 : tensor<8xf64>) outs(%e226 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3]
    %v228 = arith.mulf %v223, %b227 : tensor<4x8x8x8xf64>
    %v229 = arith.mulf %red179, %v104 : tensor<8xf64>
    %e230 = tensor.empty() : tensor<4x8x10x10xf64>
    %c231 = arith.constant 0.00000000000000000e+00 : f64
    %f232 = linalg.fill ins(%c231 : f64) outs(%e230 : tensor<4x8x10x10xf64>) -> tensor<4x8x10x10xf64>
    %ins233 = tensor.insert_slice %v228 into %f232[0, 0, 1, 1] [4, 8, 8, 8] [1, 1, 1, 1] : tensor<4x8x8x8xf64> into tensor<4x8x10x10xf64>
    %e234 = tensor.empty() : tensor<8x8x3x3xf64>
    %g235 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d0, 2 - d2, 2 - d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv2_weight : tensor<8x8x3x3xf64>) outs(%e234 : tensor<8x8x3x3xf64>) {
      ^bb0(%a236: f64, %a237: f64):
        linalg.yield %a236 : f64
      } -> tensor<8x8x3x3xf64>
    %e240 = tensor.empty() : tensor<4x8x8x8xf64>
    %c241 = arith.constant 0.00000000000000000e+00 : f64
    %f242 = linalg.fill ins(%c241 : f64) outs(%e240 : tensor<4x8x8x8xf64>) -> tensor<4x8x8x8xf64>
    %conv243 = linalg.conv_2d_nchw_fchw ins(%ins233, %g235 : tensor<4x8x10x10xf64>, tensor<8x8x3x3xf64>) outs(%f242 : tensor<4x8x8x8xf64>) -> tensor<4x8x8x8xf64>
    %e244 = tensor.empty() : tensor<4x8x10x10xf64>
    %c245 = arith.constant 0.00000000000000000e+00 : f64
    %f246 = linalg.fill ins(%c245 : f64) outs(%e244 : tensor<4x8x10x10xf64>) -> tensor<4x8x10x10xf64>
    %ins247 = tensor.insert_slice %v67 into %f246[0, 0, 1, 1] [4, 8, 8, 8] [1, 1, 1, 1] : tensor<4x8x8x8xf64> into tensor<4x8x10x10xf64>
    %e248 = tensor.empty() : tensor<8x8x3x3xf64>
    %c249 = arith.constant 0.00000000000000000e+00 : f64
    %f250 = linalg.fill ins(%c249 : f64) outs(%e248 : tensor<8x8x3x3xf64>) -> tensor<8x8x3x3xf64>
    %g251 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%v228, %ins247 : tensor<4x8x8x8xf64>, tensor<4x8x10x10xf64>) outs(%f250 : tensor<8x8x3x3xf64>) {
      ^bb0(%a252: f64, %a253: f64, %a254: f64):
        %t256 = arith.mulf %a252, %a253 : f64
        %y255 = arith.addf %a254, %t256 : f64
        linalg.yield %y255 : f64
      } -> tensor<8x8x3x3xf64>
    %cst257 = arith.constant dense<1.000000000e+00> : tensor<4x8x8x8xf32>
    %cst258 = arith.constant dense<0.000000000e+00> : tensor<4x8x8x8xf32>
    %v259 = arith.select %m63, %cst257, %cst258 : tensor<4x8x8x8xi1>, tensor<4x8x8x8xf32>
    %cv260 = arith.extf %v259 : tensor<4x8x8x8xf32> to tensor<4x8x8x8xf64>
    %cst261 = arith.constant dense<1.11111111111111116e+00> : tensor<4x8x8x8xf64>
    %v262 = arith.mulf %cv260, %cst261 : tensor<4x8x8x8xf64>
    %v263 = arith.mulf %conv243, %v262 : tensor<4x8x8x8xf64>
    %cst264 = arith.constant dense<0.00000000000000000e+00> : tensor<4x8x8x8xf64>
    %m265 = arith.cmpf ole, %v60, %cst264 : tensor<4x8x8x8xf64>
    %cst266 = arith.constant dense<0.00000000000000000e+00> : tensor<f64>
    %e267 = tensor.empty() : tensor<4x8x8x8xf64>
    %b268 = linalg.broadcast ins(%cst266 : tensor<f64>) outs(%e267 : tensor<4x8x8x8xf64>) dimensions = [0, 1, 2, 3]
    %v269 = arith.select %m265, %b268, %v263 : tensor<4x8x8x8xi1>, tensor<4x8x8x8xf64>
    %shape270 = arith.constant dense<[1, 8]> : tensor<2xi64>
    %r271 = tensor.reshape %v17(%shape270) : (tensor<8xf64>, tensor<2xi64>) -> tensor<1x8xf64>
    %shape272 = arith.constant dense<[1, 8, 1]> : tensor<3xi64>
    %r273 = tensor.reshape %r271(%shape272) : (tensor<1x8xf64>, tensor<3xi64>) -> tensor<1x8x1xf64>
    %shape274 = arith.constant dense<[1, 8, 1, 1]> : tensor<4xi64>
    %r275 = tensor.reshape %r273(%shape274) : (tensor<1x8x1xf64>, tensor<4xi64>) -> tensor<1x8x1x1xf64>
    %e276 = tensor.empty() : tensor<8xf64>
    %c277 = arith.constant 0.00000000000000000e+00 : f64
    %f278 = linalg.fill ins(%c277 : f64) outs(%e276 : tensor<8xf64>) -> tensor<8xf64>
    %red279 = linalg.reduce ins(%v269 : tensor<4x8x8x8xf64>) outs(%f278 : tensor<8xf64>) dimensions = [0, 2, 3]
      (%in280: f64, %acc281: f64) {
        %s282 = arith.addf %in280, %acc281 : f64
        linalg.yield %s282 : f64
      }
    %shape283 = arith.constant dense<[8]> : tensor<1xi64>
    %r284 = tensor.reshape %r275(%shape283) : (tensor<1x8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
    %e285 = tensor.empty() : tensor<4x8x8x8xf64>
    %b286 = linalg.broadcast ins(%r284 : tensor<8xf64>) outs(%e285 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3]
    %v287 = arith.subf %conv8, %b286 : tensor<4x8x8x8xf64>
    %v288 = arith.mulf %v269, %v287 : tensor<4x8x8x8xf64>
    %e289 = tensor.empty() : tensor<8xf64>
    %c290 = arith.constant 0.00000000000000000e+00 : f64
    %f291 = linalg.fill ins(%c290 : f64) outs(%e289 : tensor<8xf64>) -> tensor<8xf64>
    %red292 = linalg.reduce ins(%v288 : tensor<4x8x8x8xf64>) outs(%f291 : tensor<8xf64>) dimensions = [0, 2, 3]
      (%in293: f64, %acc294: f64) {
        %s295 = arith.addf %in293, %acc294 : f64
        linalg.yield %s295 : f64
      }
    %cst296 = arith.constant dense<3.90625000000000000e-03> : tensor<8xf64>
    %v297 = arith.mulf %red279, %cst296 : tensor<8xf64>
    %shape298 = arith.constant dense<[1, 8]> : tensor<2xi64>
    %r299 = tensor.reshape %v297(%shape298) : (tensor<8xf64>, tensor<2xi64>) -> tensor<1x8xf64>
    %shape300 = arith.constant dense<[1, 8, 1]> : tensor<3xi64>
    %r301 = tensor.reshape %r299(%shape300) : (tensor<1x8xf64>, tensor<3xi64>) -> tensor<1x8x1xf64>
    %shape302 = arith.constant dense<[1, 8, 1, 1]> : tensor<4xi64>
    %r303 = tensor.reshape %r301(%shape302) : (tensor<1x8x1xf64>, tensor<4xi64>) -> tensor<1x8x1x1xf64>
    %cst304 = arith.constant dense<3.90625000000000000e-03> : tensor<8xf64>
    %v305 = arith.mulf %red292, %cst304 : tensor<8xf64>
    %v306 = arith.mulf %v37, %v37 : tensor<8xf64>
    %v307 = arith.mulf %v305, %v306 : tensor<8xf64>
    %shape308 = arith.constant dense<[1, 8]> : tensor<2xi64>
    %r309 = tensor.reshape %v307(%shape308) : (tensor<8xf64>, tensor<2xi64>) -> tensor<1x8xf64>
    %shape310 = arith.constant dense<[1, 8, 1]> : tensor<3xi64>
    %r311 = tensor.reshape %r309(%shape310) : (tensor<1x8xf64>, tensor<3xi64>) -> tensor<1x8x1xf64>
    %shape312 = arith.constant dense<[1, 8, 1, 1]> : tensor<4xi64>
    %r313 = tensor.reshape %r311(%shape312) : (tensor<1x8x1xf64>, tensor<4xi64>) -> tensor<1x8x1x1xf64>
    %v314 = arith.mulf %v37, %bn1_weight : tensor<8xf64>
    %shape315 = arith.constant dense<[1, 8]> : tensor<2xi64>
    %r316 = tensor.reshape %v314(%shape315) : (tensor<8xf64>, tensor<2xi64>) -> tensor<1x8xf64>
    %shape317 = arith.constant dense<[1, 8, 1]> : tensor<3xi64>
    %r318 = tensor.reshape %r316(%shape317) : (tensor<1x8xf64>, tensor<3xi64>) -> tensor<1x8x1xf64>
    %shape319 = arith.constant dense<[1, 8, 1, 1]> : tensor<4xi64>
    %r320 = tensor.reshape %r318(%shape319) : (tensor<1x8x1xf64>, tensor<4xi64>) -> tensor<1x8x1x1xf64>
    %shape321 = arith.constant dense<[8]> : tensor<1xi64>
    %r322 = tensor.reshape %r275(%shape321) : (tensor<1x8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
    %e323 = tensor.empty() : tensor<4x8x8x8xf64>
    %b324 = linalg.broadcast ins(%r322 : tensor<8xf64>) outs(%e323 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3]
    %v325 = arith.subf %conv8, %b324 : tensor<4x8x8x8xf64>
    %shape326 = arith.constant dense<[8]> : tensor<1xi64>
    %r327 = tensor.reshape %r313(%shape326) : (tensor<1x8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
    %e328 = tensor.empty() : tensor<4x8x8x8xf64>
    %b329 = linalg.broadcast ins(%r327 : tensor<8xf64>) outs(%e328 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3]
    %v330 = arith.mulf %v325, %b329 : tensor<4x8x8x8xf64>
    %v331 = arith.subf %v269, %v330 : tensor<4x8x8x8xf64>
    %shape332 = arith.constant dense<[8]> : tensor<1xi64>
    %r333 = tensor.reshape %r303(%shape332) : (tensor<1x8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
    %e334 = tensor.empty() : tensor<4x8x8x8xf64>
    %b335 = linalg.broadcast ins(%r333 : tensor<8xf64>) outs(%e334 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3]
    %v336 = arith.subf %v331, %b335 : tensor<4x8x8x8xf64>
    %shape337 = arith.constant dense<[8]> : tensor<1xi64>
    %r338 = tensor.reshape %r320(%shape337) : (tensor<1x8x1x1xf64>, tensor<1xi64>) -> tensor<8xf64>
    %e339 = tensor.empty() : tensor<4x8x8x8xf64>
    %b340 = linalg.broadcast ins(%r338 : tensor<8xf64>) outs(%e339 : tensor<4x8x8x8xf64>) dimensions = [0, 2, 3]
    %v341 = arith.mulf %v336, %b340 : tensor<4x8x8x8xf64>
    %v342 = arith.mulf %red292, %v37 : tensor<8xf64>
    %e343 = tensor.empty() : tensor<4x8x10x10xf64>
    %c344 = arith.constant 0.00000000000000000e+00 : f64
    %f345 = linalg.fill ins(%c344 : f64) outs(%e343 : tensor<4x8x10x10xf64>) -> tensor<4x8x10x10xf64>
    %ins346 = tensor.insert_slice %x into %f345[0, 0, 1, 1] [4, 8, 8, 8] [1, 1, 1, 1] : tensor<4x8x8x8xf64> into tensor<4x8x10x10xf64>
    %e347 = tensor.empty() : tensor<8x8x3x3xf64>
    %c348 = arith.constant 0.00000000000000000e+00 : f64
    %f349 = linalg.fill ins(%c348 : f64) outs(%e347 : tensor<8x8x3x3xf64>) -> tensor<8x8x3x3xf64>
    %g350 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%v341, %ins346 : tensor<4x8x8x8xf64>, tensor<4x8x10x10xf64>) outs(%f349 : tensor<8x8x3x3xf64>) {
      ^bb0(%a351: f64, %a352: f64, %a353: f64):
        %t355 = arith.mulf %a351, %a352 : f64
        %y354 = arith.addf %a353, %t355 : f64
        linalg.yield %y354 : f64
      } -> tensor<8x8x3x3xf64>
    remat.yield %g350, %v342, %red279, %g251, %v229, %red166 : tensor<8x8x3x3xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8x8x3x3xf64>, tensor<8xf64>, tensor<8xf64>
  } : tensor<8x8x3x3xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8x8x3x3xf64>, tensor<8xf64>, tensor<8xf64>
  return %v141, %grads#0, %grads#1, %grads#2, %grads#3, %grads#4, %grads#5 : tensor<f64>, tensor<8x8x3x3xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8x8x3x3xf64>, tensor<8xf64>, tensor<8xf64>
}
