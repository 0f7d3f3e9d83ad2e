#include "cordon/sha256.h"

#include <openssl/evp.h>

#include <new>

#include "cordon/text.h"

namespace cordon {

// libcrypto's digest context, freed with it. EVP picks the CPU's SHA extensions where it
// has them, which matters for environment trees of hundreds of MiB.
struct Sha256::Context {
  Context() : md(EVP_MD_CTX_new()) {
    if (md == nullptr || EVP_DigestInit_ex(md, EVP_sha256(), nullptr) != 1) {
      EVP_MD_CTX_free(md);
      throw std::bad_alloc();
    }
  }
  ~Context() { EVP_MD_CTX_free(md); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  EVP_MD_CTX* md;
};

Sha256::Sha256() : ctx_(std::make_unique<Context>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::string_view bytes) {
  // Only a context that was never initialised fails; the constructor made sure it was.
  EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size());
}

std::array<std::uint8_t, 32> Sha256::finish() {
  std::array<std::uint8_t, 32> out{};
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_->md, out.data(), &n);
  return out;
}

std::string Sha256::finish_hex() {
  const auto digest = finish();
  return hex_encode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.finish_hex();
}

}  // namespace cordon
