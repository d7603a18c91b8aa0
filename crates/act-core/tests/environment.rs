//! The Environment trait, the expert-trajectory collector and the scripted policies, on a toy corridor.

use act_core::*;

/// A corridor of rooms 0..len; the task is to reach `goal` within a budget. Actions: `go east`, `go west`, `look`.
struct Corridor {
    len: usize,
    goal: usize,
    position: usize,
    steps: usize,
    task: Option<TaskInfo>,
}

impl Corridor {
    fn new(len: usize) -> Self {
        Corridor { len, goal: 0, position: 0, steps: 0, task: None }
    }

    fn observe(&self) -> Observation {
        Observation(format!("You are in room {}.", self.position))
    }
}

impl Environment for Corridor {
    fn name(&self) -> &str {
        "corridor"
    }

    fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
        match split {
            Split::Train => Ok(self.len - 1),
            other => Err(EnvError::UnsupportedSplit(other)),
        }
    }

    fn reset(&mut self, task: &TaskRef, _seed: u64) -> Result<Reset, EnvError> {
        let goal = match task {
            TaskRef::Index { split: Split::Train, index } if *index + 1 < self.len => index + 1,
            other => return Err(EnvError::UnknownTask(format!("{other:?}"))),
        };
        self.goal = goal;
        self.position = 0;
        self.steps = 0;
        let info = TaskInfo {
            id: format!("corridor-{goal}"),
            task_type: "reach".into(),
            split: Split::Train,
            description: format!("reach room {goal}."),
        };
        self.task = Some(info.clone());
        Ok(Reset { observation: self.observe(), task: info, admissible_actions: self.admissible_actions() })
    }

    fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
        if self.task.is_none() {
            return Err(EnvError::NotReset);
        }
        match action {
            "go east" if self.position + 1 < self.len => self.position += 1,
            "go west" if self.position > 0 => self.position -= 1,
            "look" => {}
            _ => {
                return Ok(Transition {
                    observation: "Nothing happens.".into(),
                    reward: 0.0,
                    done: false,
                    won: false,
                    score: 0.0,
                    admissible_actions: self.admissible_actions(),
                    info: Default::default(),
                });
            }
        }
        self.steps += 1;
        let won = self.position == self.goal;
        Ok(Transition {
            observation: self.observe(),
            reward: if won { 1.0 } else { 0.0 },
            done: won || self.steps >= self.step_budget(),
            won,
            score: if won { 1.0 } else { 0.0 },
            admissible_actions: self.admissible_actions(),
            info: Default::default(),
        })
    }

    fn admissible_actions(&self) -> Option<Vec<Action>> {
        let mut actions = vec![Action::from("look")];
        if self.position + 1 < self.len {
            actions.push("go east".into());
        }
        if self.position > 0 {
            actions.push("go west".into());
        }
        actions.sort();
        Some(actions)
    }

    fn task(&self) -> Option<&TaskInfo> {
        self.task.as_ref()
    }

    fn step_budget(&self) -> usize {
        10
    }

    fn expert_action(&mut self) -> Result<Option<Action>, EnvError> {
        Ok(Some(if self.position < self.goal { "go east".into() } else { "go west".into() }))
    }

    fn snapshot(&self) -> Option<EnvSnapshot> {
        let task = self.task.clone()?;
        Some(EnvSnapshot::new("corridor", (self.goal, self.position, self.steps, task)))
    }

    fn restore(&mut self, snapshot: &EnvSnapshot) -> Result<(), EnvError> {
        let (goal, position, steps, task) = snapshot.state::<(usize, usize, usize, TaskInfo)>()?.clone();
        (self.goal, self.position, self.steps, self.task) = (goal, position, steps, Some(task));
        Ok(())
    }
}

#[test]
fn a_restored_snapshot_answers_as_the_state_it_was_taken_in() {
    let mut env = Corridor::new(6);
    assert!(env.snapshot().is_none(), "no episode, no snapshot");
    env.reset(&TaskRef::index(Split::Train, 3), 0).unwrap();
    env.step("go east").unwrap();
    let snapshot = env.snapshot().unwrap();
    assert_eq!(snapshot.environment(), "corridor");
    let first: Vec<Transition> = ["go east", "go east", "look"].iter().map(|a| env.step(a).unwrap()).collect();
    env.restore(&snapshot).unwrap();
    let again: Vec<Transition> = ["go east", "go east", "look"].iter().map(|a| env.step(a).unwrap()).collect();
    assert_eq!(first, again);
    let foreign = EnvSnapshot::new("elsewhere", 7_u32);
    let err = env.restore(&foreign).unwrap_err().to_string();
    assert!(err.contains("`elsewhere`"), "{err}");
}

#[test]
fn expert_trajectories_record_states_and_outcomes() {
    let mut env = Corridor::new(6);
    let t = collect_expert_trajectory(&mut env, &TaskRef::index(Split::Train, 2), 0).unwrap();
    assert!(t.outcome.won);
    assert_eq!(t.outcome.steps_used, 3);
    assert_eq!(t.task_id, "corridor-3");
    assert_eq!(t.steps[0].observation.as_str(), "You are in room 0.");
    assert_eq!(t.steps[2].observation.as_str(), "You are in room 2.");
    assert!(t.steps.iter().all(|s| s.action.as_str() == "go east"));
    assert_eq!(t.steps[0].admissible_actions, vec![Action::from("go east"), Action::from("look")]);
    let state = t.state_at(2, 2).unwrap();
    assert_eq!(state.history.len(), 2);
    assert_eq!(state.task, "reach room 3.");
}

#[test]
fn environments_without_an_expert_are_refused() {
    struct NoExpert(Corridor);
    impl Environment for NoExpert {
        fn name(&self) -> &str {
            "no-expert"
        }
        fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
            self.0.num_tasks(split)
        }
        fn reset(&mut self, task: &TaskRef, seed: u64) -> Result<Reset, EnvError> {
            self.0.reset(task, seed)
        }
        fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
            self.0.step(action)
        }
        fn admissible_actions(&self) -> Option<Vec<Action>> {
            self.0.admissible_actions()
        }
        fn task(&self) -> Option<&TaskInfo> {
            self.0.task()
        }
        fn step_budget(&self) -> usize {
            self.0.step_budget()
        }
    }
    let err =
        collect_expert_trajectory(&mut NoExpert(Corridor::new(3)), &TaskRef::index(Split::Train, 0), 0).unwrap_err();
    assert!(err.to_string().contains("no expert"), "{err}");
    // Nor does it take snapshots: the trait's defaults.
    let mut bare = NoExpert(Corridor::new(3));
    bare.reset(&TaskRef::index(Split::Train, 0), 0).unwrap();
    assert!(bare.snapshot().is_none());
    let snapshot = Corridor::new(3).snapshot();
    assert!(snapshot.is_none());
    let err = bare.restore(&EnvSnapshot::new("corridor", ())).unwrap_err().to_string();
    assert!(err.contains("`no-expert` cannot restore"), "{err}");
}

#[test]
fn factories_make_independent_instances_and_replay_reproduces_the_expert() {
    let factory = || -> Result<Corridor, EnvError> { Ok(Corridor::new(5)) };
    let mut a = factory.make().unwrap();
    let mut b = factory.make().unwrap();
    let expert = collect_expert_trajectory(&mut a, &TaskRef::index(Split::Train, 3), 1).unwrap();

    // Drive the second instance with the replay policy through the prompt path a model would use.
    let prompter = Prompter::new(PromptConfig::default()).unwrap();
    let policy = ReplayPolicy::new(std::slice::from_ref(&expert));
    let reset = b.reset(&TaskRef::index(Split::Train, 3), 1).unwrap();
    let (mut observation, mut admissible) = (reset.observation, reset.admissible_actions.unwrap());
    let mut won = false;
    for step_index in 0..b.step_budget() {
        let state = AgentState {
            task_id: reset.task.id.clone(),
            task: reset.task.description.clone(),
            step_index,
            history: vec![],
            observation: observation.clone(),
            admissible_actions: admissible.clone(),
        };
        let completion = policy.generate(&[prompter.act_query(&state)], &SamplingParams::greedy()).unwrap();
        let action = parse_action(&completion[0], false).unwrap().action;
        let t = b.step(&action).unwrap();
        (observation, admissible) = (t.observation, t.admissible_actions.unwrap());
        if t.done {
            won = t.won;
            break;
        }
    }
    assert!(won);
    assert!(a.step("fly").unwrap().observation.as_str() == "Nothing happens.");
}

#[test]
fn random_admissible_policy_only_picks_admissible_actions() {
    let mut env = Corridor::new(4);
    let reset = env.reset(&TaskRef::index(Split::Train, 0), 0).unwrap();
    let prompter = Prompter::new(PromptConfig::default()).unwrap();
    let policy = RandomAdmissiblePolicy::new();
    let mut admissible = reset.admissible_actions.unwrap();
    for i in 0..50 {
        let state = AgentState {
            task_id: reset.task.id.clone(),
            task: reset.task.description.clone(),
            step_index: i,
            history: vec![],
            observation: "o".into(),
            admissible_actions: admissible.clone(),
        };
        let out = policy.generate(&[prompter.act_query(&state)], &SamplingParams::default().with_seed(i as u64));
        let action = parse_action(&out.unwrap()[0], false).unwrap().action;
        assert!(admissible.iter().any(|a| a.as_str() == action));
        let t = env.step(&action).unwrap();
        if t.done {
            env.reset(&TaskRef::index(Split::Train, 0), 0).unwrap();
        }
        admissible = env.admissible_actions().unwrap();
    }
}
