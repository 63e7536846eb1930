// Number tokens at the edges of their types. Float reads round each decimal once, directly to
// float: never through double (which rounds twice and can land on the other side of a float
// midpoint). Integers beyond 64 bits are out of range even when their leading digits fit.
//
// The strings below were found and checked by tests/matrix_io/float_rounding_cases.py (run it to
// regenerate the table): each lies a hair above (or below) the exact midpoint m of two adjacent
// floats, so close to m that its double rounding is m itself; m, a tie, then rounds to the even
// float, while the decimal rounded once goes to the float on its own side of m. The expected bit
// patterns are the decimal's exact rounding to binary32 (round half to even on the float grid,
// with Python fractions), not the output of any float conversion; the comment on each line gives
// the (wrong) pattern of the route through double.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "matrix_io/error.hpp"
#include "matrix_io/read.hpp"

namespace mio = pagh::matrix_io;

namespace {

struct Case {
  const char* text;
  std::uint32_t bits;  // the correctly rounded float
};

const Case kCases[] = {
    {"1.000000059604644775390625000001", 0x3f800001u},  // rounding via double gives 0x3f800000
    {"1.000000178813934326171874999999", 0x3f800001u},  // rounding via double gives 0x3f800002
    {"-0.09999999776482582092285156250001", 0xbdcccccdu},  // rounding via double gives 0xbdcccccc
    {"340282336497324057985868971510891282432.000000000000000000000000000001", 0x7f7fffffu},  // rounding via double gives 0x7f7ffffe
    {"3.503246160812042677309323958225790328200654854691289429392670709724477706714651503716595470905303955078125e-45", 0x00000003u},  // rounding via double gives 0x00000002
    {"1.0000001586345230730756838966034597327709197998046875e-12", 0x2b8cbccdu},  // rounding via double gives 0x2b8cbcce
};

TEST(MatrixIoFloatRounding, DecimalsRoundOnceToFloat) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.text);
    // The case is what it claims: through double it would give another float.
    ASSERT_NE(std::bit_cast<std::uint32_t>(static_cast<float>(std::strtod(c.text, nullptr))), c.bits);
    const std::string dense = std::string("%%MatrixMarket matrix array real general\n1 1\n") + c.text + "\n";
    EXPECT_EQ(std::bit_cast<std::uint32_t>(mio::parse_dense<float>(dense, "t.mtx")(0, 0)), c.bits) << "array format";
    const std::string coordinate = std::string("%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 ") + c.text + "\n";
    const Eigen::MatrixXf m(mio::parse_sparse<float, std::int64_t>(coordinate, "t.mtx"));
    EXPECT_EQ(std::bit_cast<std::uint32_t>(m(1, 0)), c.bits) << "coordinate format";
    // Doubles read the same text to its correctly rounded double (strtod's, IEEE round to nearest).
    EXPECT_EQ(mio::parse_dense<double>(dense, "t.mtx")(0, 0), std::strtod(c.text, nullptr));
  }
}

// 5 * 10^19 overflows 64 bits at its 20th digit, after 5 * 10^18, which fits int64: a reader that
// stopped accumulating at the overflow but lost track of it would return 5 * 10^18. Sizes,
// indices and integer values all go through the same token parser.
TEST(MatrixIoNumberEdges, IntegersBeyond64BitsAreOutOfRangeEvenWhenTheirPrefixFits) {
  const std::string head = "%%MatrixMarket matrix coordinate integer general\n";
  const std::pair<std::string, std::string> cases[] = {
      {head + "50000000000000000000 3 1\n1 1 1\n", "row count '50000000000000000000' is out of range"},
      {head + "3 3 1\n50000000000000000000 1 1\n", "row index '50000000000000000000' is out of range"},
      {head + "3 3 1\n1 1 50000000000000000000\n", "out of the 64-bit range"},
      {head + "3 3 1\n1 1 -50000000000000000000\n", "out of the 64-bit range"},
  };
  for (const auto& [text, message] : cases) {
    try {
      mio::parse_sparse<double, std::int64_t>(text, "t.mtx");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const mio::MatrixMarketError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

}  // namespace
