//! What another action would have done: one step off a recorded episode.
//!
//! Early Experience (Zhang et al. 2025, the ACT paper's reflection baseline) trains on the next observations of
//! actions the expert did not take. [`branch_outcomes`] gets them: it resets an environment on the episode's task
//! and seed and walks the recorded actions once (checking that every observation is the one recorded, so a state is
//! never silently a different one); at each requested state it takes a snapshot ([`Environment::snapshot`]), takes
//! each requested action and restores the snapshot after it. Where the environment takes no snapshots (an external
//! engine), it replays the recorded actions from a reset for every request instead: episodes are reproducible from
//! (task, seed), so replay reaches the exact state on any environment, at the cost of the prefix's steps.

use act_core::{Action, EnvError, Environment, EnvironmentFactory, Observation, TaskRef, Trajectory};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::RolloutError;

/// One action to try at one state of a recorded episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchRequest {
    /// The episode: an index into the trajectories given to [`branch_outcomes`].
    pub trajectory: usize,
    /// The state: the one before step `step_index` of that episode (0 is the first observation).
    pub step_index: usize,
    /// The action to take there.
    pub action: Action,
}

/// What the environment answered to a [`BranchRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    /// The episode's task id.
    pub task_id: String,
    /// The state the action was taken in (see [`BranchRequest::step_index`]).
    pub step_index: usize,
    /// The action taken.
    pub action: Action,
    /// The observation that followed.
    pub observation: Observation,
    /// The step's reward.
    pub reward: f64,
    /// Whether the episode ended with it.
    pub done: bool,
    /// Whether the action was one of the admissible actions at that state (`None` where the environment lists none).
    pub admissible: Option<bool>,
}

/// Takes each request's action at its state and returns the outcomes in request order.
///
/// Requests of one episode are played by one worker, the episodes in parallel, each worker on its own environment
/// from `factory`; the result does not depend on the thread count. Fails when a request names an episode or a
/// step that does not exist, or when the replay sees another observation than the one recorded (an environment
/// that is not reproducible, or a trajectory recorded under other settings).
pub fn branch_outcomes<F: EnvironmentFactory>(
    factory: &F,
    trajectories: &[Trajectory],
    requests: &[BranchRequest],
) -> Result<Vec<Branch>, RolloutError> {
    for (i, request) in requests.iter().enumerate() {
        let Some(trajectory) = trajectories.get(request.trajectory) else {
            return Err(RolloutError::Config(format!(
                "branch request {i} names episode {} of {}",
                request.trajectory,
                trajectories.len()
            )));
        };
        if request.step_index >= trajectory.steps.len() {
            return Err(RolloutError::Config(format!(
                "branch request {i} names state {} of episode `{}`, which has {} steps",
                request.step_index,
                trajectory.task_id,
                trajectory.steps.len()
            )));
        }
    }
    let mut by_episode: Vec<Vec<usize>> = vec![Vec::new(); trajectories.len()];
    for (i, request) in requests.iter().enumerate() {
        by_episode[request.trajectory].push(i);
    }
    let played: Vec<Vec<(usize, Branch)>> = by_episode
        .par_iter()
        .enumerate()
        .filter(|(_, wanted)| !wanted.is_empty())
        .map_init(
            || factory.make(),
            |env, (episode, wanted)| {
                let env = env.as_mut().map_err(|e| RolloutError::MakeEnv(clone_env_error(e)))?;
                branch_episode(env, &trajectories[episode], requests, wanted)
                    .map_err(|source| RolloutError::Env { episode, source })
            },
        )
        .collect::<Result<_, _>>()?;
    let mut out: Vec<Option<Branch>> = vec![None; requests.len()];
    for (i, branch) in played.into_iter().flatten() {
        out[i] = Some(branch);
    }
    Ok(out.into_iter().map(|b| b.expect("every request is played once")).collect())
}

/// Plays the requests `wanted` (indices into `requests`, all of `trajectory`) on `env`: one walk along the episode
/// with a snapshot at each requested state, or a replay per request where `env` takes no snapshots.
fn branch_episode<E: Environment + ?Sized>(
    env: &mut E,
    trajectory: &Trajectory,
    requests: &[BranchRequest],
    wanted: &[usize],
) -> Result<Vec<(usize, Branch)>, EnvError> {
    let mut order = wanted.to_vec();
    order.sort_by_key(|&i| requests[i].step_index);
    let reset = env.reset(&TaskRef::Id(trajectory.task_id.clone()), trajectory.seed)?;
    let (mut observation, mut admissible) = (reset.observation, reset.admissible_actions);
    let mut at = 0;
    let mut out = Vec::with_capacity(order.len());
    for (n, &i) in order.iter().enumerate() {
        let request = &requests[i];
        while at < request.step_index {
            check_replay(trajectory, at, &observation)?;
            let transition = env.step(trajectory.steps[at].action.as_str())?;
            (observation, admissible) = (transition.observation, transition.admissible_actions);
            at += 1;
        }
        check_replay(trajectory, at, &observation)?;
        let Some(snapshot) = env.snapshot() else {
            // No snapshots here: replay from a reset for this request and every later one.
            for &i in &order[n..] {
                out.push((i, branch_once(env, trajectory, &requests[i])?));
            }
            return Ok(out);
        };
        let transition = env.step(request.action.as_str())?;
        out.push((i, branch_of(trajectory, request, transition, admissible.as_deref())));
        env.restore(&snapshot)?;
    }
    Ok(out)
}

/// Fails unless `observation` is the one `trajectory` recorded before step `t`.
fn check_replay(trajectory: &Trajectory, t: usize, observation: &Observation) -> Result<(), EnvError> {
    if *observation != trajectory.steps[t].observation {
        return Err(EnvError::Backend(format!(
            "{}: the replay of step {t} sees another observation than the episode did ({observation:?}, not {:?})",
            trajectory.task_id, trajectory.steps[t].observation
        )));
    }
    Ok(())
}

/// The outcome of `request`: the environment answered `transition` in a state that admitted `admissible`.
fn branch_of(
    trajectory: &Trajectory,
    request: &BranchRequest,
    transition: act_core::Transition,
    admissible: Option<&[Action]>,
) -> Branch {
    Branch {
        task_id: trajectory.task_id.clone(),
        step_index: request.step_index,
        action: request.action.clone(),
        observation: transition.observation,
        reward: transition.reward,
        done: transition.done,
        admissible: admissible.map(|list| list.contains(&request.action)),
    }
}

/// Replays `trajectory` up to the request's state on `env`, then takes the request's action.
fn branch_once<E: Environment + ?Sized>(
    env: &mut E,
    trajectory: &Trajectory,
    request: &BranchRequest,
) -> Result<Branch, EnvError> {
    let reset = env.reset(&TaskRef::Id(trajectory.task_id.clone()), trajectory.seed)?;
    let (mut observation, mut admissible) = (reset.observation, reset.admissible_actions);
    for t in 0..request.step_index {
        check_replay(trajectory, t, &observation)?;
        let transition = env.step(trajectory.steps[t].action.as_str())?;
        (observation, admissible) = (transition.observation, transition.admissible_actions);
    }
    check_replay(trajectory, request.step_index, &observation)?;
    let transition = env.step(request.action.as_str())?;
    Ok(branch_of(trajectory, request, transition, admissible.as_deref()))
}

/// `EnvError` is not `Clone`; a worker whose environment failed to build reports the failure by its message.
fn clone_env_error(error: &EnvError) -> EnvError {
    EnvError::Backend(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EpisodeSpec, ExpertActor, Rollout};
    use act_alfworld::{AlfworldConfig, AlfworldEnv};
    use act_core::Split;

    fn factory() -> impl Fn() -> Result<AlfworldEnv, EnvError> + Send + Sync {
        || AlfworldEnv::new(AlfworldConfig::default().with_train_size(6))
    }

    fn expert_episodes(n: usize) -> Vec<Trajectory> {
        let specs = EpisodeSpec::split(Split::Train, n, 3);
        Rollout::new(&factory(), &ExpertActor).play(&specs).unwrap().into_iter().map(|e| e.trajectory).collect()
    }

    #[test]
    fn a_branch_on_the_recorded_action_sees_the_recorded_next_observation() {
        let episodes = expert_episodes(4);
        let requests: Vec<BranchRequest> = episodes
            .iter()
            .enumerate()
            .flat_map(|(e, t)| {
                (0..t.steps.len() - 1).map(move |s| BranchRequest {
                    trajectory: e,
                    step_index: s,
                    action: t.steps[s].action.clone(),
                })
            })
            .collect();
        let branches = branch_outcomes(&factory(), &episodes, &requests).unwrap();
        assert_eq!(branches.len(), requests.len());
        for (request, branch) in requests.iter().zip(&branches) {
            let next = &episodes[request.trajectory].steps[request.step_index + 1].observation;
            assert_eq!(&branch.observation, next, "{request:?}");
            assert_eq!(branch.admissible, Some(true));
            assert_eq!(branch.step_index, request.step_index);
        }
    }

    #[test]
    fn a_branch_equals_a_fresh_replay_and_another_action_is_answered() {
        let episodes = expert_episodes(3);
        let (e, s) = (1, episodes[1].steps.len() / 2);
        let requests = [
            BranchRequest { trajectory: e, step_index: s, action: "go to nowhere 7".into() },
            BranchRequest { trajectory: e, step_index: s, action: "look".into() },
            BranchRequest { trajectory: 0, step_index: 0, action: "inventory".into() },
        ];
        let branches = branch_outcomes(&factory(), &episodes, &requests).unwrap();
        assert_eq!(branches[0].observation.as_str(), "Nothing happens.");
        assert_eq!(branches[0].admissible, Some(false));
        // The same state reached by hand.
        let mut env = factory()().unwrap();
        env.reset(&TaskRef::Id(episodes[e].task_id.clone()), episodes[e].seed).unwrap();
        for step in &episodes[e].steps[..s] {
            env.step(step.action.as_str()).unwrap();
        }
        let by_hand = env.step("look").unwrap();
        assert_eq!(branches[1].observation, by_hand.observation);
        assert_eq!(branches[2].task_id, episodes[0].task_id);
        assert_eq!(branches, branch_outcomes(&factory(), &episodes, &requests).unwrap(), "deterministic");
    }

    /// ALFWorld without its snapshots: `branch_outcomes` replays from a reset for every request.
    struct NoSnapshots(AlfworldEnv);

    impl Environment for NoSnapshots {
        fn name(&self) -> &str {
            "alfworld-replayed"
        }
        fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
            self.0.num_tasks(split)
        }
        fn reset(&mut self, task: &TaskRef, seed: u64) -> Result<act_core::Reset, EnvError> {
            self.0.reset(task, seed)
        }
        fn step(&mut self, action: &str) -> Result<act_core::Transition, EnvError> {
            self.0.step(action)
        }
        fn admissible_actions(&self) -> Option<Vec<Action>> {
            self.0.admissible_actions()
        }
        fn task(&self) -> Option<&act_core::TaskInfo> {
            self.0.task()
        }
        fn step_budget(&self) -> usize {
            self.0.step_budget()
        }
    }

    #[test]
    fn snapshots_and_replays_give_the_same_branches() {
        let episodes = expert_episodes(5);
        // Several actions per state, out of order: the expert's, an admissible other, a wrong one, one that ends
        // nothing; at every state of every episode.
        let mut requests = Vec::new();
        for (e, t) in episodes.iter().enumerate().rev() {
            for s in (0..t.steps.len()).rev() {
                let other = t.steps[s].admissible_actions.iter().find(|a| **a != t.steps[s].action).cloned();
                requests.push(BranchRequest { trajectory: e, step_index: s, action: t.steps[s].action.clone() });
                requests.extend(other.map(|action| BranchRequest { trajectory: e, step_index: s, action }));
                requests.push(BranchRequest { trajectory: e, step_index: s, action: "go to shelf 99".into() });
            }
        }
        let snapshots = branch_outcomes(&factory(), &episodes, &requests).unwrap();
        let replays = || -> Result<NoSnapshots, EnvError> { Ok(NoSnapshots(factory()()?)) };
        assert!(replays().unwrap().snapshot().is_none());
        let replayed = branch_outcomes(&replays, &episodes, &requests).unwrap();
        assert_eq!(snapshots, replayed);
        // The last step of a won episode wins in its branch too, and the walk goes on after restoring it.
        let wins = snapshots.iter().filter(|b| b.reward == 1.0).count();
        assert_eq!(wins, episodes.iter().filter(|t| t.outcome.won).count());
        let other = snapshots.iter().filter(|b| b.admissible == Some(true)).count();
        assert!(other > requests.len() / 2, "{other} admissible of {}", requests.len());
    }

    #[test]
    fn requests_outside_the_episodes_are_errors() {
        let episodes = expert_episodes(1);
        let past = BranchRequest { trajectory: 0, step_index: episodes[0].steps.len(), action: "look".into() };
        let err = branch_outcomes(&factory(), &episodes, &[past]).unwrap_err().to_string();
        assert!(err.contains("has"), "{err}");
        let missing = BranchRequest { trajectory: 5, step_index: 0, action: "look".into() };
        assert!(branch_outcomes(&factory(), &episodes, &[missing]).unwrap_err().to_string().contains("episode 5"));
    }
}
