// The program a prestarted python3 runs while it waits for its code
// (NamespaceOptions::prestart_python): `python3 -c <kPythonLoader>`, the same interpreter,
// flags, environment, cwd, rlimits and stdio as the run's own `python3 -c <code>` would
// have, so everything Python sets up at start-up (sys.path, sys.flags, os.environ, the
// stdio objects, site) is what a fresh run gets.
//
// It says it is ready on fd 4 and closes it, reads the code from fd 3 until EOF (the init
// writes it there when the run's order comes), closes fd 3, and runs it as `-c` code: decoded and
// compiled as pymain_run_command does (UTF-8 with surrogateescape, coding cookie ignored, file name
// "<string>", no inherited future flags), in __main__'s own dict, from which the loader's one name
// is removed first (nothing else of the loader is left in it: same keys, same order). What an
// exception does is left to CPython's own top level (excepthook, SystemExit's code,
// KeyboardInterrupt's SIGINT exit, atexit, flushing), after the loader's frame is cut
// from the traceback: a bare `raise` does not put the frame back, so the printed
// traceback is a fresh run's. A compile error (and the decode error pymain reports) gets
// no traceback at all, as there. It imports nothing new (sys and posix are loaded at
// start-up). sys.orig_argv is set to what a fresh run's would be.
//
// What still differs from a fresh run (docs/ARCHITECTURE.md): the loader's frame is below
// the code's (sys._getframe(1), traceback.print_stack, inspect.stack show one more
// `<string>` frame; recursion reaches two levels less deep); /proc/self/cmdline shows the
// loader; the process started earlier (its start time, not the code's CPU time).
#pragma once

#include <string_view>

namespace cordon::ns {

inline constexpr std::string_view kPythonLoader = R"PY(def _cordon_take():
    import sys
    posix = sys.modules['posix']
    main = sys.modules['__main__'].__dict__
    del main['_cordon_take']
    posix.write(4, b'r')
    posix.close(4)
    chunks = []
    while True:
        chunk = posix.read(3, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    posix.close(3)
    src = b''.join(chunks).decode('utf-8', 'surrogateescape')
    sys.orig_argv = [sys.orig_argv[0], '-c', src]
    try:
        src.encode('utf-8')
    except UnicodeEncodeError as e:
        sys.stderr.write('Unable to decode the command from the command line:\n')
        e.__traceback__ = None
        raise
    try:
        return compile(src, '<string>', 'exec', dont_inherit=True), main
    except BaseException as e:
        e.__traceback__ = None
        raise
try:
    exec(*_cordon_take())
except BaseException:
    __import__('sys').exc_info()[1].__traceback__ = __import__('sys').exc_info()[1].__traceback__.tb_next
    raise
)PY";

// A prestarted shell (NamespaceOptions::prestart_sh) is the run's own `sh -c`, with this as
// its argv[2] until the library it preloads from fd 5 (preload/sh_preload.cpp) puts the
// run's code there, before the shell's main(). /proc/self/cmdline keeps showing it, so it
// says what happened; should the library not have run, the shell runs it: it exits without
// the ready byte, and the prestart fails.
inline constexpr std::string_view kShPlaceholder =
    ": cordon started this shell before its code and handed the code over on fd 3; exit 127";
inline constexpr std::string_view kShPreloadVariable = "LD_PRELOAD=/proc/self/fd/5";

}  // namespace cordon::ns
