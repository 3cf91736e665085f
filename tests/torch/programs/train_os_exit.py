"""train.py's loop, then os._exit(0) right after torch's figures are
printed, as multiprocessing's workers and many launchers end: no exit
handler, no library destructor runs (issue #48)."""
import os
import runpy
import sys

runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "train.py"))
sys.stdout.flush()
os._exit(0)
