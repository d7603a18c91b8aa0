//! Finding real ALFWorld games on disk: a directory of `.tw-pddl` games, or a user's `ALFWORLD_DATA` download.
//!
//! A game is one of
//! - a `game.tw-pddl` file (ALFWorld's format: JSON with `pddl_domain`, `grammar`, `pddl_problem`, `solvable`),
//!   usually with a `traj_data.json` beside it (task type and the parameters the handcoded expert needs);
//! - any other `*.tw-pddl` file;
//! - a directory with `initial_state.pddl` and `traj_data.json` but no game file: the worker assembles the game
//!   from the domain and grammar shipped inside the installed `alfworld` package.
//!
//! Like ALFWorld's own loader, discovery skips games marked `"solvable": false` (and game files without the key)
//! and the movable-receptacle and sliced variants; it sorts by path so the same directory always gives the same
//! task indices.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use act_core::{EnvError, Split};
use serde::Deserialize;

/// The ALFWorld data release the upstream loader reads (`$ALFWORLD_DATA/json_2.1.1/...`).
pub const ALFWORLD_JSON_DIR: &str = "json_2.1.1";

/// The upstream split folders and the act-core splits they are.
pub const ALFWORLD_SPLIT_DIRS: [(&str, Split); 3] = [
    ("train", Split::Train),
    ("valid_seen", Split::EvalInDistribution),
    ("valid_unseen", Split::EvalOutOfDistribution),
];

/// One game on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameEntry {
    /// A stable id: the game's path relative to its split root, with `/` separators (the game directory, or the
    /// file for a loose `.tw-pddl` file).
    pub id: String,
    /// What the worker loads: a `.tw-pddl` file or a game directory.
    pub path: PathBuf,
}

/// Games by split.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameSet {
    splits: BTreeMap<Split, Vec<GameEntry>>,
}

#[derive(Deserialize)]
struct SolvableField {
    solvable: Option<bool>,
}

impl GameSet {
    /// An empty set; add splits with [`GameSet::with_split`] or [`GameSet::with_dir`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Every game under `dir` (recursively) as one split.
    pub fn from_dir(dir: impl AsRef<Path>, split: Split) -> Result<Self, EnvError> {
        Self::new().with_dir(split, dir)
    }

    /// The three upstream splits of an ALFWorld data download: `root` is `$ALFWORLD_DATA` (holding `json_2.1.1`)
    /// or the `json_2.1.1` folder itself. Splits whose folder is missing are left out; no split at all is an
    /// error.
    pub fn from_alfworld_data(root: impl AsRef<Path>) -> Result<Self, EnvError> {
        let root = root.as_ref();
        let json_root = if root.join(ALFWORLD_JSON_DIR).is_dir() { root.join(ALFWORLD_JSON_DIR) } else { root.into() };
        let mut set = Self::new();
        for (folder, split) in ALFWORLD_SPLIT_DIRS {
            let dir = json_root.join(folder);
            if dir.is_dir() {
                set = set.with_dir(split, dir)?;
            }
        }
        if set.splits.is_empty() {
            return Err(EnvError::Config(format!(
                "{} holds none of {ALFWORLD_JSON_DIR}/train, valid_seen, valid_unseen (is it an ALFWorld data \
                 download?)",
                root.display()
            )));
        }
        Ok(set)
    }

    /// The games of `$ALFWORLD_DATA`, as [`GameSet::from_alfworld_data`].
    pub fn from_env() -> Result<Self, EnvError> {
        let root =
            std::env::var_os("ALFWORLD_DATA").ok_or_else(|| EnvError::Config("ALFWORLD_DATA is not set".into()))?;
        Self::from_alfworld_data(PathBuf::from(root))
    }

    /// Adds (or replaces) `split` with every game under `dir`. An existing directory with no game is an error.
    pub fn with_dir(self, split: Split, dir: impl AsRef<Path>) -> Result<Self, EnvError> {
        let dir = dir.as_ref();
        let games = discover_games(dir)?;
        if games.is_empty() {
            return Err(EnvError::Config(format!("no ALFWorld game under {}", dir.display())));
        }
        Ok(self.with_split(split, games))
    }

    /// Adds (or replaces) `split` with these games, in this order.
    #[must_use]
    pub fn with_split(mut self, split: Split, games: Vec<GameEntry>) -> Self {
        self.splits.insert(split, games);
        self
    }

    /// The games of `split`, if the set has it.
    pub fn split(&self, split: Split) -> Option<&[GameEntry]> {
        self.splits.get(&split).map(Vec::as_slice)
    }

    /// The splits present, in order.
    pub fn splits(&self) -> impl Iterator<Item = Split> + '_ {
        self.splits.keys().copied()
    }

    /// The number of games in `split`; [`EnvError::UnsupportedSplit`] when the set lacks it.
    pub fn len(&self, split: Split) -> Result<usize, EnvError> {
        self.split(split).map(<[GameEntry]>::len).ok_or(EnvError::UnsupportedSplit(split))
    }

    /// Whether the set holds no game at all.
    pub fn is_empty(&self) -> bool {
        self.splits.values().all(Vec::is_empty)
    }

    /// The game at `index` of `split`.
    pub fn get(&self, split: Split, index: usize) -> Result<&GameEntry, EnvError> {
        let games = self.split(split).ok_or(EnvError::UnsupportedSplit(split))?;
        games.get(index).ok_or_else(|| {
            EnvError::UnknownTask(format!("index {index} of split `{split}`, which has {} games", games.len()))
        })
    }

    /// The game with this id and its split (the first split that has it).
    pub fn find(&self, id: &str) -> Result<(Split, &GameEntry), EnvError> {
        self.splits
            .iter()
            .find_map(|(split, games)| games.iter().find(|game| game.id == id).map(|game| (*split, game)))
            .ok_or_else(|| EnvError::UnknownTask(format!("no game with id `{id}`")))
    }
}

/// Every game under `dir`, sorted by path (see the module docs for what counts as a game).
pub fn discover_games(dir: &Path) -> Result<Vec<GameEntry>, EnvError> {
    if !dir.is_dir() {
        return Err(EnvError::Config(format!("{} is not a directory", dir.display())));
    }
    let mut games = Vec::new();
    walk(dir, dir, &mut games)?;
    games.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(games)
}

fn walk(root: &Path, dir: &Path, games: &mut Vec<GameEntry>) -> Result<(), EnvError> {
    let io = |source| EnvError::Io { context: format!("cannot list {}", dir.display()), source };
    let mut entries: Vec<PathBuf> =
        fs::read_dir(dir).map_err(io)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>().map_err(io)?;
    entries.sort();
    let name_of = |path: &Path| path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if skipped_variant(&name_of(dir)) {
        return Ok(());
    }
    let has = |name: &str| entries.iter().any(|p| p.is_file() && name_of(p) == name);
    if has("game.tw-pddl") {
        let file = dir.join("game.tw-pddl");
        if is_solvable(&file)? {
            games.push(GameEntry { id: relative_id(root, dir), path: file });
        }
    } else if has("initial_state.pddl") && has("traj_data.json") {
        games.push(GameEntry { id: relative_id(root, dir), path: dir.to_path_buf() });
    }
    for path in entries {
        if path.is_dir() {
            walk(root, &path, games)?;
        } else if name_of(&path) != "game.tw-pddl" && name_of(&path).ends_with(".tw-pddl") && is_solvable(&path)? {
            games.push(GameEntry { id: relative_id(root, &path), path });
        }
    }
    Ok(())
}

/// ALFWorld's loader skips the movable-receptacle and sliced trajectories, which the text engine cannot play.
fn skipped_variant(dir_name: &str) -> bool {
    dir_name.contains("movable") || dir_name.contains("Sliced")
}

fn is_solvable(file: &Path) -> Result<bool, EnvError> {
    let text = fs::read_to_string(file)
        .map_err(|source| EnvError::Io { context: format!("cannot read {}", file.display()), source })?;
    let field: SolvableField = serde_json::from_str(&text)
        .map_err(|e| EnvError::Config(format!("{} is not a valid .tw-pddl game: {e}", file.display())))?;
    Ok(field.solvable == Some(true))
}

fn relative_id(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.is_empty() { ".".to_owned() } else { parts.join("/") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn game_json(solvable: Option<bool>) -> String {
        let mut game = serde_json::json!({"pddl_domain": "(define)", "grammar": "", "pddl_problem": "(define)"});
        if let Some(solvable) = solvable {
            game["solvable"] = solvable.into();
        }
        game.to_string()
    }

    #[test]
    fn discovers_game_files_problem_dirs_and_loose_files_in_path_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("b-task/trial_1/game.tw-pddl"), &game_json(Some(true)));
        write(&root.join("b-task/trial_1/traj_data.json"), "{}");
        write(&root.join("a-task/trial_2/initial_state.pddl"), "(define)");
        write(&root.join("a-task/trial_2/traj_data.json"), "{}");
        write(&root.join("loose/extra.tw-pddl"), &game_json(Some(true)));
        write(&root.join("c-task/trial_3/game.tw-pddl"), &game_json(Some(false)));
        write(&root.join("d-task/trial_4/game.tw-pddl"), &game_json(None));
        write(&root.join("movable_recep-task/trial_5/game.tw-pddl"), &game_json(Some(true)));
        write(&root.join("e-task/trial_6/initial_state.pddl"), "(define)");

        let games = discover_games(root).unwrap();
        let ids: Vec<&str> = games.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["a-task/trial_2", "b-task/trial_1", "loose/extra.tw-pddl"]);
        assert!(games[0].path.is_dir());
        assert!(games[1].path.ends_with("game.tw-pddl"));
    }

    #[test]
    fn alfworld_data_layout_maps_to_the_three_splits() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join(ALFWORLD_JSON_DIR);
        for (folder, count) in [("train", 3), ("valid_seen", 1), ("valid_unseen", 2)] {
            for i in 0..count {
                let game = json.join(format!("{folder}/pick_and_place_simple-Apple-None-Fridge-{i}{folder}/trial_T0/"));
                write(&game.join("game.tw-pddl"), &game_json(Some(true)));
                write(&game.join("traj_data.json"), "{}");
            }
        }
        for root in [dir.path().to_path_buf(), json] {
            let set = GameSet::from_alfworld_data(&root).unwrap();
            assert_eq!(set.len(Split::Train).unwrap(), 3);
            assert_eq!(set.len(Split::EvalInDistribution).unwrap(), 1);
            assert_eq!(set.len(Split::EvalOutOfDistribution).unwrap(), 2);
            assert!(matches!(set.len(Split::Dev), Err(EnvError::UnsupportedSplit(Split::Dev))));
            let (split, game) = set.find("pick_and_place_simple-Apple-None-Fridge-1valid_unseen/trial_T0").unwrap();
            assert_eq!(split, Split::EvalOutOfDistribution);
            assert!(game.path.ends_with("game.tw-pddl"));
            assert!(matches!(set.get(Split::Train, 3), Err(EnvError::UnknownTask(_))));
            assert!(matches!(set.find("nope"), Err(EnvError::UnknownTask(_))));
        }
    }

    #[test]
    fn bad_directories_and_bad_game_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(GameSet::from_alfworld_data(dir.path()), Err(EnvError::Config(_))));
        assert!(matches!(GameSet::from_dir(dir.path(), Split::Train), Err(EnvError::Config(_))));
        assert!(matches!(discover_games(&dir.path().join("missing")), Err(EnvError::Config(_))));
        write(&dir.path().join("g/game.tw-pddl"), "not json");
        let error = discover_games(dir.path()).unwrap_err().to_string();
        assert!(error.contains("not a valid .tw-pddl game"), "{error}");
    }
}
