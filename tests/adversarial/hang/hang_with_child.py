# class: kill — a candidate that starts an ordinary child process carrying the marker drtc_adversarial_marker___ADV_RUN___hang, then busy-loops forever (the harness kills drtc meanwhile and checks nothing it started survives)
import subprocess
import sys

MARKER = "drtc_adversarial_marker___ADV_RUN___hang"


def triton_fused_operator(x, b):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", MARKER],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    while True:
        pass
