// The safetensors reader on hand-built buffers: dtype conversion against
// values known from the IEEE 754 / bfloat16 definitions, metadata, and a
// specific error for every kind of malformed header.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "model/config.h"
#include "safetensors/safetensors.h"
#include "tokenizer/tokenizer.h"

using attnplay::SafeTensors;

namespace {

// 8-byte little-endian header length, header, data.
std::string file_of(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string u16s(std::initializer_list<std::uint16_t> values) {
  std::string s;
  for (std::uint16_t v : values) {
    s += static_cast<char>(v & 0xff);
    s += static_cast<char>(v >> 8);
  }
  return s;
}

std::string error_of(const std::string& bytes) {
  try {
    SafeTensors::parse(bytes);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("F32, F16 and BF16 tensors convert to float32 exactly") {
  float f32[3] = {1.5f, -2.25f, 3e-38f};
  std::string data(reinterpret_cast<const char*>(f32), sizeof f32);
  data += u16s({0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x7C00, 0xFC00, 0x8000});  // F16
  data += u16s({0x3F80, 0xC049, 0x0001});                                         // BF16
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
      R"("h":{"dtype":"F16","shape":[2,4],"data_offsets":[12,28]},)"
      R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[28,34]},"__metadata__":{"format":"pt"}})";
  const std::string bytes = file_of(header, data);
  const SafeTensors st = SafeTensors::parse(bytes);
  CHECK(st.tensors().size() == 3);
  CHECK(st.metadata().at("format") == "pt");
  CHECK(st.info("h").shape == std::vector<std::int64_t>{2, 4});
  CHECK(st.to_float("a") == std::vector<float>{1.5f, -2.25f, 3e-38f});
  const std::vector<float> h = st.to_float("h");
  CHECK(h[0] == 1.0f);
  CHECK(h[1] == -2.0f);
  CHECK(h[2] == 65504.0f);                          // largest half
  CHECK(h[3] == std::ldexp(1.0f, -24));             // smallest subnormal
  CHECK(h[4] == std::ldexp(1023.0f, -24));          // largest subnormal
  CHECK(h[5] == std::numeric_limits<float>::infinity());
  CHECK(h[6] == -std::numeric_limits<float>::infinity());
  CHECK((h[7] == 0.0f && std::signbit(h[7])));      // -0
  const std::vector<float> b = st.to_float("b");
  CHECK(b[0] == 1.0f);
  CHECK(b[1] == -3.140625f);
  CHECK(b[2] == std::ldexp(1.0f, -133));            // smallest bfloat16 subnormal
  CHECK(std::isnan(attnplay::half_to_float(0x7E00)));
}

TEST_CASE("every half-precision bit pattern matches the IEEE formula") {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const int sign = (bits >> 15) ? -1 : 1;
    const int exponent = (bits >> 10) & 0x1f;
    const int mantissa = bits & 0x3ff;
    if (exponent == 0x1f) continue;  // inf / NaN checked above
    const double expected = exponent == 0 ? sign * std::ldexp(mantissa, -24)
                                          : sign * std::ldexp(1024 + mantissa, exponent - 25);
    REQUIRE(attnplay::half_to_float(static_cast<std::uint16_t>(bits)) == static_cast<float>(expected));
  }
}

TEST_CASE("a scalar and an empty tensor are valid") {
  const std::string bytes = file_of(
      R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"e":{"dtype":"F32","shape":[0,5],"data_offsets":[4,4]}})",
      std::string("\0\0\x80\x3f", 4));
  const SafeTensors st = SafeTensors::parse(bytes);
  CHECK(st.to_float("s") == std::vector<float>{1.0f});
  CHECK(st.to_float("e").empty());
}

TEST_CASE("malformed files get specific errors") {
  const std::string four_bytes(4, '\0');
  const auto entry = [](const std::string& body) { return file_of("{\"t\":" + body + "}", std::string(8, '\0')); };
  CHECK(error_of("abc").find("too short") != std::string::npos);
  CHECK(error_of(file_of("{}", "").substr(0, 9)).find("beyond the file size") != std::string::npos);
  std::string huge = file_of("{}", "");
  huge[7] = '\x7f';
  CHECK(error_of(huge).find("beyond the file size") != std::string::npos);
  CHECK(error_of(file_of("{not json", "")).find("not valid JSON") != std::string::npos);
  CHECK(error_of(file_of("[1,2]", "")).find("not a JSON object") != std::string::npos);
  CHECK(error_of(entry(R"({"dtype":"F7","shape":[2],"data_offsets":[0,8]})")).find("unknown dtype 'F7'") !=
        std::string::npos);
  CHECK(error_of(entry(R"({"dtype":"F32","shape":[2],"data_offsets":[0,80]})")).find("beyond the 8 bytes") !=
        std::string::npos);
  CHECK(error_of(entry(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})")).find("begin after end") !=
        std::string::npos);
  CHECK(error_of(entry(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})")).find("need 12") !=
        std::string::npos);
  CHECK(error_of(entry(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]})"))
            .find("more than the file holds") != std::string::npos);
  CHECK(error_of(entry(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})")).find("non-negative integer") !=
        std::string::npos);
  CHECK(error_of(entry(R"({"dtype":"F32","shape":[2.5],"data_offsets":[0,8]})")).find("non-negative integer") !=
        std::string::npos);
  CHECK(error_of(entry(R"({"dtype":"F32","shape":[2]})")).find("no \"data_offsets\"") != std::string::npos);
  CHECK(error_of(entry(R"({"dtype":"F32","shape":[2],"data_offsets":[0]})")).find("[begin, end]") !=
        std::string::npos);
  CHECK(error_of(entry("7")).find("not an object") != std::string::npos);
  CHECK(error_of(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                         std::string(8, '\0')))
            .find("'a' and 'b' overlap") != std::string::npos);
  CHECK(error_of(file_of(R"({"__metadata__":{"n":1}})", "")).find("not a string") != std::string::npos);
  // PyTorch checkpoints: a zip archive or a raw pickle.
  CHECK(error_of(std::string("PK\x03\x04", 4) + std::string(60, 'x')).find("PyTorch pickle") != std::string::npos);
  CHECK(error_of(std::string("\x80\x02}q\x00(X", 7) + std::string(60, 'x')).find("safe_serialization") !=
        std::string::npos);
}

TEST_CASE("integer tensors are listed but not converted") {
  const std::string bytes = file_of(R"({"i":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", std::string(8, '\0'));
  const SafeTensors st = SafeTensors::parse(bytes);
  CHECK(st.info("i").dtype == "I64");
  CHECK_THROWS_WITH_AS(st.to_float("i"), doctest::Contains("only F32, F16 and BF16"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(st.info("missing"), doctest::Contains("no tensor named 'missing'"), std::invalid_argument);
}

TEST_CASE("JSON with a number out of range is a readable error in every parser (found by libFuzzer)") {
  const std::string huge = R"({"model_type": "gpt2", "n_embd": 1e412})";
  CHECK_THROWS_AS(attnplay::parse_config(huge), std::invalid_argument);
  std::string file(8, '\0');
  const std::string header = R"({"a": {"dtype": "F32", "shape": [1e412], "data_offsets": [0, 4]}})";
  file[0] = static_cast<char>(header.size());
  file += header;
  file += std::string(4, '\0');
  CHECK_THROWS_AS(attnplay::SafeTensors::parse(file), std::invalid_argument);
  CHECK_THROWS_AS(attnplay::Tokenizer::from_json(R"({"version": 1e999})"), std::invalid_argument);
}
