// Not a test: a reproducer for fuzz/remat-fuzz (not remat-opt, which gives
// each -split-input-file chunk a context of its own). The harness parses the
// three chunks below one after the other in one MLIRContext (threading
// disabled); all three fail to parse, and the third aborts under ASan with a
// use-after-poison in MLIR's parser: Operation::create -> NamedAttrList(
// DictionaryAttr) reads past the storage of a #remat.plan attribute, in the
// slab its PlanAttrStorage::construct allocated. It needs the long policy of
// the first chunk, the top-level ops of the second and the plan of the third;
// no remat pass runs. Found by bench/fuzz on 2026-11-26 (five crash inputs of
// this one class in 30 minutes); the cause is not found yet.
//   build-fuzz/bin/remat-fuzz fuzz/known/plan-attr-after-failed-parses.mlir
func.func @empty_policy(%x: tensor<4xf32>) -> tensor<4xf32> attributes {remat.plan = #remat.plan<policy = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", segments = 1>} {
}
    l)nalg.yield %c : i64
// -----
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(ndex
// -----
func.func @empty_policy(%x: tensor<4xf32>) -> tensor<4xf32> attributes {remat.plan = #remat.plan<policy = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@aaaaaaaaaaaaaaaaaaa", segments = 1>} {