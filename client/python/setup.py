"""Build hook of the dictlog_client wheel (metadata: pyproject.toml).

While the wheel is built, generates dictlog_pb2.py(i) and dictlog_pb2_grpc.py from
proto/dictlog.proto into the wheel's dictlog_client package with grpcio-tools (a build
requirement), and makes the gRPC module import its messages from the package, as
generate.sh does for Debian's protoc. The proto is read from the checkout
(../../proto/dictlog.proto) or, in a source distribution, from proto/dictlog.proto next
to this file (the sdist command copies it there).
"""

import pathlib
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = pathlib.Path(__file__).resolve().parent
PROTO_CANDIDATES = (HERE / "proto" / "dictlog.proto",
                    HERE.parent.parent / "proto" / "dictlog.proto")
PACKAGE = "dictlog_client"


def find_proto() -> pathlib.Path:
    for candidate in PROTO_CANDIDATES:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        "dictlog.proto not found at " + " or ".join(map(str, PROTO_CANDIDATES)) +
        "; build the wheel from a dictlog checkout (client/python) or its sdist")


def generate_stubs(proto: pathlib.Path, out: pathlib.Path) -> None:
    """Writes dictlog_pb2.py (with its type stub dictlog_pb2.pyi) and dictlog_pb2_grpc.py
    for proto into out."""
    from grpc_tools import protoc  # A build requirement (pyproject.toml).
    import importlib.resources

    well_known = importlib.resources.files("grpc_tools") / "_proto"
    out.mkdir(parents=True, exist_ok=True)
    status = protoc.main([
        "grpc_tools.protoc", f"--proto_path={proto.parent}", f"--proto_path={well_known}",
        f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}", str(proto)])
    if status != 0:
        raise RuntimeError(f"grpc_tools.protoc failed on {proto} with status {status}")
    # The plugin imports the messages as a top-level module; here they are a sibling.
    grpc_module = out / "dictlog_pb2_grpc.py"
    text = grpc_module.read_text()
    fixed = text.replace("\nimport dictlog_pb2 as ", "\nfrom . import dictlog_pb2 as ", 1)
    if fixed == text:
        raise RuntimeError(f"unexpected import line in {grpc_module}")
    grpc_module.write_text(fixed)


class BuildPyWithStubs(build_py):
    """build_py, then the generated modules into the built package."""

    def run(self):
        super().run()
        generate_stubs(find_proto(), pathlib.Path(self.build_lib) / PACKAGE)


class SdistWithProto(sdist):
    """sdist carrying proto/dictlog.proto, so a wheel can be built from it alone."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        target = pathlib.Path(base_dir) / "proto" / "dictlog.proto"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(find_proto(), target)


setup(cmdclass={"build_py": BuildPyWithStubs, "sdist": SdistWithProto})
