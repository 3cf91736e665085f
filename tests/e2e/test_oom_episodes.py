"""Out-of-memory episodes: a framework whose allocation fails frees its
cache and retries the same request (PyTorch's caching allocator does); the
report counts that as one episode, the retry naming the first try and what
was freed between. A thread that goes on to allocate ends its episode.

The program (Python through ctypes, on a 1 GiB simulated device) says
itself which of its failed requests were retries and what it freed before
each; the report must say the same."""
import json
import os
import subprocess
import sys

import mtest

MiB = 1 << 20

SCRIPT = r'''
import ctypes, json
rt = ctypes.CDLL("libcudart.so.13")
MiB = 1 << 20
BIG = 2048 * MiB  # never fits the 1 GiB device
def malloc(n):
    p = ctypes.c_void_p()
    return rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n)), p
tries = []  # what the program knows of each failed request
cache = [malloc(n)[1] for n in (100 * MiB, 60 * MiB)]
# an episode: fail, empty the cache, retry, fail
assert malloc(BIG)[0] == 2
tries.append({"retry": False, "freed": 0, "count": 0})
for p in cache:
    assert rt.cudaFree(p) == 0
assert malloc(BIG)[0] == 2
tries.append({"retry": True, "freed": 160 * MiB, "count": 2})
# the thread goes on: the next failure of the same request is a new episode
err, small = malloc(1 * MiB)
assert err == 0
assert malloc(BIG)[0] == 2
tries.append({"retry": False, "freed": 0, "count": 0})
# tried again at once, nothing freed: the same episode
assert malloc(BIG)[0] == 2
tries.append({"retry": True, "freed": 0, "count": 0})
# another size: a new episode
assert malloc(BIG + 2 * MiB)[0] == 2
tries.append({"retry": False, "freed": 0, "count": 0})
print(json.dumps(tries))
'''


class OomEpisodes(mtest.TraceTest):
    def test_retry_after_freeing_is_one_episode(self):
        trace = os.path.join(self.tmp, "t.db")
        env = mtest.sim_env({"LD_PRELOAD": mtest.LIB, "MEMTRACE_OUTPUT": trace,
                             "MEMTRACE_QUIET": "1"})
        proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=self.tmp,
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        tries = json.loads(proc.stdout)
        rep = self.report(trace)
        ooms = rep["ooms"]
        self.assertEqual(len(ooms), len(tries))
        first = None
        for o, t in zip(ooms, tries):
            if not t["retry"]:
                first = o["seq"]
                self.assertIsNone(o["retry_of"], o)
            else:
                self.assertEqual(o["retry_of"], first, o)
            self.assertEqual((o["released_before_retry_bytes"], o["released_before_retry_count"]),
                             (t["freed"], t["count"]), o)
        self.assertEqual(rep["totals"]["oom_episodes"], sum(not t["retry"] for t in tries))
        # The text: the last failure is a new episode of its own, the last
        # of three.
        text = self.report_text(trace)
        head = " ".join(text.split("\n\n")[1].split())
        self.assertIn("(the last of 3 out-of-memory episodes, 5 failures;", head)

    def test_text_tells_the_retry(self):
        """An episode that ends the run: the headline says the request failed
        before, and what was freed before the retry."""
        script = SCRIPT.split("# the thread goes on")[0] + "print('[]')\n"
        trace = os.path.join(self.tmp, "t.db")
        env = mtest.sim_env({"LD_PRELOAD": mtest.LIB, "MEMTRACE_OUTPUT": trace,
                             "MEMTRACE_QUIET": "1"})
        proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=self.tmp,
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        head = " ".join(self.report_text(trace).split("\n\n")[1].split())
        self.assertIn("One episode: this request failed first at", head)
        self.assertIn("160.0 MiB in 2 allocations was freed, and the retry failed too", head)
        self.assertNotIn("out-of-memory failures", head)


if __name__ == "__main__":
    mtest.main()
