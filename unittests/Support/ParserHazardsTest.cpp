//===- ParserHazardsTest.cpp - Inputs MLIR 22's parser crashes on ---------===//
//
// remat::findParserHazard on the forms MLIR 22's parser crashes on, and on
// valid IR that merely looks like them: the valid inputs also parse with
// MLIR's parser, so the scan rejects nothing MLIR accepts.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/ParserHazards.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

/// A function around `body`, with %x : tensor<2x3xf32>, %v : tensor<3xf32>
/// and the destinations %t : tensor<3x2xf32>, %b : tensor<2x3xf32>,
/// %r : tensor<2xf32>.
std::string wrap(const std::string &body) {
  return "func.func @f(%x: tensor<2x3xf32>, %v: tensor<3xf32>, "
         "%t: tensor<3x2xf32>, %b: tensor<2x3xf32>, %r: tensor<2xf32>) {\n" +
         body + "\n  return\n}\n";
}

/// Where the hazard of `text` starts, as the text from there on.
std::string hazardAt(const std::string &text) {
  std::optional<remat::ParserHazard> hazard = remat::findParserHazard(text);
  return hazard ? text.substr(hazard->offset) : "";
}

const char *const kTranspose =
    "  %0 = linalg.transpose ins(%x : tensor<2x3xf32>) "
    "outs(%t : tensor<3x2xf32>) permutation = ";
const char *const kBroadcast =
    "  %0 = linalg.broadcast ins(%v : tensor<3xf32>) "
    "outs(%b : tensor<2x3xf32>) dimensions = ";
const char *const kReduce = "  %0 = linalg.reduce ins(%x : tensor<2x3xf32>) "
                            "outs(%r : tensor<2xf32>) dimensions = ";
const char *const kReduceBody = " (%a: f32, %c: f32) {\n"
                                "    %s = arith.addf %a, %c : f32\n"
                                "    linalg.yield %s : f32\n  }";

TEST(ParserHazardsTest, ListsThatAreNotPlainIntegerLists) {
  for (const char *prefix : {kTranspose, kBroadcast, kReduce}) {
    for (const char *list :
         {"1", "array<i64: 1, 0>", "[1, ]", "[1", "[a]", "[1.5]", "", "[[1]]",
          "[99999999999999999999]", "// [1, 0]\n"}) {
      std::string text = wrap(std::string(prefix) + list);
      std::string at = hazardAt(text);
      EXPECT_TRUE(StringRef(at).starts_with("permutation =") ||
                  StringRef(at).starts_with("dimensions ="))
          << text;
    }
  }
}

TEST(ParserHazardsTest, IteratorTypesThatAreNotStrings) {
  for (const char *types :
       {"[#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]",
        "[\"parallel\", 1]", "[1, 2]"}) {
    std::string text = wrap(
        std::string("  %0 = linalg.generic {indexing_maps = [affine_map<(i, "
                    "j) -> (i, j)>], iterator_types = ") +
        types +
        "} outs(%b : tensor<2x3xf32>) {\n  ^bb0(%o: f32):\n    linalg.yield "
        "%o : f32\n  } -> tensor<2x3xf32>");
    EXPECT_TRUE(StringRef(hazardAt(text)).starts_with("iterator_types ="))
        << text;
  }
}

TEST(ParserHazardsTest, ListsTheVerifierRejects) {
  // Integers that fit an i64 parse; the op's verifier rejects the list.
  EXPECT_EQ(
      hazardAt(wrap(std::string(kTranspose) + "[-1, 1234567890123456789]")),
      "");
}

TEST(ParserHazardsTest, PropertiesThatAreNotDictionaries) {
  // MLIR's lexer skips a NUL byte inside the buffer as it skips a space.
  for (std::string properties :
       {std::string("<1>"), std::string("<\"x\">"), std::string("< [1] >"),
        std::string("<>"), std::string("<"), std::string("\0<1>", 4)}) {
    std::string text =
        wrap(std::string("  %0 = linalg.fill ") + properties +
             " ins(%c : f32) outs(%b : tensor<2x3xf32>) -> tensor<2x3xf32>");
    EXPECT_EQ(hazardAt(text).substr(0, 1), "<") << text;
  }
}

TEST(ParserHazardsTest, ValidFormsParse) {
  DialectRegistry registry;
  registry.insert<arith::ArithDialect, func::FuncDialect, linalg::LinalgDialect,
                  tensor::TensorDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // MLIR's own diagnostics would only say why a case does not parse.
  context.printOpOnDiagnostic(false);
  const std::string cases[] = {
      std::string(kTranspose) + "[1, 0]",
      std::string(kTranspose) + "[ 1 ,\n 0 ] // a comment",
      std::string(kBroadcast) + "[0]",
      std::string(kReduce) + "[1]" + kReduceBody,
      // The generic form, where the attribute is a property.
      "  %0 = \"linalg.transpose\"(%x, %t) <{permutation = array<i64: 1, 0>}> "
      "({\n  ^bb0(%a: f32, %c: f32):\n    linalg.yield %a : f32\n  }) : "
      "(tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>",
      // A properties dictionary on a named op.
      "  %c = arith.constant 1.0 : f32\n"
      "  %0 = linalg.fill <{}> ins(%c : f32) outs(%b : tensor<2x3xf32>) -> "
      "tensor<2x3xf32>",
      // Lookalikes in names, attributes, strings and comments.
      "  %c = arith.constant {note = \"linalg.fill <1> permutation = 1\"} "
      "1.0 : f32\n"
      "  // linalg.transpose ins() outs() permutation = 1\n"
      "  %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], "
      "iterator_types = [\"parallel\", \"parallel\"], note = "
      "[#linalg.iterator_type<parallel>]} outs(%b : tensor<2x3xf32>) {\n"
      "  ^bb0(%o: f32):\n    linalg.yield %c : f32\n  } -> tensor<2x3xf32>",
  };
  for (const std::string &body : cases) {
    std::string text = wrap(body);
    EXPECT_EQ(hazardAt(text), "") << text;
    EXPECT_TRUE(parseSourceString<ModuleOp>(text, &context)) << text;
  }
}

} // namespace
