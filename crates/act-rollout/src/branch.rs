//! What another action would have done: one step off a recorded episode.
//!
//! Early Experience (Zhang et al. 2025, the ACT paper's reflection baseline) trains on the next observations of
//! actions the expert did not take. [`branch_outcomes`] gets them: for each [`BranchRequest`] it resets a fresh
//! environment on the episode's task and seed, replays the recorded actions up to the requested state (checking that
//! every observation is the one recorded, so a state is never silently a different one), takes the requested action
//! there and returns what the environment answered. Episodes are reproducible from (task, seed), so replay reaches
//! the exact state on any environment; on the native ones a replay of a few dozen steps costs microseconds.

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
                wanted
                    .iter()
                    .map(|&i| {
                        let branch = branch_once(env, &trajectories[episode], &requests[i])
                            .map_err(|source| RolloutError::Env { episode, source })?;
                        Ok((i, branch))
                    })
                    .collect::<Result<Vec<_>, RolloutError>>()
            },
        )
        .collect::<Result<_, _>>()?;
    let mut out: Vec<Option<Branch>> = vec![None; requests.len()];
    for (i, branch) in played.into_iter().flatten() {
        out[i] = Some(branch);
    }
    Ok(out.into_iter().map(|b| b.expect("every request is played once")).collect())
}

/// Replays `trajectory` up to the request's state on `env`, then takes the request's action.
fn branch_once<E: Environment + ?Sized>(
    env: &mut E,
    trajectory: &Trajectory,
    request: &BranchRequest,
) -> Result<Branch, EnvError> {
    let reset = env.reset(&TaskRef::Id(trajectory.task_id.clone()), trajectory.seed)?;
    let mut observation = reset.observation;
    let mut admissible = reset.admissible_actions;
    for (t, step) in trajectory.steps.iter().enumerate().take(request.step_index + 1) {
        if observation != step.observation {
            return Err(EnvError::Backend(format!(
                "{}: the replay of step {t} sees another observation than the episode did ({observation:?}, not {:?})",
                trajectory.task_id, step.observation
            )));
        }
        if t == request.step_index {
            break;
        }
        let transition = env.step(step.action.as_str())?;
        observation = transition.observation;
        admissible = transition.admissible_actions;
    }
    let transition = env.step(request.action.as_str())?;
    Ok(Branch {
        task_id: trajectory.task_id.clone(),
        step_index: request.step_index,
        action: request.action.clone(),
        observation: transition.observation,
        reward: transition.reward,
        done: transition.done,
        admissible: admissible.map(|list| list.contains(&request.action)),
    })
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
