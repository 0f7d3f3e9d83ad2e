# Precompiled headers, for CI's budget (issue #13: ~30 minutes on a shared 2-core machine).
# nlohmann/json takes ~4 s of a TU's compile here and GoogleTest ~3 s; most TUs of the
# targets below parse one or both. A target's own sources still include what they use:
# scripts/lint_cache.py hands clang-tidy each command without the forced include, so a
# missing #include fails the lint even though the build has the header precompiled.
# CORDON_PCH=OFF compiles every TU on its own. (ccache caches these TUs only when told
# `sloppiness=pch_defines,time_macros`; without it they compile uncached.)
#
# On by default in Debug builds only (CI's dev, and asan/tsan), where the time goes. An
# optimised build inlines differently with the header precompiled, and g++ 12's
# -Warray-bounds then reports a false positive in libstdc++'s string copy (seen in
# core/audit/verdict.cpp at -O2), which -Werror turns into a failed release build.
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(_cordon_pch_default ON)
else()
  set(_cordon_pch_default OFF)
endif()
option(CORDON_PCH "Precompiled headers for the targets whose TUs mostly parse the same ones"
  ${_cordon_pch_default})

# cordon_json_pch(<target>...): <nlohmann/json.hpp> precompiled once per target. Only for
# targets where most TUs include it: in the others the header's load costs more than it saves.
function(cordon_json_pch)
  if(CORDON_PCH)
    foreach(target ${ARGN})
      target_precompile_headers(${target} PRIVATE <nlohmann/json.hpp>)
    endforeach()
  endif()
endfunction()
