"""Allocation scenarios for memtrace's Python frames (docs/python.md).

test_python.py runs this script under LD_PRELOAD=libmemtrace.so, on the
simulated device, with each interpreter under test, and checks the trace.
Each scenario allocates a size of its own (SCENARIOS: KiB -> count), so its
events are found by their bytes. The line of every call on the way to an
allocation carries a tag comment, "# @" and a name; the driver reads the
expected line numbers from the tags, never from fixed numbers.

The helper library (native-helper.c, path in MEMTRACE_PY_HELPER) starts
threads that Python did not start.
"""
import ctypes
import os
import sys
import threading
import time
import types

KiB = 1024

# KiB -> number of allocations of that size
SCENARIOS = {
    101: 3,  # cdll: ctypes.CDLL, the GIL released during the call
    102: 4,  # pydll: ctypes.PyDLL, the GIL held during the call
    103: 5,  # spin: CDLL while another thread spins holding the GIL
    104: 1,  # spin: the spinning thread's own allocation
    105: 2,  # native: a thread Python did not start
    106: 2,  # callback: Python called back on a thread Python did not start
    107: 1,  # recursion: 100 frames deep
    108: 3,  # generator
    109: 2,  # coroutine
    110: 8,  # __init__ (3.13 runs it through a shim frame once specialized)
    111: 1,  # a latin-1 function name
    112: 1,  # a UCS-2 function name
    113: 1,  # a UCS-4 function name, in a file whose name is UCS-4
    114: 2,  # a nested function (its qualified name)
    115: 1,  # mutex: a thread allocating with the allocator's mutex held...
    116: 1,  # ...while the main thread waits for that mutex holding the GIL
    # python.c's memo of frames (code object, instruction -> name and line):
    117: 2,  # memo: one frame allocates from one line...
    118: 2,  # ...then from another (same frame, same code, another instruction)
    119: 2,  # memo: a function allocates...
    120: 2,  # ...then another, whose frame takes the first one's place
    121: 2,  # memo: recursion 3 deep,
    122: 2,  # 6 deep,
    123: 1,  # 2 deep
    124: 1,  # memo: a copy of a function under another name, freed...
    125: 1,  # ...then another copy (its code object may take the first one's address)
}

cudart = ctypes.CDLL("libcudart.so.13")
cudart_gil = ctypes.PyDLL("libcudart.so.13")
helper = ctypes.CDLL(os.environ["MEMTRACE_PY_HELPER"])
helper.native_thread_alloc.argtypes = [ctypes.c_size_t]
CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int)
helper.native_thread_call.argtypes = [CALLBACK]
helper.locked_alloc.argtypes = [ctypes.c_size_t, ctypes.c_uint]
helper_gil = ctypes.PyDLL(os.environ["MEMTRACE_PY_HELPER"])
helper_gil.locked_alloc.argtypes = [ctypes.c_size_t, ctypes.c_uint]

kept = []  # nothing is freed: every allocation stays in the trace as live


def ptr():
    p = ctypes.c_void_p()
    kept.append(p)
    return ctypes.byref(p)


def check(rc):
    if rc != 0:
        raise RuntimeError("cudaMalloc failed: %d" % rc)


# ---- cdll, pydll ----

def cdll_alloc():
    check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(101 * KiB)))  # @cdll


def pydll_alloc():
    check(cudart_gil.cudaMalloc(ptr(), ctypes.c_size_t(102 * KiB)))  # @pydll


def scenario_cdll():
    for _ in range(3):
        cdll_alloc()  # @cdll-call
    for _ in range(4):
        pydll_alloc()  # @pydll-call


# ---- a thread spinning with the GIL ----

spinning = threading.Event()
stop_spinning = False
spins = 0


def spinner():
    global spins
    n = 0
    while not stop_spinning:  # pure Python: holds the GIL but at switches
        n += 1
        if n == 1000:
            spinning.set()
    spins = n
    check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(104 * KiB)))  # @spinner-alloc


def spin_alloc():
    check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(103 * KiB)))  # @spin


def scenario_spin():
    global stop_spinning
    t = threading.Thread(target=spinner)
    t.start()
    spinning.wait()
    for _ in range(5):
        spin_alloc()  # @spin-call
    stop_spinning = True
    t.join()
    if spins < 1000:
        raise RuntimeError("the spinner did not spin")


# ---- threads Python did not start ----

@CALLBACK
def callback_alloc():
    check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(106 * KiB)))  # @callback
    return 0


def scenario_native():
    for _ in range(2):
        check(helper.native_thread_alloc(105 * KiB))
    for _ in range(2):
        check(helper.native_thread_call(callback_alloc))


# ---- an allocator mutex, as PyTorch's: memtrace must not take the GIL ----

in_allocator = threading.Event()


def mutex_worker():
    in_allocator.set()
    check(helper.locked_alloc(115 * KiB, 200000))  # @mutex-worker


def scenario_mutex():
    t = threading.Thread(target=mutex_worker)
    t.start()
    in_allocator.wait()
    time.sleep(0.05)  # the worker now holds the mutex, without the GIL
    check(helper_gil.locked_alloc(116 * KiB, 0))  # @mutex-main
    t.join()


# ---- recursion, generator, coroutine, __init__ ----

def recurse(depth):
    if depth == 0:
        check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(107 * KiB)))  # @recurse-leaf
        return
    recurse(depth - 1)  # @recurse-call


def scenario_recursion():
    recurse(100)  # @recursion-call


def gen_alloc(n):
    for _ in range(n):
        yield cudart.cudaMalloc(ptr(), ctypes.c_size_t(108 * KiB))  # @gen


def scenario_generator():
    for rc in gen_alloc(3):  # @gen-consume
        check(rc)


async def coro_leaf():
    check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(109 * KiB)))  # @coro


async def coro_outer():
    await coro_leaf()  # @coro-await


def scenario_coroutine():
    for _ in range(2):
        c = coro_outer()
        try:
            c.send(None)  # @coro-drive
        except StopIteration:
            pass


class Buffer:
    def __init__(self):
        check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(110 * KiB)))  # @init


def scenario_init():
    for _ in range(8):
        Buffer()  # @init-call


# ---- names that are not ASCII ----

UNICODE_FILE = "/nonexistent/unicode-\u00fc-\U0001F600.py"
UNICODE_SOURCE = """
def gr\u00f6\u00dfe(alloc):
    alloc(111)  # @latin1

def \u51fd\u6570(alloc):
    alloc(112)  # @ucs2

def \U00020000(alloc):
    alloc(113)  # @ucs4
"""


def unicode_alloc(kib):
    check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(kib * KiB)))  # @unicode


def scenario_unicode():
    names = {}
    exec(compile(UNICODE_SOURCE, UNICODE_FILE, "exec"), names)
    names["gr\u00f6\u00dfe"](unicode_alloc)  # @unicode-latin1
    names["\u51fd\u6570"](unicode_alloc)  # @unicode-ucs2
    names["\U00020000"](unicode_alloc)  # @unicode-ucs4


def scenario_nested():
    def inner():
        check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(114 * KiB)))  # @nested
    for _ in range(2):
        inner()  # @nested-call


# ---- the memo of frames ----

def memo_lines():
    check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(117 * KiB)))  # @memo-line1
    check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(118 * KiB)))  # @memo-line2


def memo_reuse_a():
    check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(119 * KiB)))  # @memo-reuse-a


def memo_reuse_b():
    check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(120 * KiB)))  # @memo-reuse-b


def memo_depth(depth, kib):
    if depth == 0:
        check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(kib * KiB)))  # @memo-depth-leaf
        return
    memo_depth(depth - 1, kib)  # @memo-depth-call


def memo_code_X(kib):
    check(cudart.cudaMalloc(ptr(), ctypes.c_size_t(kib * KiB)))  # @memo-code


memo_names = []  # the names of memo_code_X's copies, kept alive


def scenario_memo():
    for _ in range(2):
        memo_lines()  # @memo-lines-call
        memo_reuse_a()  # @memo-reuse-a-call
        memo_reuse_b()  # @memo-reuse-b-call
    for _ in range(2):
        memo_depth(3, 121)  # @memo-depth-3
        memo_depth(6, 122)  # @memo-depth-6
    memo_depth(2, 123)  # @memo-depth-2
    # Copies of memo_code_X under other names, made one after the other:
    # the first one's code object is freed before the second is made, so
    # the second often gets its address, and its frame the same place with
    # the same instruction; only the name object differs.
    for letter, kib in (("a", 124), ("b", 125)):
        name = "memo_code_" + letter
        memo_names.append(name)
        fields = {"co_name": name}
        if sys.version_info >= (3, 11):
            fields["co_qualname"] = name
        code = memo_code_X.__code__
        if hasattr(code, "replace"):  # 3.8+ (3.6 and 3.7 get native frames only)
            code = code.replace(**fields)
        fn = types.FunctionType(code, globals())
        fn(kib)  # @memo-code-call
        del fn


def main():
    scenario_cdll()  # @main-cdll
    scenario_spin()  # @main-spin
    scenario_native()  # @main-native
    scenario_mutex()  # @main-mutex
    scenario_recursion()  # @main-recursion
    scenario_generator()  # @main-generator
    scenario_coroutine()  # @main-coroutine
    scenario_init()  # @main-init
    scenario_unicode()  # @main-unicode
    scenario_nested()  # @main-nested
    scenario_memo()  # @main-memo
    print("scenarios done")


if __name__ == "__main__":
    main()  # @module
    sys.stdout.flush()
