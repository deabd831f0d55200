// A language model's head and loss as the PyTorch exporter writes them
// (GPT-2's, abridged): logits of 512 tokens over a vocabulary of 33 from a
// tied embedding, their log-softmax, the mean negative log-likelihood of the
// labels (-100 ignored), and in the backward the logits' gradient, the
// hidden state's gradient and the embedding's.
func.func @step(%w: tensor<33x16xf32>, %h: tensor<512x16xf32>,
                %labels: tensor<512xi64>, %tangent: tensor<f32>)
    -> (tensor<f32>, tensor<33x16xf32>, tensor<512x16xf32>) {
  %e0 = tensor.empty() : tensor<16x33xf32>
  %wt = linalg.transpose ins(%w : tensor<33x16xf32>) outs(%e0 : tensor<16x33xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<512x33xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<512x33xf32>) -> tensor<512x33xf32>
  %logits = linalg.matmul ins(%h, %wt : tensor<512x16xf32>, tensor<16x33xf32>) outs(%f1 : tensor<512x33xf32>) -> tensor<512x33xf32>
  %s3 = arith.constant dense<[2, 256, 33]> : tensor<3xi64>
  %l3 = tensor.reshape %logits(%s3) : (tensor<512x33xf32>, tensor<3xi64>) -> tensor<2x256x33xf32>
  %s2 = arith.constant dense<[512, 33]> : tensor<2xi64>
  %l2 = tensor.reshape %l3(%s2) : (tensor<2x256x33xf32>, tensor<2xi64>) -> tensor<512x33xf32>
  %e2 = tensor.empty() : tensor<512xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<512xf32>) -> tensor<512xf32>
  %max = linalg.reduce ins(%l2 : tensor<512x33xf32>) outs(%f2 : tensor<512xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %e3 = tensor.empty() : tensor<512x33xf32>
  %bmax = linalg.broadcast ins(%max : tensor<512xf32>) outs(%e3 : tensor<512x33xf32>) dimensions = [1]
  %shifted = arith.subf %l2, %bmax : tensor<512x33xf32>
  %exp = math.exp %shifted : tensor<512x33xf32>
  %e4 = tensor.empty() : tensor<512xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<512xf32>) -> tensor<512xf32>
  %sum = linalg.reduce ins(%exp : tensor<512x33xf32>) outs(%f4 : tensor<512xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %s21 = arith.constant dense<[512, 1]> : tensor<2xi64>
  %sum2 = tensor.reshape %sum(%s21) : (tensor<512xf32>, tensor<2xi64>) -> tensor<512x1xf32>
  %log = math.log %sum2 : tensor<512x1xf32>
  %s1 = arith.constant dense<[512]> : tensor<1xi64>
  %log1 = tensor.reshape %log(%s1) : (tensor<512x1xf32>, tensor<1xi64>) -> tensor<512xf32>
  %e5 = tensor.empty() : tensor<512x33xf32>
  %blog = linalg.broadcast ins(%log1 : tensor<512xf32>) outs(%e5 : tensor<512x33xf32>) dimensions = [1]
  %logp = arith.subf %shifted, %blog : tensor<512x33xf32>
  %ignore = arith.constant dense<-100> : tensor<512xi64>
  %valid = arith.cmpi ne, %labels, %ignore : tensor<512xi64>
  %zeros_i = arith.constant dense<0> : tensor<512xi64>
  %safe = arith.select %valid, %labels, %zeros_i : tensor<512xi1>, tensor<512xi64>
  %safe2 = tensor.reshape %safe(%s21) : (tensor<512xi64>, tensor<2xi64>) -> tensor<512x1xi64>
  %e6 = tensor.empty() : tensor<512x1xf32>
  %picked = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%safe2 : tensor<512x1xi64>) outs(%e6 : tensor<512x1xf32>) {
    ^bb0(%label: i64, %out: f32):
      %lo = arith.constant 0 : i64
      %hi = arith.constant 32 : i64
      %c1 = arith.maxsi %label, %lo : i64
      %c2 = arith.minsi %c1, %hi : i64
      %col = arith.index_cast %c2 : i64 to index
      %row = linalg.index 0 : index
      %v = tensor.extract %logp[%row, %col] : tensor<512x33xf32>
      linalg.yield %v : f32
    } -> tensor<512x1xf32>
  %picked1 = tensor.reshape %picked(%s1) : (tensor<512x1xf32>, tensor<1xi64>) -> tensor<512xf32>
  %nll = arith.negf %picked1 : tensor<512xf32>
  %zeros_f = arith.constant dense<0.000000e+00> : tensor<512xf32>
  %nll0 = arith.select %valid, %nll, %zeros_f : tensor<512xi1>, tensor<512xf32>
  %count_i = arith.extui %valid : tensor<512xi1> to tensor<512xi64>
  %e7 = tensor.empty() : tensor<i64>
  %c0_i = arith.constant 0 : i64
  %f7 = linalg.fill ins(%c0_i : i64) outs(%e7 : tensor<i64>) -> tensor<i64>
  %count = linalg.reduce ins(%count_i : tensor<512xi64>) outs(%f7 : tensor<i64>) dimensions = [0]
    (%in: i64, %acc: i64) {
      %a = arith.addi %in, %acc : i64
      linalg.yield %a : i64
    }
  %countf = arith.sitofp %count : tensor<i64> to tensor<f32>
  %e8 = tensor.empty() : tensor<f32>
  %f8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<f32>) -> tensor<f32>
  %total = linalg.reduce ins(%nll0 : tensor<512xf32>) outs(%f8 : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %loss = arith.divf %total, %countf : tensor<f32>
  %g:2 = remat.backward {
    %scale = arith.divf %tangent, %countf : tensor<f32>
    %e9 = tensor.empty() : tensor<512x33xi1>
    %false = arith.constant false
    %f9 = linalg.fill ins(%false : i1) outs(%e9 : tensor<512x33xi1>) -> tensor<512x33xi1>
    %onehot = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%safe2 : tensor<512x1xi64>) outs(%f9 : tensor<512x33xi1>) {
      ^bb0(%label: i64, %out: i1):
        %col = linalg.index 1 : index
        %coli = arith.index_cast %col : index to i64
        %eq = arith.cmpi eq, %label, %coli : i64
        %or = arith.ori %out, %eq : i1
        linalg.yield %or : i1
      } -> tensor<512x33xi1>
    %minus1 = arith.constant dense<-1.000000e+00> : tensor<512x33xf32>
    %zero33 = arith.constant dense<0.000000e+00> : tensor<512x33xf32>
    %sel = arith.select %onehot, %minus1, %zero33 : tensor<512x33xi1>, tensor<512x33xf32>
    %e10 = tensor.empty() : tensor<512xf32>
    %bscale = linalg.broadcast ins(%scale : tensor<f32>) outs(%e10 : tensor<512xf32>) dimensions = [0]
    %rowscale = arith.select %valid, %bscale, %zeros_f : tensor<512xi1>, tensor<512xf32>
    %e11 = tensor.empty() : tensor<512x33xf32>
    %brow = linalg.broadcast ins(%rowscale : tensor<512xf32>) outs(%e11 : tensor<512x33xf32>) dimensions = [1]
    %dnll = arith.mulf %sel, %brow : tensor<512x33xf32>
    %p = math.exp %logp : tensor<512x33xf32>
    %e12 = tensor.empty() : tensor<512xf32>
    %f12 = linalg.fill ins(%zero : f32) outs(%e12 : tensor<512xf32>) -> tensor<512xf32>
    %rs = linalg.reduce ins(%dnll : tensor<512x33xf32>) outs(%f12 : tensor<512xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %a = arith.addf %in, %acc : f32
        linalg.yield %a : f32
      }
    %e13 = tensor.empty() : tensor<512x33xf32>
    %brs = linalg.broadcast ins(%rs : tensor<512xf32>) outs(%e13 : tensor<512x33xf32>) dimensions = [1]
    %prs = arith.mulf %p, %brs : tensor<512x33xf32>
    %dlogits = arith.subf %dnll, %prs : tensor<512x33xf32>
    %e14 = tensor.empty() : tensor<33x512xf32>
    %dlt = linalg.transpose ins(%dlogits : tensor<512x33xf32>) outs(%e14 : tensor<33x512xf32>) permutation = [1, 0]
    %e15 = tensor.empty() : tensor<33x16xf32>
    %f15 = linalg.fill ins(%zero : f32) outs(%e15 : tensor<33x16xf32>) -> tensor<33x16xf32>
    %dw = linalg.matmul ins(%dlt, %h : tensor<33x512xf32>, tensor<512x16xf32>) outs(%f15 : tensor<33x16xf32>) -> tensor<33x16xf32>
    %e16 = tensor.empty() : tensor<512x16xf32>
    %f16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<512x16xf32>) -> tensor<512x16xf32>
    %dh = linalg.matmul ins(%dlogits, %w : tensor<512x33xf32>, tensor<33x16xf32>) outs(%f16 : tensor<512x16xf32>) -> tensor<512x16xf32>
    remat.yield %dw, %dh : tensor<33x16xf32>, tensor<512x16xf32>
  } : tensor<33x16xf32>, tensor<512x16xf32>
  return %loss, %g#0, %g#1 : tensor<f32>, tensor<33x16xf32>, tensor<512x16xf32>
}
