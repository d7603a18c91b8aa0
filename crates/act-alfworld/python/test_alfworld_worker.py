"""Tests of the worker's game handling against the installed engine (run by tests/bridge_python.rs).

Run alone: python -m unittest discover -s crates/act-alfworld/python -p "test_*.py"
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import alfworld_worker as worker  # noqa: E402

GAMES = os.path.join(HERE, "..", "tests", "data", "pddl")
APPLE = os.path.join(GAMES, "pick_and_place_simple-apple-diningtable")


class GrammarConversion(unittest.TestCase):
    def setUp(self):
        self.data, self.traj = worker.load_game_files(APPLE)
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write_game(self, data):
        with open(os.path.join(self.tmp, "game.tw-pddl"), "w") as f:
            json.dump(dict(data, solvable=True), f)
        with open(os.path.join(self.tmp, "traj_data.json"), "w") as f:
            json.dump(self.traj, f)
        return self.tmp

    def help_text(self, game, grammar):
        session = worker.Session()
        reply = session.reset({"game": game, "seed": 0, "grammar": grammar})
        if "help" not in reply["admissible_commands"]:
            return None
        return session.step({"action": "help"})["observation"]

    def test_the_shipped_grammar_is_0_4_and_converts_to_0_3_and_back(self):
        self.assertEqual(worker.grammar_version(self.data["grammar"]), worker.GRAMMAR_04)
        v03 = worker.convert_grammar(self.data, "0.3")
        self.assertEqual(worker.grammar_version(v03["grammar"]), worker.GRAMMAR_03)
        self.assertNotIn("(:action help", v03["pddl_domain"])
        self.assertNotIn("action help {", v03["grammar"])
        self.assertIn("You arrive at {lend.name}.", v03["grammar"])
        back = worker.convert_grammar(v03, "0.4")
        self.assertEqual(worker.grammar_version(back["grammar"]), worker.GRAMMAR_04)
        self.assertIn("(:action help", back["pddl_domain"])

    def test_a_0_3_game_file_gets_the_upstream_help_text_in_0_4(self):
        v03_game = self.write_game(worker.convert_grammar(self.data, "0.3"))
        self.assertIsNone(self.help_text(v03_game, "as_is"))
        upstream = self.help_text(APPLE, "0.4")
        self.assertTrue(upstream.startswith("Available commands:\n  look:"), upstream)
        self.assertEqual(self.help_text(v03_game, "0.4"), upstream)

    def test_unknown_grammars_and_bad_files_are_worker_errors(self):
        with self.assertRaises(worker.WorkerError) as caught:
            worker.convert_grammar(self.data, "0.5")
        self.assertEqual(caught.exception.kind, "bad_request")
        with self.assertRaises(worker.WorkerError) as caught:
            worker.convert_grammar(dict(self.data, grammar="no commands"), "0.3")
        self.assertEqual(caught.exception.kind, "bad_game")
        with open(os.path.join(self.tmp, "game.tw-pddl"), "w") as f:
            f.write("[1, 2]")
        with self.assertRaises(worker.WorkerError) as caught:
            worker.load_game_files(self.tmp)
        self.assertEqual(caught.exception.kind, "bad_game")

    def test_the_goal_phrasing_follows_the_seed(self):
        session = worker.Session()
        tasks = {seed: session.reset({"game": APPLE, "seed": seed})["task"] for seed in range(8)}
        self.assertEqual(set(tasks.values()), {"put a apple in diningtable", "put some apple on diningtable"})
        again = {seed: session.reset({"game": APPLE, "seed": seed})["task"] for seed in range(8)}
        self.assertEqual(tasks, again)


class Protocol(unittest.TestCase):
    def run_lines(self, lines):
        import io
        out = io.StringIO()
        saved, worker._PROTOCOL_OUT = worker._PROTOCOL_OUT, out
        try:
            worker.serve(lines)
        finally:
            worker._PROTOCOL_OUT = saved
        return [json.loads(line) for line in out.getvalue().splitlines()]

    def test_every_line_gets_one_reply_and_errors_do_not_stop_the_worker(self):
        replies = self.run_lines([
            '{"id": 1, "cmd": "step", "action": "look"}',
            "not json",
            '{"id": 2, "cmd": "reset", "game": "/nonexistent/game"}',
            '{"id": 3, "cmd": "reset", "game": "%s", "seed": -1}' % APPLE,
            '{"id": 4, "cmd": "nope"}',
            '{"id": 5, "cmd": "reset", "game": "%s", "seed": 2, "expert": true}' % APPLE,
            '{"id": 6, "cmd": "step", "action": "look"}',
            '{"id": 7, "cmd": "shutdown"}',
            '{"id": 8, "cmd": "hello"}',
        ])
        self.assertEqual([r["id"] for r in replies], [1, None, 2, 3, 4, 5, 6, 7])
        self.assertEqual([r["ok"] for r in replies], [False, False, False, False, False, True, True, True])
        self.assertEqual(replies[0]["error"]["kind"], "not_reset")
        self.assertEqual(replies[2]["error"]["kind"], "bad_game")
        self.assertEqual(replies[5]["expert_action"], "look")
        self.assertTrue(replies[6]["expert_action"])


if __name__ == "__main__":
    unittest.main()
