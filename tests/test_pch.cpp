// The owner of the test suite's precompiled header (tests/CMakeLists.txt, cordon_test_pch):
// CMake compiles the header as part of this target and every test executable reuses it. It
// has no tests of its own; gtest_main gives it a main().
