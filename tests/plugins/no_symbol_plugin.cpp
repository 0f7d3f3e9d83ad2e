// A shared library that looks like a plugin by name but exports no entry point.
extern "C" __attribute__((visibility("default"))) int cordon_not_the_entry() { return 42; }
