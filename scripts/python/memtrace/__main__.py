"""The memtrace command from Python: `python -m memtrace run -- CMD`, and
the `memtrace` command that pip installs. Runs the shell front end
(scripts/memtrace) that sits in this package (a wheel), in the prefix
(meson install) or in the source tree, which finds libmemtrace.so and
memtrace-report beside itself."""
import os
import shutil
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    yield os.path.join(_HERE, "bin", "memtrace")  # a wheel
    try:
        from memtrace import _install  # written by meson install
        yield os.path.join(_install.BINDIR, "memtrace")
    except ImportError:
        pass
    yield os.path.join(os.path.dirname(os.path.dirname(_HERE)), "memtrace")  # scripts/python/..


def command():
    """The path of the memtrace shell command this module runs."""
    for path in _candidates():
        if os.path.isfile(path):
            return path
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    path = command()
    if path is None:
        sys.stderr.write("memtrace: the memtrace command is not installed beside this Python "
                         "module (%s); reinstall memtrace-cuda\n" % _HERE)
        return 2
    bash = shutil.which("bash") or "/bin/bash"
    # bash runs the script by path, so its $0 and BASH_SOURCE name it and it
    # finds its library and reporter beside itself.
    os.execv(bash, ["bash", path] + list(argv))
    return 127


if __name__ == "__main__":
    sys.exit(main())
