# The linker, for CI's budget (issue #13: ~30 minutes on a shared 2-core machine). The `ci`
# build has 116 link steps (executables, libraries, plugins; each test's includes its
# gtest_discover_tests listing). Relinking all of them from the same objects took 78.5 s of
# CPU (user+sys) with GNU ld and 31.5 s with LLVM's lld (Debian's `lld`, installed by
# scripts/install-deps.sh); in a clean ci build their job time fell from 240 s to 91 s
# (2026-12-04, ccache off, the machine shared with another build).
#
# CORDON_LINKER=lld (or gold, bfd) is set by the dev preset, and so the ci preset; empty
# (the default, and the release, asan, tsan and fuzz presets) leaves the compiler's default,
# GNU ld, so that what is shipped and what the sanitizers' runtimes were tested with does
# not change. A linker the compiler cannot use (not installed) is reported and skipped:
# the build then links with the default, only slower.
set(CORDON_LINKER "" CACHE STRING "Linker for -fuse-ld= (lld, gold, bfd); empty: the compiler's default")

if(CORDON_LINKER)
  include(CheckLinkerFlag)
  # The result is cached per linker name, so a changed CORDON_LINKER is checked again.
  string(MAKE_C_IDENTIFIER "CORDON_LINKER_WORKS_${CORDON_LINKER}" _cordon_linker_works)
  check_linker_flag(CXX "-fuse-ld=${CORDON_LINKER}" ${_cordon_linker_works})
  if(${_cordon_linker_works})
    # Every executable, shared library and plugin of this build; not exported: an installed
    # cordon's users (find_package(cordon)) link with their own.
    add_link_options("-fuse-ld=${CORDON_LINKER}")
  else()
    message(WARNING "CORDON_LINKER=${CORDON_LINKER}: the compiler cannot link with it "
                    "(not installed? scripts/install-deps.sh); using the default linker")
  endif()
endif()
