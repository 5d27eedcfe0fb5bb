"""Offline stand-in for rules_java: the native rules of Bazel 4."""

java_binary = native.java_binary
java_import = native.java_import
java_library = native.java_library
java_runtime = native.java_runtime
java_toolchain = native.java_toolchain
java_proto_library = native.java_proto_library
java_test = native.java_test
