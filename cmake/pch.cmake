# Precompiled headers, for CI's budget (issue #13: ~30 minutes on a shared 2-core machine).
# nlohmann/json takes ~4 s of a TU's compile here and GoogleTest ~3 s; most TUs of the
# targets below parse one or both. A target's own sources still include what they use:
# scripts/lint_cache.py hands clang-tidy each command without the forced include, so a
# missing #include fails the lint even though the build has the header precompiled.
# CORDON_PCH=OFF compiles every TU on its own. (ccache caches these TUs only when told
# `sloppiness=pch_defines,time_macros`; without it they compile uncached.)
#
# Tried and left out (2026-12-04, each A/B on the same targets from the same objects): a
# header of json and the Qt headers for the inspector's widgets, app and QtTest suites (178.9
# -> 205.9 s of CPU, wall time 106 -> 193 s: its ~220 MB took longer to load than the
# parsing it saved, and every TU waited for it), and the json header for the fuzz targets
# (85.3 -> 86.7 s of CPU, wall 81 -> 125 s). Loading a header is not free: measure first.
#
# On by default in Debug builds only (CI's dev, and asan/tsan), where the time goes. An
# optimised build inlines differently with the header precompiled, and g++ 12's
# -Warray-bounds then reports a false positive in libstdc++'s string copy (seen in
# audit/verdict.cpp at -O2), which -Werror turns into a failed release build.
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(_cordon_pch_default ON)
else()
  set(_cordon_pch_default OFF)
endif()
option(CORDON_PCH "Precompiled headers for the targets whose TUs mostly parse the same ones"
  ${_cordon_pch_default})

# cordon_json_pch(<target>...): <nlohmann/json.hpp> precompiled for these targets. Only for
# targets where most TUs include it: in the others the header's load costs more than it saves.
#
# One header serves every such target compiled alike (issue #13: CI's build made one per
# target, seven, at ~7 s of CPU each): the first target of each kind owns it and the others
# take it with REUSE_FROM. The kinds are what gcc checks or what changes the header's code:
# PIC or PIE, default or hidden visibility, sanitized or not. The targets' definitions and
# include paths may differ (Qt's, cpp-httplib's): json.hpp reads none of them. gcc drops a
# header made with other flags and says so under -Winvalid-pch, an error with CORDON_WERROR.
# The owners are chosen at the end of the configure step, when the targets' properties
# (visibility, set after this call in some CMakeLists) are final.
function(cordon_json_pch)
  if(CORDON_PCH)
    set_property(GLOBAL APPEND PROPERTY CORDON_JSON_PCH_TARGETS ${ARGN})
  endif()
endfunction()

function(_cordon_json_pch_assign)
  get_property(targets GLOBAL PROPERTY CORDON_JSON_PCH_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(pic ${target} POSITION_INDEPENDENT_CODE)
    get_target_property(visibility ${target} CXX_VISIBILITY_PRESET)
    get_target_property(inlines_hidden ${target} VISIBILITY_INLINES_HIDDEN)
    get_target_property(no_sanitize ${target} CORDON_NO_SANITIZE)
    string(MAKE_C_IDENTIFIER "${type}_${pic}_${visibility}_${inlines_hidden}_${no_sanitize}" kind)
    if(DEFINED _owner_${kind})
      target_precompile_headers(${target} REUSE_FROM ${_owner_${kind}})
    else()
      target_precompile_headers(${target} PRIVATE <nlohmann/json.hpp>)
      set(_owner_${kind} ${target})
    endif()
  endforeach()
endfunction()
cmake_language(DEFER CALL _cordon_json_pch_assign)
