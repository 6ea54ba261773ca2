"""One "machine" of the multi-process remote tests: writes N memories to its own
field directory replicated through the remote URL, printing each acknowledged id."""

from __future__ import annotations

import sys
import time

import chitta


def main() -> None:
    path, url, name, count, mode, pause = sys.argv[1:7]
    with chitta.open(path, remote=url, embedder=None, remote_durability=mode) as f:
        for i in range(int(count)):
            mid = f.remember(f"{name} {i}")
            print(f"ack {mid}", flush=True)  # acknowledged: remember() returned
            if float(pause):
                time.sleep(float(pause))
        f.refresh()
    print("done", flush=True)


if __name__ == "__main__":
    main()
