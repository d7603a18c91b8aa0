//! Finding `scienceworld.jar` and the folder of resources it expects as working directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::error::SciWorldError;

/// Environment variable naming the jar explicitly.
pub const JAR_ENV_VAR: &str = "SCIENCEWORLD_JAR";
/// Environment variable naming the Python interpreter whose `scienceworld` package holds the jar.
pub const PYTHON_ENV_VAR: &str = "ACT_PYTHON";
/// The jar's file name inside the Python package.
pub const JAR_FILE: &str = "scienceworld.jar";
/// The resource file the simulator reads from its working directory.
pub const OBJECT_TYPES_FILE: &str = "object_type_ids.tsv";

/// Where the jar lives and which folder the JVM runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JarLocation {
    /// Path to `scienceworld.jar`.
    pub jar: PathBuf,
    /// Working directory for the JVM: holds `object_type_ids.tsv`.
    pub working_dir: PathBuf,
}

impl JarLocation {
    /// A location from a jar path: the working directory is the jar's folder when it holds
    /// `object_type_ids.tsv`, else the installed Python package's folder.
    pub fn from_jar(jar: impl Into<PathBuf>) -> Result<Self, SciWorldError> {
        let jar = jar.into();
        if !jar.is_file() {
            return Err(SciWorldError::JarNotFound(format!("{} does not exist or is not a file", jar.display())));
        }
        let beside = jar.parent().map(Path::to_path_buf).unwrap_or_default();
        if beside.join(OBJECT_TYPES_FILE).is_file() {
            return Ok(Self { jar, working_dir: beside });
        }
        match python_package_dir() {
            Ok(dir) if dir.join(OBJECT_TYPES_FILE).is_file() => Ok(Self { jar, working_dir: dir }),
            _ => Err(SciWorldError::JarNotFound(format!(
                "{OBJECT_TYPES_FILE} is neither beside {} nor in an installed `scienceworld` Python package",
                jar.display()
            ))),
        }
    }

    /// Finds the jar: `explicit` if given, else `$SCIENCEWORLD_JAR`, else the `scienceworld`
    /// package of `$ACT_PYTHON` (default `python3`).
    pub fn find(explicit: Option<&Path>) -> Result<Self, SciWorldError> {
        if let Some(path) = explicit {
            return Self::from_jar(path);
        }
        if let Some(path) = std::env::var_os(JAR_ENV_VAR).filter(|p| !p.is_empty()) {
            return Self::from_jar(PathBuf::from(path));
        }
        let dir = python_package_dir().map_err(SciWorldError::JarNotFound)?;
        let jar = dir.join(JAR_FILE);
        if !jar.is_file() {
            return Err(SciWorldError::JarNotFound(format!(
                "the scienceworld package at {} has no {JAR_FILE}",
                dir.display()
            )));
        }
        Self::from_jar(jar)
    }
}

/// The folder of the installed `scienceworld` Python package, asked once per process.
fn python_package_dir() -> Result<PathBuf, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(ask_python).clone()
}

fn ask_python() -> Result<PathBuf, String> {
    let python = std::env::var(PYTHON_ENV_VAR).unwrap_or_else(|_| "python3".to_string());
    // find_spec locates the package without importing it (importing would pull in py4j).
    let script = "import importlib.util as u, sys\n\
                  s = u.find_spec('scienceworld')\n\
                  sys.exit(3) if s is None else print(list(s.submodule_search_locations)[0])";
    let output = Command::new(&python)
        .args(["-c", script])
        .output()
        .map_err(|e| format!("cannot run {python} ({PYTHON_ENV_VAR}) to find the scienceworld package: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "no jar given, {JAR_ENV_VAR} unset, and {python} has no `scienceworld` package \
             (pip install scienceworld==1.2.3)"
        ));
    }
    let dir = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if dir.is_empty() {
        return Err(format!("{python} printed no path for the scienceworld package"));
    }
    Ok(PathBuf::from(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_missing_jar_is_a_clear_error() {
        let err = JarLocation::find(Some(Path::new("/nonexistent/scienceworld.jar"))).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/scienceworld.jar"), "{err}");
    }

    #[test]
    fn jar_with_resources_beside_it_runs_there() {
        let dir = tempfile::tempdir().unwrap();
        let jar = dir.path().join(JAR_FILE);
        std::fs::write(&jar, b"not really a jar").unwrap();
        std::fs::write(dir.path().join(OBJECT_TYPES_FILE), b"a\t0\n").unwrap();
        let location = JarLocation::from_jar(&jar).unwrap();
        assert_eq!(location.jar, jar);
        assert_eq!(location.working_dir, dir.path());
    }
}
