// SHA-256 for artifact digests, policy hashes, audit keys and environment trees: libcrypto's
// (OpenSSL's EVP), not one of cordon's own. One way to hash, used by core and front ends.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cordon {

class Sha256 {
 public:
  // Throws std::bad_alloc when libcrypto cannot allocate its context (its only failure).
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  // The digest; the object is spent afterwards.
  [[nodiscard]] std::array<std::uint8_t, 32> finish();
  // finish() as lower-case hex.
  [[nodiscard]] std::string finish_hex();

 private:
  struct Context;
  std::unique_ptr<Context> ctx_;
};

// Lower-case hex digest of `bytes`.
[[nodiscard]] std::string sha256_hex(std::string_view bytes);

}  // namespace cordon
