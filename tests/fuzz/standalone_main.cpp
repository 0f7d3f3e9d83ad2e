// A main() for libFuzzer targets where libFuzzer is not at hand (gcc): runs every file of
// the seed corpus through LLVMFuzzerTestOneInput, then a fixed number of deterministic
// pseudo-random mutations of those files (byte flips, inserts, erases, truncations,
// splices, duplicated chunks). Deterministic so a failure reproduces: the same seed, the
// same inputs. It only feeds inputs; a crash, a sanitizer report or a failed assert in the
// target is what fails the test.
//
//   NAME_fuzz [CORPUS_DIR] [ITERATIONS]   (defaults: the source tree's corpus/NAME, 5000)
//   NAME_fuzz FILE                        (one input, e.g. a crash to reproduce)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kMaxInput = 64 * 1024;  // mutations never grow past this
constexpr unsigned long kDefaultIterations = 5000;

Bytes read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// xorshift64*: small, fast and the same on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed != 0 ? seed : 1) {}
  std::uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1DULL;
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t state_;
};

// Bytes that matter to the text formats the targets parse (JSON, protocol lines): a
// random byte rarely makes a structurally new input, these often do.
const char* const kTokens[] = {"{",       "}",        "[",     "]",     "\"",     ":",     ",",
                               "null",    "true",     "false", "0",     "-1",     "1e309", "0.5",
                               "\\u0000", "\\ud800",  "\n",    "\"\":", "{\"\":", "[[[[",  "]]]]",
                               "\xff",    "\xc3\xa9", "=",     "/",     ".."};

void mutate(Bytes& input, const std::vector<Bytes>& corpus, Rng& rng) {
  const int rounds = 1 + static_cast<int>(rng.below(4));
  for (int r = 0; r < rounds; ++r) {
    const std::size_t at = rng.below(input.size() + 1);
    switch (rng.below(7)) {
      case 0:  // flip a bit
        if (!input.empty()) input[rng.below(input.size())] ^= 1u << rng.below(8);
        break;
      case 1:  // insert random bytes
        for (std::size_t n = 1 + rng.below(4); n > 0; --n) {
          input.insert(input.begin() + static_cast<std::ptrdiff_t>(at),
                       static_cast<std::uint8_t>(rng.next()));
        }
        break;
      case 2: {  // erase a range
        const std::size_t n = std::min(input.size() - std::min(at, input.size()), 1 + rng.below(8));
        input.erase(input.begin() + static_cast<std::ptrdiff_t>(at),
                    input.begin() + static_cast<std::ptrdiff_t>(at + n));
        break;
      }
      case 3:  // truncate
        input.resize(at);
        break;
      case 4: {  // splice: this input's head, another's tail
        const Bytes& other = corpus[rng.below(corpus.size())];
        const std::size_t from = rng.below(other.size() + 1);
        input.resize(at);
        input.insert(input.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
      case 5: {  // duplicate a chunk
        if (input.empty()) break;
        const std::size_t from = rng.below(input.size());
        const std::size_t n = std::min(input.size() - from, 1 + rng.below(32));
        const Bytes chunk(input.begin() + static_cast<std::ptrdiff_t>(from),
                          input.begin() + static_cast<std::ptrdiff_t>(from + n));
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(rng.below(input.size() + 1)),
                     chunk.begin(), chunk.end());
        break;
      }
      default: {  // insert a token
        const std::string token = kTokens[rng.below(std::size(kTokens))];
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), token.begin(), token.end());
        break;
      }
    }
    if (input.size() > kMaxInput) input.resize(kMaxInput);
  }
}

void run_one(const Bytes& input) { LLVMFuzzerTestOneInput(input.data(), input.size()); }

// The seed corpus of the binary NAME_fuzz: corpus/NAME/ of the source tree. Found from the
// binary's own name because this file is compiled once for every target (CMakeLists.txt).
fs::path default_corpus_dir(const char* argv0) {
  std::string name = fs::path(argv0).filename().string();
  const std::string_view suffix = "_fuzz";
  if (name.ends_with(suffix)) name.resize(name.size() - suffix.size());
  return fs::path(CORDON_FUZZ_CORPUS_ROOT) / name;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path corpus_dir = argc > 1 ? fs::path(argv[1]) : default_corpus_dir(argc > 0 ? argv[0] : "");
  unsigned long iterations = kDefaultIterations;
  if (argc > 2) iterations = std::strtoul(argv[2], nullptr, 10);

  if (fs::is_regular_file(corpus_dir)) {  // reproduce one input
    run_one(read_all(corpus_dir));
    std::printf("ran 1 input\n");
    return 0;
  }
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(corpus_dir, ec)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  if (ec || files.empty()) {
    std::fprintf(stderr, "no seed corpus in %s\n", corpus_dir.c_str());
    return 2;
  }
  std::ranges::sort(files);  // the order, and so every mutation, is the same each run
  std::vector<Bytes> corpus;
  for (const fs::path& f : files) {
    corpus.push_back(read_all(f));
    run_one(corpus.back());
  }
  Rng rng(0x636f72646f6e);  // "cordon"
  for (unsigned long i = 0; i < iterations; ++i) {
    Bytes input = corpus[rng.below(corpus.size())];
    mutate(input, corpus, rng);
    run_one(input);
  }
  std::printf("ran %zu seeds and %lu mutations\n", corpus.size(), iterations);
  return 0;
}
