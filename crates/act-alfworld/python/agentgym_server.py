#!/usr/bin/env python3
"""An AgentGym-style ALFWorld HTTP server over the real engine, for testing act-rs's AgentGymClient.

It serves AgentGym's `agentenv-alfworld` API with the Python standard library only:
  POST /create                      -> {"id": int}
  POST /reset {id, game, world_type} -> {"id", "observation", "available_actions", "task_type"}
  POST /step  {id, action}           -> {"observation", "reward", "available_actions", "done"}
Failures answer {"error": "..."} (status 200, as AgentGym does). Observations are shaped as AgentGym shapes them:
the reset drops the "-= Welcome ... =-" header, a step drops a leading "You arrive at loc N. ", and the reward is
ALFWorld's `won`.

Usage: agentgym_server.py --games DIR [--port 0] [--grammar 0.3]
Binds 127.0.0.1 only and prints "listening on http://127.0.0.1:PORT" once ready.
"""

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alfworld_worker  # noqa: E402  (the real-engine session the Rust bridge also uses)

_STDOUT = alfworld_worker._PROTOCOL_OUT


def find_games(root):
    """Game files and game directories under root, sorted by path (game index = position)."""
    games = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        if "game.tw-pddl" in files:
            games.append(os.path.join(folder, "game.tw-pddl"))
        elif "initial_state.pddl" in files and "traj_data.json" in files:
            games.append(folder)
    return sorted(games)


def task_path(root, game):
    """AgentGym reports the two folders above game.tw-pddl (task folder / trial); here: the path under root."""
    folder = os.path.dirname(game) if game.endswith(".tw-pddl") else game
    return os.path.relpath(folder, root).replace(os.sep, "/")


def strip_arrival(observation):
    if observation.startswith("You arrive at loc "):
        observation = observation[observation.find(". ") + 2:]
    return observation


class Server:
    def __init__(self, root, grammar):
        self.root = root
        self.grammar = grammar
        self.games = find_games(root)
        self.sessions = {}
        self.done = {}
        self.lock = threading.Lock()

    def create(self, body):
        idx = len(self.sessions)
        self.sessions[idx] = alfworld_worker.Session()
        self.done[idx] = False
        return {"id": idx}

    def session(self, body):
        idx = body.get("id")
        if idx not in self.sessions:
            raise ValueError("The id {} is not valid.".format(idx))
        return idx, self.sessions[idx]

    def reset(self, body):
        if body.get("world_type") not in ("Text", "Embody", "Hybrid"):
            raise ValueError('world_type must be one of "Text", "Embody" and "Hybrid"')
        if body.get("world_type") != "Text":
            raise ValueError("only the Text world is served here")
        idx, session = self.session(body)
        game = body.get("game")
        if not isinstance(game, int) or not 0 <= game < len(self.games):
            raise ValueError("game {} is out of range (0..{})".format(game, len(self.games)))
        reply = session.reset({"game": self.games[game], "seed": 0, "grammar": self.grammar, "expert": False})
        self.done[idx] = False
        observation = "\n".join(reply["observation"].split("\n\n")[1:])
        return {"id": idx, "observation": observation, "available_actions": reply["admissible_commands"],
                "task_type": task_path(self.root, self.games[game])}

    def step(self, body):
        idx, session = self.session(body)
        if self.done[idx]:
            raise ValueError("The task with environment {} has finished.".format(idx))
        if not isinstance(body.get("action"), str):
            raise ValueError("`action` must be a string")
        reply = session.step({"action": body["action"]})
        self.done[idx] = reply["done"]
        return {"observation": strip_arrival(reply["observation"]), "reward": float(reply["won"]),
                "available_actions": reply["admissible_commands"], "done": reply["done"]}


def make_handler(server):
    routes = {"/create": server.create, "/reset": server.reset, "/step": server.step}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            route = routes.get(self.path)
            if route is None:
                self.answer(404, {"error": "no route {}".format(self.path)})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(body, dict):
                    raise ValueError("the body must be a JSON object")
                with server.lock:
                    payload = route(body)
            except alfworld_worker.WorkerError as exc:
                payload = {"error": exc.message}
            except Exception as exc:
                payload = {"error": "{}: {}".format(type(exc).__name__, exc)}
            self.answer(200, payload)

        def answer(self, status, payload):
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, fmt, *args):
            sys.stderr.write("agentgym_server: " + (fmt % args) + "\n")

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", required=True, help="directory of ALFWorld games")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--grammar", default="0.3", choices=["0.3", "0.4", "as_is"])
    args = parser.parse_args()
    server = Server(os.path.abspath(args.games), args.grammar)
    if not server.games:
        sys.stderr.write("no game under {}\n".format(args.games))
        sys.exit(2)
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(server))
    _STDOUT.write("listening on http://127.0.0.1:{}\n".format(httpd.server_address[1]))
    _STDOUT.flush()
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
