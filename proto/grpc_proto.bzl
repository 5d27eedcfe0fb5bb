"""Generates C++ and Python gRPC code with Debian's protoc and plugins.

Bazel 4's native proto rules would need a protobuf source tree; this macro
uses /usr/bin/protoc instead, so the build stays offline.
"""

_PROTOC = "/usr/bin/protoc"

def grpc_proto_library(name, src, deps = [], visibility = None,
                       import_root = ""):
    """Declares `<name>_cc` (cc_library) and `<name>_py` (py_library).

    Args:
      name: prefix of the generated targets.
      src: the .proto file, in this package.
      deps: labels of the grpc_proto_library targets (their `name`) whose
        .proto files `src` imports, in this package.
      visibility: visibility of both libraries.
      import_root: "" (the workspace: the file is known as
        "proto/tailgate/v1/x.proto" and imports others by such paths), or
        the workspace directory its imports are relative to, such as
        "proto" (known as "tailgate/v1/x.proto", as buf, whose module root
        is proto/, sees it); its C++ headers are then included by that
        path too ("tailgate/v1/x.pb.h"), its Python modules imported as
        tailgate.v1.x_pb2.
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
    root = import_root if import_root else "."
    out = "$(GENDIR)/" + import_root if import_root else "$(GENDIR)"

    # From this package up to the import root: Python imports the generated
    # modules from there.
    up = "/".join([".." for _ in native.package_name().split("/")])
    imports = [up + "/" + import_root] if import_root else []
    native.genrule(
        name = name + "_cc_gen",
        srcs = [src] + imported,
        outs = cc_outs,
        cmd = (_PROTOC + " -I" + root + " --cpp_out=" + out +
               " --grpc_out=" + out + " " +
               "--plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin " +
               "$(location " + src + ")"),
    )
    native.cc_library(
        name = name + "_cc",
        srcs = [base + ".pb.cc", base + ".grpc.pb.cc"],
        hdrs = [base + ".pb.h", base + ".grpc.pb.h"],
        # The generated files include each other by their path from the
        # import root, and so do their users.
        strip_include_prefix = ("/" + import_root) if import_root else None,
        deps = ["@system//:grpc++"] + [dep + "_cc" for dep in deps],
        visibility = visibility,
    )

    py_outs = [base + "_pb2.py", base + "_pb2_grpc.py"]
    native.genrule(
        name = name + "_py_gen",
        srcs = [src] + imported,
        outs = py_outs,
        cmd = (_PROTOC + " -I" + root + " --python_out=" + out +
               " --grpc_python_out=" + out + " " +
               "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin " +
               "$(location " + src + ")"),
    )
    native.py_library(
        name = name + "_py",
        srcs = py_outs,
        imports = imports,
        deps = [dep + "_py" for dep in deps],
        visibility = visibility,
    )
