# Sanitizers for the whole build, set per target rather than through CMAKE_CXX_FLAGS so that
# a target can opt out (the presets `asan` and `tsan` set CORDON_SANITIZE).
#   CORDON_SANITIZE: a -fsanitize= list, e.g. "address,undefined" or "thread"; empty = none.
# A target that must not carry a sanitizer runtime calls cordon_no_sanitize(<target>): the
# static helpers (cordon-init, cordon-ns-spawner) link with -static, which the ASan
# and TSan runtimes refuse, and they run in a fresh root where no libasan.so exists.
set(CORDON_SANITIZE "" CACHE STRING "Sanitizers for every target, as -fsanitize=<list> (empty: none)")

if(CORDON_SANITIZE)
  # The flags apply to every target whose CORDON_NO_SANITIZE property is not set: the
  # generator expression is evaluated per target at generation time. One option per
  # sanitizer, so no list separator or comma sits inside a generator expression.
  set(_on "$<NOT:$<BOOL:$<TARGET_PROPERTY:CORDON_NO_SANITIZE>>>")
  string(REPLACE "," ";" _sanitizers "${CORDON_SANITIZE}")
  foreach(_s IN LISTS _sanitizers)
    add_compile_options("$<${_on}:-fsanitize=${_s}>")
    add_link_options("$<${_on}:-fsanitize=${_s}>")
  endforeach()
  # Frame pointers give the sanitizers whole stacks from their fast unwinder.
  add_compile_options("$<${_on}:-fno-omit-frame-pointer>")
  # A UBSan finding stops the process even without UBSAN_OPTIONS=halt_on_error=1.
  if("undefined" IN_LIST _sanitizers)
    add_compile_options("$<${_on}:-fno-sanitize-recover=undefined>")
  endif()
endif()

# Builds <target> without the sanitizer flags of CORDON_SANITIZE (see above).
function(cordon_no_sanitize target)
  set_target_properties(${target} PROPERTIES CORDON_NO_SANITIZE ON)
endfunction()
