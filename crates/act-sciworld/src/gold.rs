//! Expert data from the simulator's gold action sequences: whole trajectories, and the
//! (state, expert next action) items of the paper's ScienceWorld next-action metric.

use act_core::{Action, AgentState, EnvError, Environment, Outcome, Split, Step, Trajectory};
use serde::{Deserialize, Serialize};

use crate::env::SciWorldEnv;

/// One next-action evaluation item: the state an expert was in and the action it took there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NextActionItem {
    /// `<task id>#<step index>`, unique within a data set.
    pub id: String,
    /// The task name ("boil", ...), for per-task breakdowns.
    pub task_type: String,
    /// The split the variation belongs to.
    pub split: Split,
    /// What the agent sees before the expert's action.
    pub state: AgentState,
    /// The gold path's action in that state.
    pub expert_action: Action,
}

/// Replays the gold action sequence of `task` / `variation` into a trajectory.
///
/// The step limit is raised to the gold length for the replay (some gold paths exceed the
/// default 100) and restored afterwards. The trajectory's `seed` is the variation index, which
/// is the seed the simulator builds the world from. Check `outcome.won` (score 100).
pub fn gold_trajectory(env: &mut SciWorldEnv, task: &str, variation: usize) -> Result<Trajectory, EnvError> {
    let reset = env.reset_variation(task, variation, true)?;
    let gold: Vec<String> = env.gold_actions().map(<[String]>::to_vec).unwrap_or_default();
    if gold.is_empty() {
        return Err(EnvError::Backend(format!("the simulator planned no gold path for {}", reset.task.id)));
    }
    let saved_limit = env.step_budget();
    env.set_step_limit(saved_limit.max(gold.len()));
    let replay = replay(env, &gold, reset.observation, reset.admissible_actions.unwrap_or_default());
    env.set_step_limit(saved_limit);
    let (steps, outcome) = replay?;
    Ok(Trajectory {
        env: env.name().to_string(),
        task_id: reset.task.id,
        task_type: reset.task.task_type,
        split: reset.task.split,
        task: reset.task.description,
        seed: variation as u64,
        steps,
        outcome,
    })
}

fn replay(
    env: &mut SciWorldEnv,
    gold: &[String],
    first_observation: act_core::Observation,
    first_admissible: Vec<Action>,
) -> Result<(Vec<Step>, Outcome), EnvError> {
    let mut observation = first_observation;
    let mut admissible = first_admissible;
    let mut steps = Vec::with_capacity(gold.len());
    let mut outcome = Outcome { won: false, score: 0.0, steps_used: 0 };
    for action in gold {
        let transition = env.step(action)?;
        steps.push(Step {
            observation,
            admissible_actions: admissible,
            action: Action::from(action.as_str()),
            reward: transition.reward,
        });
        outcome = Outcome { won: transition.won, score: transition.score, steps_used: steps.len() };
        observation = transition.observation;
        admissible = transition.admissible_actions.unwrap_or_default();
        if transition.done {
            break;
        }
    }
    Ok((steps, outcome))
}

/// Gold trajectories for every task of the environment's configuration in `split`, taking at
/// most `per_task` variations of each task (in variation order; `None` for all).
pub fn gold_trajectories(
    env: &mut SciWorldEnv,
    split: Split,
    per_task: Option<usize>,
) -> Result<Vec<Trajectory>, EnvError> {
    let members = env.split_members(split)?;
    let mut taken: Vec<(String, usize)> = Vec::new();
    let mut trajectories = Vec::new();
    for (task, variation) in members {
        let count = taken.iter().filter(|(t, _)| *t == task).count();
        if per_task.is_some_and(|limit| count >= limit) {
            continue;
        }
        trajectories.push(gold_trajectory(env, &task, variation)?);
        taken.push((task, variation));
    }
    Ok(trajectories)
}

/// The next-action items of one gold trajectory, each state carrying at most `history_len`
/// earlier (observation, action) pairs.
pub fn next_action_items(trajectory: &Trajectory, history_len: usize) -> Vec<NextActionItem> {
    trajectory
        .states(history_len)
        .map(|(state, action)| NextActionItem {
            id: format!("{}#{}", trajectory.task_id, state.step_index),
            task_type: trajectory.task_type.clone(),
            split: trajectory.split,
            state,
            expert_action: action.clone(),
        })
        .collect()
}

/// Next-action items from the gold trajectories of a held-out split (dev or test), taking at
/// most `per_task` variations per task. Only gold replays that reached score 100 contribute.
pub fn next_action_dataset(
    env: &mut SciWorldEnv,
    split: Split,
    per_task: Option<usize>,
    history_len: usize,
) -> Result<Vec<NextActionItem>, EnvError> {
    if split == Split::Train {
        return Err(EnvError::Config(
            "next-action evaluation uses held-out variations: ask for the dev or test split".into(),
        ));
    }
    let trajectories = gold_trajectories(env, split, per_task)?;
    Ok(trajectories.iter().filter(|t| t.outcome.won).flat_map(|t| next_action_items(t, history_len)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use act_core::Outcome;

    #[test]
    fn items_pair_each_state_with_the_action_taken_there() {
        let step = |o: &str, a: &str| Step {
            observation: o.into(),
            admissible_actions: vec![],
            action: a.into(),
            reward: 0.0,
        };
        let trajectory = Trajectory {
            env: "sciworld".into(),
            task_id: "find-animal-var225".into(),
            task_type: "find-animal".into(),
            split: Split::Test,
            task: "Your task is to find a(n) animal.".into(),
            seed: 225,
            steps: vec![step("hallway", "open door to greenhouse"), step("door open", "go to greenhouse")],
            outcome: Outcome { won: true, score: 100.0, steps_used: 2 },
        };
        let items = next_action_items(&trajectory, 5);
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].id, "find-animal-var225#1");
        assert_eq!(items[1].state.observation.as_str(), "door open");
        assert_eq!(items[1].state.history[0].action.as_str(), "open door to greenhouse");
        assert_eq!(items[1].expert_action.as_str(), "go to greenhouse");
        let json = serde_json::to_string(&items[0]).unwrap();
        let back: NextActionItem = serde_json::from_str(&json).unwrap();
        assert_eq!(back, items[0]);
    }
}
