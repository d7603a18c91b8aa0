"""Steps per second of the official Python wrapper's `env.step` on one task's gold path.

Usage: python3 python_step.py TASK VARIATION SECONDS
Prints one JSON line: {"task", "variation", "steps", "seconds", "steps_per_sec", "gold_length"}.
Only `env.step` calls are timed; resets between passes over the gold path are not.
"""
import json
import sys
import time

from scienceworld import ScienceWorldEnv


def main():
    task, variation, budget = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    env = ScienceWorldEnv("", envStepLimit=10_000)
    env.load(task, variation, "", generateGoldPath=True)
    gold = env.get_gold_action_sequence()
    steps, timed = 0, 0.0
    while timed < budget:
        env.reset()
        for action in gold:
            start = time.perf_counter()
            env.step(action)
            timed += time.perf_counter() - start
            steps += 1
    env.close()
    print(json.dumps({"task": task, "variation": variation, "steps": steps, "seconds": timed,
                      "steps_per_sec": steps / timed, "gold_length": len(gold)}))


if __name__ == "__main__":
    main()
