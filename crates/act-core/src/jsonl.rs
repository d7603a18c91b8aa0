//! JSONL datasets: streaming reads whose errors name the file, line and field, and atomic writes.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::DatasetError;

/// Reads every record of a JSONL file. Blank lines are skipped; any other bad line is an error naming it.
///
/// ```
/// use act_core::{read_jsonl, write_jsonl, SftSample};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("sft.jsonl");
/// let samples = vec![SftSample { id: "t#0".into(), prompt: "p".into(), completion: "<action>look</action>".into() }];
/// write_jsonl(&path, &samples).unwrap();
/// assert_eq!(read_jsonl::<SftSample>(&path).unwrap(), samples);
///
/// std::fs::write(&path, "{\"id\": \"t#0\", \"prompt\": \"p\"}\n").unwrap();
/// let err = read_jsonl::<SftSample>(&path).unwrap_err();
/// assert_eq!(err.line(), Some(1));
/// assert_eq!(err.field(), Some("completion"));
/// ```
pub fn read_jsonl<T: DeserializeOwned>(path: impl AsRef<Path>) -> Result<Vec<T>, DatasetError> {
    JsonlReader::open(path)?.collect()
}

/// Writes `records` to `path` as JSONL, atomically: readers see the old file or the whole new one, never a part.
pub fn write_jsonl<'a, T: Serialize + 'a>(
    path: impl AsRef<Path>,
    records: impl IntoIterator<Item = &'a T>,
) -> Result<(), DatasetError> {
    let mut writer = JsonlWriter::create(path)?;
    for record in records {
        writer.write(record)?;
    }
    writer.finish()
}

/// A streaming JSONL reader: an iterator of records, each error naming file, line and field.
pub struct JsonlReader<T> {
    path: PathBuf,
    lines: std::io::Lines<BufReader<File>>,
    line: usize,
    _record: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> JsonlReader<T> {
    /// Opens `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, DatasetError> {
        let path = path.as_ref().to_owned();
        let file = File::open(&path).map_err(|source| DatasetError::Io { path: path.clone(), source })?;
        Ok(JsonlReader { path, lines: BufReader::new(file).lines(), line: 0, _record: PhantomData })
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl<T: DeserializeOwned> Iterator for JsonlReader<T> {
    type Item = Result<T, DatasetError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let text = match self.lines.next()? {
                Ok(text) => text,
                Err(source) => {
                    // Stop after an I/O error: the position in the file is no longer known.
                    let err = DatasetError::Io { path: self.path.clone(), source };
                    self.lines = BufReader::new(File::open("/dev/null").ok()?).lines();
                    return Some(Err(err));
                }
            };
            self.line += 1;
            if text.trim().is_empty() {
                continue;
            }
            return Some(parse_record(&text, &self.path, self.line));
        }
    }
}

/// Parses one JSON record, naming `path`, `line` and the field at fault on error.
pub(crate) fn parse_record<T: DeserializeOwned>(text: &str, path: &Path, line: usize) -> Result<T, DatasetError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let record = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let path_text = err.path().to_string();
        let (mut field, message) = ((path_text != ".").then_some(path_text), describe(err.inner()));
        if let Some(missing) = message.strip_prefix("missing field `").and_then(|m| m.split('`').next()) {
            field = Some(match field {
                Some(parent) => format!("{parent}.{missing}"),
                None => missing.to_owned(),
            });
        }
        DatasetError::Parse { path: path.to_owned(), line, field, message }
    })?;
    // Trailing garbage after the record is an error too.
    de.end().map_err(|err| DatasetError::Parse {
        path: path.to_owned(),
        line,
        field: None,
        message: describe(&err),
    })?;
    Ok(record)
}

/// serde_json's message with its "at line 1 column N" (always line 1 within a record) turned into the column.
fn describe(err: &serde_json::Error) -> String {
    let mut message = err.to_string();
    if let Some(at) = message.rfind(" at line ") {
        message.truncate(at);
        message.push_str(&format!(" (column {})", err.column()));
    }
    message
}

/// An atomic JSONL writer: records go to a temporary file beside `path`, renamed over it by [`finish`](Self::finish).
/// Dropped without `finish`, it removes the temporary file and leaves `path` untouched.
pub struct JsonlWriter<T> {
    path: PathBuf,
    temp: PathBuf,
    out: Option<BufWriter<File>>,
    written: usize,
    _record: PhantomData<fn(&T)>,
}

impl<T: Serialize> JsonlWriter<T> {
    /// Starts writing `path`, creating its parent directory if needed.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, DatasetError> {
        let path = path.as_ref().to_owned();
        let io = |source| DatasetError::Io { path: path.clone(), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let temp = temp_path(&path);
        let file = File::create(&temp).map_err(io)?;
        Ok(JsonlWriter { path, temp, out: Some(BufWriter::new(file)), written: 0, _record: PhantomData })
    }

    /// Appends one record.
    pub fn write(&mut self, record: &T) -> Result<(), DatasetError> {
        let line = serde_json::to_string(record).map_err(|e| DatasetError::Serialize {
            path: self.path.clone(),
            index: self.written,
            message: e.to_string(),
        })?;
        let out = self.out.as_mut().expect("the writer is open until finish consumes it");
        out.write_all(line.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|source| DatasetError::Io { path: self.path.clone(), source })?;
        self.written += 1;
        Ok(())
    }

    /// How many records were written so far.
    pub fn written(&self) -> usize {
        self.written
    }

    /// Flushes, syncs and renames the file into place.
    pub fn finish(mut self) -> Result<(), DatasetError> {
        let out = self.out.take().expect("the writer is open until finish consumes it");
        let io = |source| DatasetError::Io { path: self.path.clone(), source };
        let file = out.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&self.temp, &self.path).map_err(io)
    }
}

impl<T> Drop for JsonlWriter<T> {
    fn drop(&mut self) {
        if self.out.is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Writes `bytes` to `path` atomically (temporary file beside it, fsync, rename), creating the parent directory.
pub fn atomic_write(path: impl AsRef<Path>, bytes: &[u8]) -> std::io::Result<()> {
    let path = path.as_ref();
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let temp = temp_path(path);
    let result = (|| {
        let mut file = File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// A temporary name beside `path`, unique to this process and call.
fn temp_path(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Outcome, Split, Step, Trajectory};

    fn trajectory(i: usize) -> Trajectory {
        Trajectory {
            env: "toy".into(),
            task_id: format!("t{i}"),
            task_type: "x".into(),
            split: Split::Train,
            task: "task".into(),
            seed: i as u64,
            steps: vec![Step {
                observation: "o".into(),
                admissible_actions: vec!["a".into()],
                action: "a".into(),
                reward: 0.5,
            }],
            outcome: Outcome { won: true, score: 1.0, steps_used: 1 },
        }
    }

    #[test]
    fn bad_json_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut lines: Vec<String> = (0..6).map(|i| serde_json::to_string(&trajectory(i)).unwrap()).collect();
        lines.push("{\"env\": \"toy\", oops".into());
        std::fs::write(&path, lines.join("\n")).unwrap();
        let err = read_jsonl::<Trajectory>(&path).unwrap_err();
        assert_eq!(err.line(), Some(7));
        let text = err.to_string();
        assert!(text.starts_with(&format!("{}:7: ", path.display())), "{text}");
        assert!(text.contains("column"), "{text}");
    }

    #[test]
    fn wrong_type_names_the_nested_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut value = serde_json::to_value(trajectory(0)).unwrap();
        value["steps"][0]["reward"] = serde_json::json!("high");
        std::fs::write(&path, format!("\n{value}\n")).unwrap();
        let err = read_jsonl::<Trajectory>(&path).unwrap_err();
        assert_eq!(err.line(), Some(2));
        assert_eq!(err.field(), Some("steps[0].reward"));
    }

    #[test]
    fn missing_nested_field_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut value = serde_json::to_value(trajectory(0)).unwrap();
        value["outcome"].as_object_mut().unwrap().remove("won");
        std::fs::write(&path, value.to_string()).unwrap();
        let err = read_jsonl::<Trajectory>(&path).unwrap_err();
        assert_eq!(err.field(), Some("outcome.won"));
        assert!(err.to_string().contains("field `outcome.won`: missing field `won`"), "{err}");
    }

    #[test]
    fn trailing_garbage_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, format!("{} x\n", serde_json::to_string(&trajectory(0)).unwrap())).unwrap();
        assert_eq!(read_jsonl::<Trajectory>(&path).unwrap_err().line(), Some(1));
    }

    #[test]
    fn unfinished_writer_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        write_jsonl(&path, &[trajectory(1)]).unwrap();
        {
            let mut writer = JsonlWriter::create(&path).unwrap();
            writer.write(&trajectory(2)).unwrap();
            // Dropped without finish, as when a run is interrupted.
        }
        let back: Vec<Trajectory> = read_jsonl(&path).unwrap();
        assert_eq!(back, vec![trajectory(1)]);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "temporary file left behind");
    }

    #[test]
    fn missing_file_is_named() {
        let err = read_jsonl::<Trajectory>("/nonexistent/x.jsonl").unwrap_err();
        assert!(err.to_string().starts_with("/nonexistent/x.jsonl: "), "{err}");
    }

    #[test]
    fn atomic_write_replaces_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/ckpt.bin");
        atomic_write(&path, b"one").unwrap();
        atomic_write(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
    }
}
