#include "cordon/sha256.h"

#include <gtest/gtest.h>

#include <string>

#include "cordon/text.h"

namespace cordon {
namespace {

std::string hex(const std::array<std::uint8_t, 32>& digest) {
  return hex_encode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

// FIPS 180-4 example vectors (NIST CSRC "SHA256.pdf" / "SHA2_Additional").
TEST(Sha256, Vectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
                       "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, MillionAsInUnevenChunks) {
  Sha256 hash;
  const std::string chunk(997, 'a');  // a prime: chunks straddle block boundaries
  std::size_t left = 1'000'000;
  while (left > 0) {
    const std::size_t n = std::min(left, chunk.size());
    hash.update(std::string_view(chunk).substr(0, n));
    left -= n;
  }
  EXPECT_EQ(hex(hash.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, ChunkingDoesNotMatter) {
  std::string data;
  for (int i = 0; i < 300; ++i) data += static_cast<char>(i * 7);
  const std::string whole = sha256_hex(data);
  // Lengths around the 55/56/64-byte padding edges, in every split.
  for (std::size_t len : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 119u, 120u, 128u, 300u}) {
    const std::string_view prefix = std::string_view(data).substr(0, len);
    const std::string expected = sha256_hex(prefix);
    for (std::size_t split = 0; split <= len; split += 13) {
      Sha256 hash;
      hash.update(prefix.substr(0, split));
      hash.update(prefix.substr(split));
      EXPECT_EQ(hex(hash.finish()), expected) << len << "/" << split;
    }
  }
  EXPECT_EQ(whole, sha256_hex(data));
}

}  // namespace
}  // namespace cordon
