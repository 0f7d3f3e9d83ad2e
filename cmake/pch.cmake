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

# With clang (the ci preset) a precompiled header is cheap to load, so it pays in every TU:
# clang reads a header's declarations from it lazily, as the TU uses them, where gcc maps
# the whole .gch image first. Measured 2026-12-04 (clang++-19, ci flags, CPU user+sys): a TU
# of <string> alone took 0.42 s, 0.17 s with the json header precompiled; one that uses json
# 2.6 s, 0.7 s with it (g++ 12: 3.7 s, and ~0.9 s to load the header where unused).
# Rebuilding cordon_core's 51 TUs took 139 s without a header, 60 s with the json one (15 of
# them include json; the rest save the standard headers json carries).
# So under clang every C++ target of the project without a precompiled header of its own
# takes the json one (fuzz targets, plugins, tools, cordon-init, the soak tests...), and the
# Qt targets listed with cordon_qt_pch() one with <QtWidgets> added: the inspector's
# widgets, app and QtTest suites (26 TUs and headers) took 88.8 s with the json header
# where they had one, 64.3 s with this one, its two copies (library, executables) included.
# Tried and left out: <QtGui> for the models library (Core/Gui only): 0.4-0.8 s less per TU,
# 12 TUs, for a header that took 9.8 s to make; nor the json one for cordon-init and the
# spawner (7 small TUs: 8.4 s with it, 7.6 s without, too little to add a rule for).
# A clean ci build took 796 s of CPU with clang and the g++-era headers (run beside
# another build), 514 s with these (alone; 280 s wall).
# A forced header can change what a TU's names find: json brings <iomanip>, and std::quoted
# won over a local quoted() by argument-dependent lookup (seccomp_gen.cpp, renamed since).
# An #include missing behind the header still fails the lint, and dev's g++ build where
# dev has no header.
# The lint never sees these headers: scripts/lint_cache.py strips clang's forms too.
if(CORDON_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(_cordon_pch_everywhere ON)
else()
  set(_cordon_pch_everywhere OFF)
endif()

# cordon_qt_pch(<target>...): under clang, <nlohmann/json.hpp> and <QtWidgets> precompiled
# for these targets (they must link Qt6::Widgets); elsewhere nothing.
function(cordon_qt_pch)
  if(_cordon_pch_everywhere)
    set_property(GLOBAL APPEND PROPERTY CORDON_QT_PCH_TARGETS ${ARGN})
  endif()
endfunction()

function(_cordon_all_targets dir out)
  get_directory_property(targets DIRECTORY ${dir} BUILDSYSTEM_TARGETS)
  get_directory_property(subdirs DIRECTORY ${dir} SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    _cordon_all_targets(${subdir} sub)
    list(APPEND targets ${sub})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(_cordon_pch_assign)
  get_property(json_targets GLOBAL PROPERTY CORDON_JSON_PCH_TARGETS)
  get_property(qt_targets GLOBAL PROPERTY CORDON_QT_PCH_TARGETS)
  if(qt_targets)
    list(REMOVE_ITEM json_targets ${qt_targets})  # the Qt header has json too
  endif()
  if(_cordon_pch_everywhere)
    _cordon_all_targets(${PROJECT_SOURCE_DIR} all)
    foreach(target IN LISTS all)
      get_target_property(type ${target} TYPE)
      get_target_property(own ${target} PRECOMPILE_HEADERS)
      get_target_property(reuse ${target} PRECOMPILE_HEADERS_REUSE_FROM)
      # Not the Qt ones (AUTOMOC): Qt adds -fPIC to its executables, which the kind below
      # does not see ("is pie differs in PCH file"); they are listed by name instead.
      get_target_property(qt ${target} AUTOMOC)
      # Nor a target that turned precompiled headers off (cordon-sh-preload.so: loaded into
      # the host's shell, it must carry nothing but libc, and it builds without exceptions).
      get_target_property(no_pch ${target} DISABLE_PRECOMPILE_HEADERS)
      if(type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|STATIC_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$"
         AND NOT own AND NOT reuse AND NOT qt AND NOT no_pch AND NOT target IN_LIST json_targets
         AND NOT target IN_LIST qt_targets)
        list(APPEND json_targets ${target})
      endif()
    endforeach()
  endif()
  # One header per set and kind (above); a kind of fewer than 4 TUs gets none: making the
  # header costs clang about what 3 TUs of ours take (~2.5 s of CPU).
  set(kinds "")
  foreach(set IN ITEMS json qt)
    foreach(target IN LISTS ${set}_targets)
      get_target_property(type ${target} TYPE)
      get_target_property(pic ${target} POSITION_INDEPENDENT_CODE)
      get_target_property(visibility ${target} CXX_VISIBILITY_PRESET)
      get_target_property(inlines_hidden ${target} VISIBILITY_INLINES_HIDDEN)
      get_target_property(no_sanitize ${target} CORDON_NO_SANITIZE)
      string(MAKE_C_IDENTIFIER "${set}_${type}_${pic}_${visibility}_${inlines_hidden}_${no_sanitize}"
        kind)
      get_target_property(sources ${target} SOURCES)
      list(FILTER sources INCLUDE REGEX "\\.cpp$")
      list(LENGTH sources count)
      if(NOT DEFINED _tus_${kind})
        set(_tus_${kind} 0)
      endif()
      math(EXPR _tus_${kind} "${_tus_${kind}} + ${count}")
      list(APPEND _targets_${kind} ${target})
      list(APPEND kinds ${kind})
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES kinds)
  foreach(kind IN LISTS kinds)
    if(_tus_${kind} LESS 4)
      continue()
    endif()
    list(POP_FRONT _targets_${kind} owner)
    if(kind MATCHES "^qt_")
      target_precompile_headers(${owner} PRIVATE <nlohmann/json.hpp> <QtWidgets>)
    else()
      target_precompile_headers(${owner} PRIVATE <nlohmann/json.hpp>)
    endif()
    foreach(target IN LISTS _targets_${kind})
      target_precompile_headers(${target} REUSE_FROM ${owner})
    endforeach()
  endforeach()
endfunction()
cmake_language(DEFER CALL _cordon_pch_assign)
