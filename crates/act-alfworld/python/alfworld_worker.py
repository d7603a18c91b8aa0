#!/usr/bin/env python3
"""Drive the real ALFWorld text engine (TextWorld's PDDL backend) for act-rs over JSON lines.

One request per line on stdin, one reply per line on stdout, in order. Every reply carries the request's "id" and
"ok"; failures come back as {"ok": false, "error": {"kind": ..., "message": ...}} and the worker keeps serving.
Nothing else is ever written to stdout: library chatter goes to stderr.

Requests ("cmd"):
  hello                      -> protocol version, engine versions, whether the packages import
  reset  {game, seed, grammar, expert}
                             -> observation, admissible_commands, task, task_type, grammar, expert_action
  step   {action}            -> observation, score, won, done, admissible_commands, expert_action
  shutdown                   -> replies, then exits

`game` is a `game.tw-pddl` file (ALFWorld's format: JSON with pddl_domain, grammar, pddl_problem), a directory that
holds one, or a directory with `initial_state.pddl` + `traj_data.json` (the game is then assembled from the domain
and grammar shipped inside the installed `alfworld` package). `grammar` is "as_is", "0.3" (`put O in/on R`,
"You arrive at loc N.") or "0.4" (`move O to R`, `help`). `expert` turns on ALFWorld's handcoded expert, which
needs the game's `traj_data.json`.
"""

import json
import os
import random
import sys
import traceback

PROTOCOL_VERSION = 1

# The protocol owns the real stdout; anything a library prints lands on stderr instead.
_PROTOCOL_OUT = sys.stdout
sys.stdout = sys.stderr

GRAMMAR_03 = "0.3"
GRAMMAR_04 = "0.4"

# The text ALFWorld 0.4 added for the `help` command (alfworld scripts/patch_tw-pddl.py); reproduced word for word.
# The feedback holds real newlines, as in that script's grammar text.
HELP_ACTION_PDDL = """\
(:action help
    :parameters (?a - agent)
    :precondition
        ()
    :effect
        (and
            (checked ?a)
        )
)
"""

HELP_FEEDBACK = (
    "\nAvailable commands:\n"
    "  look:                             look around your current location\n"
    "  inventory:                        check your current inventory\n"
    "  go to (receptacle):               move to a receptacle\n"
    "  open (receptacle):                open a receptacle\n"
    "  close (receptacle):               close a receptacle\n"
    "  take (object) from (receptacle):  take an object from a receptacle\n"
    "  move (object) to (receptacle):  place an object in or on a receptacle\n"
    "  examine (something):              examine a receptacle or an object\n"
    "  use (object):                     use an object\n"
    "  heat (object) with (receptacle):  heat an object using a receptacle\n"
    "  clean (object) with (receptacle): clean an object using a receptacle\n"
    "  cool (object) with (receptacle):  cool an object using a receptacle\n"
    "  slice (object) with (object):     slice an object using a sharp object\n"
)

HELP_ACTION_GRAMMAR = '\naction help {\n    template :: "help";\n    feedback :: "' + HELP_FEEDBACK + '";\n}\n'

# (0.3 text, 0.4 text) pairs of the grammar; the arrival line names the location in 0.3 and the receptacle in 0.4.
GRAMMAR_EDITS = [
    ("put {o} in/on {r}", "move {o} to {r}"),
    ("You put the {o.name} in/on the {r.name}.", "You move the {o.name} to the {r.name}."),
    ("You arrive at {lend.name}.", "You arrive at {r.name}."),
]

TASK_TYPES = [
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
]


class WorkerError(Exception):
    """A failure reported to the client with a machine-readable kind."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


def send(reply):
    _PROTOCOL_OUT.write(json.dumps(reply) + "\n")
    _PROTOCOL_OUT.flush()


# ----------------------------------------------------------------------------------------------------------------
# Engine imports: deferred so that `hello` can say what is missing instead of the worker dying at start.

_ENGINE = None


def engine():
    global _ENGINE
    if _ENGINE is None:
        try:
            import textworld
            from textworld.envs.pddl import PddlEnv
            import alfworld
            from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
            from alfworld.agents.expert import HandCodedTWAgent
            from alfworld.agents.expert.handcoded_expert import HandCodedAgentFailed, HandCodedAgentTimeout
            from alfworld.agents.utils.misc import add_task_to_grammar
            import alfworld.gen.constants as constants
        except Exception as exc:  # ImportError, or a broken install raising anything else
            raise WorkerError("missing_package", "cannot import the ALFWorld engine ({}: {}); install it with: "
                              "pip install alfworld==0.4.2 \"textworld[pddl]==1.7.0\"".format(type(exc).__name__, exc))
        _ENGINE = {
            "textworld": textworld,
            "PddlEnv": PddlEnv,
            "alfworld": alfworld,
            "AlfredDemangler": AlfredDemangler,
            "HandCodedTWAgent": HandCodedTWAgent,
            "expert_errors": (HandCodedAgentFailed, HandCodedAgentTimeout),
            "add_task_to_grammar": add_task_to_grammar,
            "constants": constants,
        }
    return _ENGINE


def package_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return None


# ----------------------------------------------------------------------------------------------------------------
# Game files.

def read_json(path):
    try:
        with open(path, "r") as f:
            return json.load(f)
    except FileNotFoundError:
        raise WorkerError("bad_game", "no such file: {}".format(path))
    except (OSError, ValueError) as exc:
        raise WorkerError("bad_game", "cannot read {}: {}".format(path, exc))


def shipped_logic():
    """ALFWorld's domain and grammar as installed with the `alfworld` package (or under $ALFWORLD_DATA/logic)."""
    alfworld = engine()["alfworld"]
    candidates = [os.path.join(os.path.dirname(alfworld.__file__), "data")]
    if os.environ.get("ALFWORLD_DATA"):
        candidates.append(os.path.join(os.environ["ALFWORLD_DATA"], "logic"))
    for folder in candidates:
        domain, grammar = os.path.join(folder, "alfred.pddl"), os.path.join(folder, "alfred.twl2")
        if os.path.isfile(domain) and os.path.isfile(grammar):
            with open(domain) as f_domain, open(grammar) as f_grammar:
                return f_domain.read(), f_grammar.read()
    raise WorkerError("bad_game", "cannot find alfred.pddl and alfred.twl2 in {}".format(", ".join(candidates)))


def load_game_files(path):
    """Returns (game data dict, traj_data dict or None) for a game file or a game directory."""
    if os.path.isdir(path):
        game_file = os.path.join(path, "game.tw-pddl")
        problem_file = os.path.join(path, "initial_state.pddl")
        traj_file = os.path.join(path, "traj_data.json")
        if os.path.isfile(game_file):
            path = game_file
        elif os.path.isfile(problem_file):
            if not os.path.isfile(traj_file):
                raise WorkerError("bad_game", "{} has initial_state.pddl but no traj_data.json".format(path))
            domain, grammar = shipped_logic()
            with open(problem_file) as f:
                problem = f.read()
            return {"pddl_domain": domain, "grammar": grammar, "pddl_problem": problem}, read_json(traj_file)
        else:
            raise WorkerError("bad_game", "{} holds neither game.tw-pddl nor initial_state.pddl".format(path))
    data = read_json(path)
    if not isinstance(data, dict):
        raise WorkerError("bad_game", "{} is not a JSON object".format(path))
    for key in ("pddl_domain", "grammar", "pddl_problem"):
        if not isinstance(data.get(key), str):
            raise WorkerError("bad_game", "{} lacks the string field `{}`".format(path, key))
    traj_file = os.path.join(os.path.dirname(path), "traj_data.json")
    traj_data = read_json(traj_file) if os.path.isfile(traj_file) else None
    return data, traj_data


def grammar_version(grammar):
    if "move {o} to {r}" in grammar:
        return GRAMMAR_04
    if "put {o} in/on {r}" in grammar:
        return GRAMMAR_03
    return "unknown"


def cut_block(text, start_marker, open_char, close_char):
    """Removes the first balanced block that starts at `start_marker` (with the newline before it)."""
    start = text.find(start_marker)
    if start < 0:
        return text
    depth, index = 0, text.index(open_char, start)
    while index < len(text):
        if text[index] == open_char:
            depth += 1
        elif text[index] == close_char:
            depth -= 1
            if depth == 0:
                break
        index += 1
    if start > 0 and text[start - 1] == "\n":
        start -= 1
    return text[:start] + text[index + 1:]


def convert_grammar(data, target):
    """Rewrites a game's grammar (and domain, for `help`) to the 0.3 or 0.4 command set; "as_is" keeps it."""
    if target == "as_is":
        return dict(data)
    if target not in (GRAMMAR_03, GRAMMAR_04):
        raise WorkerError("bad_request", "unknown grammar `{}` (expected as_is, 0.3 or 0.4)".format(target))
    grammar, domain = data["grammar"], data["pddl_domain"]
    current = grammar_version(grammar)
    if current == "unknown":
        raise WorkerError("bad_game", "the game's grammar is neither ALFWorld 0.3 nor 0.4; cannot convert it")
    if current != target:
        for old, new in GRAMMAR_EDITS:
            grammar = grammar.replace(old, new) if target == GRAMMAR_04 else grammar.replace(new, old)
    has_help = "(:action help" in domain
    if target == GRAMMAR_04 and not has_help:
        before, after = domain.rsplit(")", 1)
        domain = before + HELP_ACTION_PDDL + ")" + after
        grammar += HELP_ACTION_GRAMMAR
    elif target == GRAMMAR_03 and has_help:
        domain = cut_block(domain, "(:action help", "(", ")")
        grammar = cut_block(grammar, "action help {", "{", "}")
    converted = dict(data)
    converted["grammar"], converted["pddl_domain"] = grammar, domain
    return converted


def infer_task_type(path, traj_data):
    if traj_data and traj_data.get("task_type") in TASK_TYPES:
        return traj_data["task_type"]
    for part in reversed(os.path.normpath(path).split(os.sep)):
        for task_type in TASK_TYPES:
            if part.startswith(task_type):
                return task_type
    return "unknown"


def task_description(observation):
    marker = "Your task is to: "
    if marker not in observation:
        return ""
    text = observation.split(marker, 1)[1].strip()
    return text[:-1] if text.endswith(".") else text


# ----------------------------------------------------------------------------------------------------------------
# The expert, run the way ALFWorld's AlfredExpert wrapper runs it, with one adapter: the policy always sees the
# 0.4 command words (`move O to R`) and is told the last placement as `put O in/on R`, which is how the 0.3.3
# expert tracked its inventory (0.4.2 looks for "put" in a `move` command and loses track on pick-two tasks).

def to_expert_command(command):
    if command.startswith("put ") and " in/on " in command:
        obj, recep = command[4:].split(" in/on ", 1)
        return "move {} to {}".format(obj, recep)
    return command


def from_expert_command(command, grammar):
    if grammar == GRAMMAR_03 and command.startswith("move ") and " to " in command:
        obj, recep = command[5:].rsplit(" to ", 1)
        return "put {} in/on {}".format(obj, recep)
    return command


def to_tracking_command(command):
    if command.startswith("move ") and " to " in command:
        obj, recep = command[5:].rsplit(" to ", 1)
        return "put {} in/on {}".format(obj, recep)
    return command


class Expert:
    def __init__(self, traj_data, grammar, rng):
        eng = engine()
        constants = eng["constants"]
        agent = eng["HandCodedTWAgent"](max_steps=200)
        params = dict(traj_data["pddl_params"], task_type=traj_data["task_type"])
        params = dict((k, v.lower() if v in constants.OBJECTS else v) for k, v in params.items())
        agent.task_params = params
        agent.policy = agent.get_task_policy(params)(params, max_steps=agent.max_steps)
        self.agent = agent
        self.grammar = grammar
        self.rng = rng
        self.failed = None

    def start(self, feedback):
        self.agent.policy.observe(feedback)
        return "look"

    def next(self, state, last_command):
        """The expert's next command after `last_command` led to `state`; None once it has given up."""
        if self.failed:
            return None
        admissible = [to_expert_command(c) for c in state["admissible_commands"]]
        view = {"feedback": state["feedback"], "admissible_commands": admissible, "facts": state["facts"],
                "won": state["won"]}
        last_expert = to_expert_command(last_command)
        # Seeded: the policy picks among equal objects with the global `random`.
        random.setstate(self.rng.getstate())
        try:
            action = self.agent.policy.act(view, to_tracking_command(last_command))
            if action == last_expert or (last_expert == "look" and action not in admissible):
                action = random.choice(admissible)
        except Exception as exc:  # noqa: BLE001 - the expert's failure must not fail the environment's step
            # Upstream's expert raises its own errors (HandCodedAgentFailed, ...) and others on states it does not
            # expect (an IndexError from `random.choice([])` after `examine` of a bowl holding a book): either way
            # the step the agent took stands and the expert is marked failed.
            self.failed = type(exc).__name__
            return None
        finally:
            self.rng.setstate(random.getstate())
        if action not in admissible:
            return "look"
        return from_expert_command(action, self.grammar)


# ----------------------------------------------------------------------------------------------------------------
# Episodes.

class Session:
    def __init__(self):
        self.env = None
        self.env_key = None
        self.state = None
        self.expert = None
        self.expert_action = None
        self.grammar = None
        self.done = False

    def reset(self, request):
        game = request.get("game")
        if not isinstance(game, str) or not game:
            raise WorkerError("bad_request", "reset needs `game`: a path to a game.tw-pddl file or a game directory")
        seed = request.get("seed", 0)
        if not isinstance(seed, int) or seed < 0:
            raise WorkerError("bad_request", "`seed` must be a non-negative integer")
        want_expert = bool(request.get("expert", False))
        eng = engine()

        data, traj_data = load_game_files(game)
        data = convert_grammar(data, request.get("grammar", "as_is"))
        grammar = grammar_version(data["grammar"])
        rng = random.Random(seed)
        if "UNKNOWN GOAL" in data["grammar"]:
            if not traj_data or "pddl_params" not in traj_data:
                raise WorkerError("bad_game", "{}: the grammar has no goal text and there is no traj_data.json "
                                              "with pddl_params to write one".format(game))
            # ALFWorld picks one of two goal phrasings with the global `random`; seed it for this reset.
            random.seed(rng.getrandbits(64))
            try:
                data["grammar"] = eng["add_task_to_grammar"](data["grammar"], traj_data)
            except (KeyError, TypeError) as exc:
                raise WorkerError("bad_game", "{}: traj_data.json cannot describe the goal: {}".format(game, exc))

        if want_expert and not (traj_data and "pddl_params" in traj_data and "task_type" in traj_data):
            raise WorkerError("no_expert", "{}: the handcoded expert needs a traj_data.json with task_type and "
                                           "pddl_params next to the game".format(game))

        key = (os.path.abspath(game), data["grammar"], data["pddl_domain"], want_expert)
        if key != self.env_key:
            self.env, self.env_key = None, None
            infos = eng["textworld"].EnvInfos(won=True, admissible_commands=True, score=True, facts=want_expert)
            env = eng["AlfredDemangler"](eng["PddlEnv"](infos))
            try:
                env.load(data)
            except Exception as exc:
                raise WorkerError("bad_game", "{}: the engine cannot load this game: {}: {}".format(
                    game, type(exc).__name__, exc))
            self.env, self.env_key = env, key

        self.state = self.env.reset()
        self.grammar = grammar
        self.done = False
        self.expert, self.expert_action = None, None
        if want_expert:
            self.expert = Expert(traj_data, grammar, rng)
            self.expert_action = self.expert.start(self.state["feedback"])
        observation = self.state["feedback"]
        return {
            "observation": observation,
            "admissible_commands": list(self.state["admissible_commands"]),
            "task": task_description(observation),
            "task_type": infer_task_type(game, traj_data),
            "grammar": grammar,
            "won": bool(self.state["won"]),
            "expert_action": self.expert_action,
        }

    def step(self, request):
        if self.env is None or self.state is None:
            raise WorkerError("not_reset", "no episode in progress: reset first")
        if self.done:
            raise WorkerError("not_reset", "the episode is over: reset first")
        action = request.get("action")
        if not isinstance(action, str):
            raise WorkerError("bad_request", "step needs `action`: a string")
        self.state, score, done = self.env.step(action)
        self.done = bool(done)
        if self.expert is not None:
            self.expert_action = None if self.done else self.expert.next(self.state, action.strip())
        return {
            "observation": self.state["feedback"],
            "score": float(score),
            "won": bool(self.state["won"]),
            "done": self.done,
            "admissible_commands": list(self.state["admissible_commands"]),
            "expert_action": self.expert_action,
            "expert_failed": self.expert.failed if self.expert is not None else None,
        }


def hello():
    reply = {"protocol": PROTOCOL_VERSION, "python": sys.version.split()[0],
             "alfworld": package_version("alfworld"), "textworld": package_version("textworld")}
    try:
        engine()
        reply["engine"] = True
    except WorkerError as exc:
        reply["engine"], reply["engine_error"] = False, exc.message
    return reply


def serve(lines):
    session = Session()
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except ValueError as exc:
            send({"id": None, "ok": False, "error": {"kind": "bad_request", "message": "not JSON: {}".format(exc)}})
            continue
        request_id = request.get("id") if isinstance(request, dict) else None
        try:
            if not isinstance(request, dict):
                raise WorkerError("bad_request", "a request must be a JSON object")
            cmd = request.get("cmd")
            if cmd == "hello":
                result = hello()
            elif cmd == "reset":
                result = session.reset(request)
            elif cmd == "step":
                result = session.step(request)
            elif cmd == "shutdown":
                send({"id": request_id, "ok": True})
                return
            else:
                raise WorkerError("bad_request", "unknown cmd `{}`".format(cmd))
            result.update({"id": request_id, "ok": True})
            send(result)
        except WorkerError as exc:
            send({"id": request_id, "ok": False, "error": {"kind": exc.kind, "message": exc.message}})
        except Exception as exc:
            traceback.print_exc()
            send({"id": request_id, "ok": False, "error": {"kind": "engine", "message": "{}: {}".format(
                type(exc).__name__, exc)}})


if __name__ == "__main__":
    serve(sys.stdin)
