//! Which of upstream's ALFWorld games the native simulator plays, and does its expert win them where the real
//! engine's does?
//!
//! Reads every game under `--games` (an `ALFWORLD_DATA` download, its `json_2.1.1`, or any directory of game
//! directories with `initial_state.pddl` + `traj_data.json`, or `game.tw-pddl` files), loads each into a native
//! world, and counts the games that load and why the others are refused (the reasons with entity ids left out, so
//! that games refused for the same fact count together). The native expert then plays every loaded game in both
//! grammars. With `--real`, the real engine's handcoded expert plays the same loaded games through the bridge (needs
//! `pip install alfworld==0.4.2 "textworld[pddl]==1.7.0"` for `$ACT_PYTHON`, as `tests/run.sh` installs), and every
//! game the real expert wins but the native one loses is listed.
//!
//! ```sh
//! cargo run --release --example alfworld_games -- --games "$ALFWORLD_DATA/json_2.1.1/valid_seen"
//! ACT_PYTHON=.venv/bin/python cargo run --release --example alfworld_games -- --games "$ALFWORLD_DATA" --real
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use act_alfworld::bridge::{
    ALFWORLD_JSON_DIR, ALFWORLD_SPLIT_DIRS, BridgeGrammar, GameEntry, GameSet, RealAlfworld, RealAlfworldConfig,
    discover_games,
};
use act_alfworld::{AlfworldConfig, AlfworldEnv, GrammarVersion, load_scene};
use act_core::{EnvError, Environment, TaskRef, collect_expert_trajectory};
use clap::Parser;

/// Loads upstream's ALFWorld games natively and plays their experts.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// A directory searched recursively for games.
    #[arg(long)]
    games: PathBuf,
    /// Also play the real engine's expert on the loaded games (through the bridge; slow: ~10-75 steps/s).
    #[arg(long)]
    real: bool,
    /// Only the first N games found (0: all).
    #[arg(long, default_value_t = 0)]
    limit: usize,
    /// Reasons listed in the report (the most frequent first).
    #[arg(long, default_value_t = 12)]
    reasons: usize,
}

/// `message` with every PDDL entity id (`drawer_bar__plus_00_dot_45_bar_...`) and the file path replaced by `_`.
fn reason_of(message: &str) -> String {
    // Everything up to the file's path is the same for every game of a kind of error.
    let parts: Vec<&str> = message.split(": ").collect();
    let message = match parts.iter().position(|part| part.contains('/')) {
        Some(path) => parts[path + 1..].join(": "),
        None => message.to_owned(),
    };
    message
        .split(' ')
        .map(|word| {
            let core = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
            if core.contains("_bar_") { word.replace(core, "_") } else { word.to_owned() }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the expert of `env` wins game `id`.
fn expert_wins(env: &mut dyn Environment, id: &str) -> Result<bool, EnvError> {
    Ok(collect_expert_trajectory(env, &TaskRef::Id(id.to_owned()), 0)?.outcome.won)
}

/// The directories to report on: each split folder of an ALFWorld data download (`train`, `valid_seen`,
/// `valid_unseen`, directly or under `json_2.1.1`), or `dir` itself.
fn split_dirs(dir: &Path) -> Vec<PathBuf> {
    let root = if dir.join(ALFWORLD_JSON_DIR).is_dir() { dir.join(ALFWORLD_JSON_DIR) } else { dir.to_path_buf() };
    let splits: Vec<PathBuf> =
        ALFWORLD_SPLIT_DIRS.iter().map(|(folder, _)| root.join(folder)).filter(|d| d.is_dir()).collect();
    if splits.is_empty() { vec![dir.to_path_buf()] } else { splits }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    for dir in split_dirs(&args.games) {
        census(args, &dir)?;
    }
    Ok(())
}

/// The report on the games under `dir`, one split.
fn census(args: &Args, dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut games: Vec<GameEntry> = discover_games(dir)?;
    if args.limit > 0 {
        games.truncate(args.limit);
    }
    if games.is_empty() {
        return Err(format!("no games under {}", dir.display()).into());
    }
    let started = Instant::now();
    let mut loaded = Vec::new();
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    for game in &games {
        match load_scene(&game.path) {
            Ok(_) => loaded.push(game.id.clone()),
            Err(error) => *refused.entry(reason_of(&error.to_string())).or_default() += 1,
        }
    }
    println!("# Upstream's games under `{}` in the native ALFWorld\n", dir.display());
    let share = 100.0 * loaded.len() as f64 / games.len() as f64;
    println!("Games: {}; loaded: {} ({share:.1}%).\n", games.len(), loaded.len());
    let mut reasons: Vec<(String, usize)> = refused.into_iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if !reasons.is_empty() {
        println!("| refused | games |\n|---|---:|");
        for (reason, count) in reasons.iter().take(args.reasons) {
            println!("| {} | {count} |", reason.replace('|', "\\|"));
        }
        let rest: usize = reasons.iter().skip(args.reasons).map(|r| r.1).sum();
        if rest > 0 {
            println!("| {} other reasons | {rest} |", reasons.len() - args.reasons);
        }
        println!();
    }

    let mut native_lost: BTreeMap<&'static str, Vec<&str>> = BTreeMap::new();
    for (grammar, bridge, name) in
        [(GrammarVersion::V03, BridgeGrammar::V03, "0.3"), (GrammarVersion::V04, BridgeGrammar::V04, "0.4")]
    {
        let mut native = AlfworldEnv::new(AlfworldConfig::default().with_game_dir(dir).with_grammar(grammar))?;
        for id in &loaded {
            if !expert_wins(&mut native, id)? {
                native_lost.entry(name).or_default().push(id);
            }
        }
        let lost = native_lost.get(name).map_or(0, Vec::len);
        println!("Grammar {name}: the native expert wins {} of {} loaded games.", loaded.len() - lost, loaded.len());
        if args.real {
            let set = GameSet::from_dir(dir, act_core::Split::Train)?;
            let mut real = RealAlfworld::new(RealAlfworldConfig::default().with_grammar(bridge), set)?;
            let wins: Vec<bool> = loaded
                .iter()
                .map(|id| match expert_wins(&mut real, id) {
                    Ok(won) => Ok(won),
                    // Upstream's expert raises on some games; the worker reports it and the game counts as lost.
                    Err(EnvError::Config(message)) | Err(EnvError::Backend(message)) => {
                        eprintln!("{id}: the real engine's expert failed: {message}");
                        Ok(false)
                    }
                    Err(other) => Err(other),
                })
                .collect::<Result<_, EnvError>>()?;
            let native_lost_here = native_lost.get(name).cloned().unwrap_or_default();
            let worse: Vec<&String> = loaded
                .iter()
                .zip(&wins)
                .filter(|(id, won)| **won && native_lost_here.contains(&id.as_str()))
                .map(|(id, _)| id)
                .collect();
            println!(
                "Grammar {name}: the real engine's expert wins {} of them; the native expert loses {} of those{}",
                wins.iter().filter(|w| **w).count(),
                worse.len(),
                if worse.is_empty() { ".".to_owned() } else { format!(": {worse:?}") }
            );
        }
    }
    for (name, lost) in &native_lost {
        println!("\nGames the native expert loses in grammar {name}: {lost:?}");
    }
    println!("\n({:.1} s)\n", started.elapsed().as_secs_f64());
    Ok(())
}

fn main() {
    let args = Args::parse();
    if let Err(error) = run(&args) {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::reason_of;

    #[test]
    fn reasons_leave_out_paths_and_entity_ids() {
        let message = "invalid environment configuration: /data/a/initial_state.pddl: \
                       `(openable drawer_bar__plus_00_dot_45_bar__minus_02_dot_43)` is false";
        assert_eq!(reason_of(message), "`(openable _)` is false");
        assert_eq!(reason_of("no `:init` section"), "no `:init` section");
    }
}
