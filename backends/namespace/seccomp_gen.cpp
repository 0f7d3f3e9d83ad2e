// cordon-ns-seccomp-gen: compiles the built-in cordon-default seccomp policy with
// libseccomp at BUILD time and writes it as C++ initialisers (prebuilt_seccomp.h), so a
// backend does not spend ~13 ms in libseccomp each time it is created. Run by CMake on
// the build host, which is the target host (cordon is not cross-compiled); the runtime
// still checks the architecture and the policy hash before using the result.
#include <seccomp.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cordon/policy/seccomp_compiler.h"
#include "cordon/policy/syscall_policy.h"

namespace {

// Not named `quoted`: argument-dependent lookup would find std::quoted (<iomanip>) for a
// non-const std::string, a better match, wherever <iomanip> is included (the json header
// that clang builds precompile into every TU has it: cmake/pch.cmake).
std::string cpp_literal(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string name_list(const std::vector<std::string>& names) {
  std::string out = "{";
  for (const auto& n : names) out += cpp_literal(n) + ", ";
  return out + "nullptr}";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.inc\n", argv[0]);
    return 2;
  }
  auto program = cordon::policy::compile_seccomp(cordon::policy::default_syscall_policy());
  if (!program) {
    std::fprintf(stderr, "cordon-ns-seccomp-gen: %s\n", program.error().describe().c_str());
    return 1;
  }
  std::string text =
      "// Generated at build time by cordon-ns-seccomp-gen (backends/namespace/seccomp_gen.cpp)\n"
      "// from cordon::policy::default_syscall_policy(). Do not edit.\n";
  text +=
      "inline constexpr std::uint32_t kPrebuiltArch = " + std::to_string(seccomp_arch_native()) +
      "U;\n";
  text +=
      "inline constexpr const char* kPrebuiltName = " + cpp_literal(program->policy_name) + ";\n";
  text +=
      "inline constexpr int kPrebuiltVersion = " + std::to_string(program->policy_version) + ";\n";
  text +=
      "inline constexpr const char* kPrebuiltHash = " + cpp_literal(program->policy_hash) + ";\n";
  text +=
      "inline constexpr const char* kPrebuiltUnknown[] = " + name_list(program->unknown_syscalls) +
      ";\n";
  text += "inline constexpr const char* kPrebuiltAbsent[] = " + name_list(program->absent_on_arch) +
          ";\n";
  text += "inline constexpr sock_filter kPrebuiltProgram[] = {\n";
  for (const sock_filter& f : program->instructions) {
    text += "    {" + std::to_string(f.code) + ", " + std::to_string(f.jt) + ", " +
            std::to_string(f.jf) + ", " + std::to_string(f.k) + "U},\n";
  }
  text += "};\n";

  // Write only when different, so an unchanged policy does not rebuild the plugin.
  {
    std::ifstream old(argv[1], std::ios::binary);
    const std::string current((std::istreambuf_iterator<char>(old)),
                              std::istreambuf_iterator<char>());
    if (old && current == text) return 0;
  }
  std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "cordon-ns-seccomp-gen: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
