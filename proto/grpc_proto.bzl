"""Generates C++ and Python gRPC code with Debian's protoc and plugins.

Bazel 4's native proto rules would need a protobuf source tree; this macro
uses /usr/bin/protoc instead, so the build stays offline.
"""

_PROTOC = "/usr/bin/protoc"

def grpc_proto_library(name, src, deps = [], visibility = None):
    """Declares `<name>_cc` (cc_library) and `<name>_py` (py_library).

    Args:
      name: prefix of the generated targets.
      src: the .proto file, in this package.
      deps: labels of the grpc_proto_library targets (their `name`) whose
        .proto files `src` imports, in this package.
      visibility: visibility of both libraries.
    """
    imported = [dep + "_src" for dep in deps]
    native.filegroup(
        name = name + "_src",
        srcs = [src] + imported,
        visibility = visibility,
    )
    base = src[:-len(".proto")]
    cc_outs = [
        base + ".pb.h",
        base + ".pb.cc",
        base + ".grpc.pb.h",
        base + ".grpc.pb.cc",
    ]
    native.genrule(
        name = name + "_cc_gen",
        srcs = [src] + imported,
        outs = cc_outs,
        cmd = (_PROTOC + " -I. --cpp_out=$(GENDIR) --grpc_out=$(GENDIR) " +
               "--plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin " +
               "$(location " + src + ")"),
    )
    native.cc_library(
        name = name + "_cc",
        srcs = [base + ".pb.cc", base + ".grpc.pb.cc"],
        hdrs = [base + ".pb.h", base + ".grpc.pb.h"],
        deps = ["@system//:grpc++"] + [dep + "_cc" for dep in deps],
        visibility = visibility,
    )

    py_outs = [base + "_pb2.py", base + "_pb2_grpc.py"]
    native.genrule(
        name = name + "_py_gen",
        srcs = [src] + imported,
        outs = py_outs,
        cmd = (_PROTOC + " -I. --python_out=$(GENDIR) --grpc_python_out=$(GENDIR) " +
               "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin " +
               "$(location " + src + ")"),
    )
    native.py_library(
        name = name + "_py",
        srcs = py_outs,
        deps = [dep + "_py" for dep in deps],
        visibility = visibility,
    )
