//! The 30 ScienceWorld tasks, their topics, and the train / dev / test variation splits.

use act_core::Split;

/// One task of the benchmark, as the paper and the Python package's `tasks.json` list it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSpec {
    /// The paper's id ("1-1" ... "10-2"): topic number, task number.
    pub id: &'static str,
    /// The topic ("Matter", "Measurement", ...).
    pub topic: &'static str,
    /// The task's title in the paper.
    pub title: &'static str,
    /// The simulator's task name (what `load` takes).
    pub name: &'static str,
}

const fn spec(id: &'static str, topic: &'static str, title: &'static str, name: &'static str) -> TaskSpec {
    TaskSpec { id, topic, title, name }
}

/// All 30 tasks, in the paper's order (the jar lists them alphabetically).
pub const TASKS: [TaskSpec; 30] = [
    spec("1-1", "Matter", "Changes of State (Boiling)", "boil"),
    spec("1-2", "Matter", "Changes of State (Melting)", "melt"),
    spec("1-3", "Matter", "Changes of State (Freezing)", "freeze"),
    spec("1-4", "Matter", "Changes of State (Any)", "change-the-state-of-matter-of"),
    spec("2-1", "Measurement", "Use Thermometer", "use-thermometer"),
    spec("2-2", "Measurement", "Measuring Boiling Point (known)", "measure-melting-point-known-substance"),
    spec("2-3", "Measurement", "Measuring Boiling Point (unknown)", "measure-melting-point-unknown-substance"),
    spec("3-1", "Electricity", "Create a circuit", "power-component"),
    spec("3-2", "Electricity", "Renewable vs Non-renewable Energy", "power-component-renewable-vs-nonrenewable-energy"),
    spec("3-3", "Electricity", "Test Conductivity (known)", "test-conductivity"),
    spec("3-4", "Electricity", "Test Conductivity (unknown)", "test-conductivity-of-unknown-substances"),
    spec("4-1", "Classification", "Find a living thing", "find-living-thing"),
    spec("4-2", "Classification", "Find a non-living thing", "find-non-living-thing"),
    spec("4-3", "Classification", "Find a plant", "find-plant"),
    spec("4-4", "Classification", "Find an animal", "find-animal"),
    spec("5-1", "Biology", "Grow a plant", "grow-plant"),
    spec("5-2", "Biology", "Grow a fruit", "grow-fruit"),
    spec("6-1", "Chemistry", "Mixing (generic)", "chemistry-mix"),
    spec("6-2", "Chemistry", "Mixing paints (secondary colours)", "chemistry-mix-paint-secondary-color"),
    spec("6-3", "Chemistry", "Mixing paints (tertiary colours)", "chemistry-mix-paint-tertiary-color"),
    spec("7-1", "Biology", "Identify longest-lived animal", "lifespan-longest-lived"),
    spec("7-2", "Biology", "Identify shortest-lived animal", "lifespan-shortest-lived"),
    spec("7-3", "Biology", "Identify longest-then-shortest-lived animal", "lifespan-longest-lived-then-shortest-lived"),
    spec("8-1", "Biology", "Identify life stages (plant)", "identify-life-stages-1"),
    spec("8-2", "Biology", "Identify life stages (animal)", "identify-life-stages-2"),
    spec("9-1", "Forces", "Inclined Planes (determine angle)", "inclined-plane-determine-angle"),
    spec("9-2", "Forces", "Friction (known surfaces)", "inclined-plane-friction-named-surfaces"),
    spec("9-3", "Forces", "Friction (unknown surfaces)", "inclined-plane-friction-unnamed-surfaces"),
    spec("10-1", "Biology", "Mendelian Genetics (known plants)", "mendelian-genetics-known-plant"),
    spec("10-2", "Biology", "Mendelian Genetics (unknown plants)", "mendelian-genetics-unknown-plant"),
];

/// Looks a task up by simulator name ("find-animal") or paper id ("4-4").
pub fn find_task(name_or_id: &str) -> Option<&'static TaskSpec> {
    let key = name_or_id.trim();
    TASKS.iter().find(|t| t.name == key || t.id == key)
}

/// The paper's topic number of a task ("4-4" is in topic 4), grouping the 10 topics.
pub fn topic_number(task: &TaskSpec) -> u32 {
    task.id.split('-').next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// Whether a task needs electrical actions (so `noElectricalAction` cannot apply), as the Python
/// wrapper decides it.
pub fn is_electrical(task_name: &str) -> bool {
    task_name.contains("power-component") || task_name.contains("conductivity")
}

/// The train / dev / test variation indices of a task with `max_variations` variations.
///
/// This is the simulator's own rule (`PythonInterface.getSets`): quarters 2/1/1, with special
/// cases under five variations. Where the quarters do not divide evenly, the last partial group
/// joins test; with groups of one and more than five of them, variations past the fifth group are
/// in no split, as in the jar. Tests check the result against the jar for every task.
pub fn variation_splits(max_variations: usize) -> [Vec<usize>; 3] {
    match max_variations {
        0 => [vec![], vec![], vec![]],
        1 => [vec![0], vec![], vec![0]],
        2 => [vec![0], vec![], vec![1]],
        3 => [vec![0], vec![1], vec![2]],
        4 => [vec![0, 1], vec![2], vec![3]],
        n => {
            let group = n / 4;
            let groups: Vec<Vec<usize>> = (0..n).collect::<Vec<_>>().chunks(group).map(<[usize]>::to_vec).collect();
            let train = [groups[0].clone(), groups[1].clone()].concat();
            let dev = groups[2].clone();
            let mut test = groups[3].clone();
            if let Some(extra) = groups.get(4) {
                test.extend_from_slice(extra);
            }
            [train, dev, test]
        }
    }
}

/// The variations of `split` for a task with `max_variations` variations; `None` for splits
/// ScienceWorld does not have (the ALFWorld-style in / out of distribution evaluation splits).
pub fn split_variations(max_variations: usize, split: Split) -> Option<Vec<usize>> {
    let [train, dev, test] = variation_splits(max_variations);
    match split {
        Split::Train => Some(train),
        Split::Dev => Some(dev),
        Split::Test => Some(test),
        Split::EvalInDistribution | Split::EvalOutOfDistribution => None,
    }
}

/// How [`TaskRef::Index`](act_core::TaskRef::Index) numbers the (task, variation) pairs of a split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum TaskOrder {
    /// Every variation of the first task, then of the second, ... (the jar's own listing).
    #[default]
    TaskMajor,
    /// The first variation of every task, then the second of every task, ...: the first `n` indices spread over
    /// the tasks, so a run on `n` tasks does not see only the first task.
    RoundRobin,
}

/// The (task, variation) pairs of `per_task` (each task's variations, in order), numbered as `order` says.
pub fn order_members(per_task: &[(String, Vec<usize>)], order: TaskOrder) -> Vec<(String, usize)> {
    match order {
        TaskOrder::TaskMajor => {
            per_task.iter().flat_map(|(name, vs)| vs.iter().map(move |&v| (name.clone(), v))).collect()
        }
        TaskOrder::RoundRobin => {
            let rounds = per_task.iter().map(|(_, vs)| vs.len()).max().unwrap_or(0);
            (0..rounds)
                .flat_map(|round| per_task.iter().filter_map(move |(name, vs)| Some((name.clone(), *vs.get(round)?))))
                .collect()
        }
    }
}

/// A task-variation identifier: `<task name>-var<variation>` (for example `boil-var12`).
pub fn task_id(task_name: &str, variation: usize) -> String {
    format!("{task_name}-var{variation}")
}

/// Parses [`task_id`]'s format back into (task name, variation).
pub fn parse_task_id(id: &str) -> Option<(&str, usize)> {
    let (name, variation) = id.trim().rsplit_once("-var")?;
    let variation = variation.parse().ok()?;
    (!name.is_empty()).then_some((name, variation))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn thirty_tasks_in_ten_topics() {
        let mut topics: Vec<u32> = TASKS.iter().map(topic_number).collect();
        topics.dedup();
        assert_eq!(topics, (1..=10).collect::<Vec<_>>());
        assert_eq!(find_task("4-4").unwrap().name, "find-animal");
        assert_eq!(find_task("boil").unwrap().id, "1-1");
        assert!(find_task("nonsense").is_none());
    }

    #[test]
    fn small_variation_counts_follow_the_special_cases() {
        assert_eq!(variation_splits(4), [vec![0, 1], vec![2], vec![3]]);
        assert_eq!(variation_splits(10), [vec![0, 1, 2, 3], vec![4, 5], vec![6, 7, 8, 9]]);
        // Groups of one: the sixth variation belongs to no split, as in the jar.
        assert_eq!(variation_splits(6), [vec![0, 1], vec![2], vec![3, 4]]);
        assert_eq!(split_variations(4, Split::EvalOutOfDistribution), None);
    }

    #[test]
    fn task_ids_round_trip() {
        assert_eq!(task_id("boil", 12), "boil-var12");
        assert_eq!(parse_task_id("boil-var12"), Some(("boil", 12)));
        assert_eq!(parse_task_id("identify-life-stages-1-var0"), Some(("identify-life-stages-1", 0)));
        assert_eq!(parse_task_id("boil"), None);
        assert_eq!(parse_task_id("-var3"), None);
        assert_eq!(parse_task_id("boil-varx"), None);
    }

    #[test]
    fn round_robin_interleaves_tasks() {
        let per_task =
            vec![("a".to_string(), vec![0, 1, 2]), ("b".to_string(), vec![5]), ("c".to_string(), vec![7, 8])];
        let names = |order| -> Vec<String> {
            order_members(&per_task, order).into_iter().map(|(n, v)| format!("{n}{v}")).collect()
        };
        assert_eq!(names(TaskOrder::TaskMajor), ["a0", "a1", "a2", "b5", "c7", "c8"]);
        assert_eq!(names(TaskOrder::RoundRobin), ["a0", "b5", "c7", "a1", "c8", "a2"]);
    }

    proptest! {
        #[test]
        fn round_robin_is_a_permutation_that_starts_with_every_task(
            counts in proptest::collection::vec(0usize..6, 0..8),
        ) {
            let per_task: Vec<(String, Vec<usize>)> =
                counts.iter().enumerate().map(|(t, &n)| (format!("t{t}"), (0..n).collect())).collect();
            let major = order_members(&per_task, TaskOrder::TaskMajor);
            let robin = order_members(&per_task, TaskOrder::RoundRobin);
            let (mut a, mut b) = (major.clone(), robin.clone());
            a.sort();
            b.sort();
            prop_assert_eq!(a, b);
            let non_empty = counts.iter().filter(|&&n| n > 0).count();
            let mut first: Vec<&String> = robin.iter().take(non_empty).map(|(n, _)| n).collect();
            first.dedup();
            prop_assert_eq!(first.len(), non_empty);
        }

        #[test]
        fn splits_are_disjoint_ordered_and_in_range(n in 0usize..2000) {
            let [train, dev, test] = variation_splits(n);
            let mut all: Vec<usize> = train.iter().chain(&dev).chain(&test).copied().collect();
            prop_assert!(all.iter().all(|&v| v < n.max(1)));
            if n >= 2 {
                let len = all.len();
                all.dedup();
                prop_assert_eq!(all.len(), len, "overlap");
                prop_assert!(all.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(!train.is_empty() && !test.is_empty());
            }
            if n >= 8 {
                prop_assert!(train.len() >= dev.len() && !dev.is_empty());
            }
        }
    }
}
