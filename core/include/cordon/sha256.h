// SHA-256 (FIPS 180-4) for artifact digests and policy hashes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cordon {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  [[nodiscard]] std::array<std::uint8_t, 32> finish();

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t buf_len_ = 0;
  std::uint64_t total_ = 0;
};

// Lower-case hex digest of `bytes`.
[[nodiscard]] std::string sha256_hex(std::string_view bytes);

}  // namespace cordon
