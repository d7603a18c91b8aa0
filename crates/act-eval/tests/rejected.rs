//! Not repeating a rejected action in on-line evaluation: what is sent, what the report counts and records, and
//! records made before the setting existed.

mod common;

use act_core::{Policy, PolicyError, Query, QueryKind, SamplingParams, Split};
use act_eval::*;
use common::doors;

/// Kicks a door when greedy (the doors answer "Nothing happens."), looks when sampling.
struct Kicker;

impl Policy for Kicker {
    fn name(&self) -> &str {
        "kicker"
    }

    fn generate(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        Ok(queries
            .iter()
            .map(|query| {
                assert!(matches!(query.kind, QueryKind::Act(_)), "only action queries");
                let action = if params.temperature > 0.0 { "look" } else { "kick door 1" };
                format!("<action>{action}</action>")
            })
            .collect())
    }
}

fn config() -> EpisodeEvalConfig {
    EpisodeEvalConfig::new(Split::Test).with_seed(3).with_progress(false).with_transcripts(true)
}

#[test]
fn a_rejected_proposal_is_replaced_by_a_sample_and_the_report_records_the_rule() {
    let plain = evaluate_episodes(&doors(6), Agent::Policy(&Kicker), &config()).unwrap();
    for episode in &plain.results {
        let sent: Vec<&str> = episode.transcript.iter().map(|s| s.action.as_str()).collect();
        assert_eq!(sent, ["kick door 1"; 3]);
        assert_eq!(episode.invalid_actions, 3);
    }
    assert_eq!(plain.config.rejected_retry, None);

    for batch_size in [1, 4] {
        let retrying = config().with_batch_size(batch_size).with_rejected_retry(Some(RejectedRetry::default()));
        let report = evaluate_episodes(&doors(6), Agent::Policy(&Kicker), &retrying).unwrap();
        for episode in &report.results {
            let sent: Vec<&str> = episode.transcript.iter().map(|s| s.action.as_str()).collect();
            // Kicked and rejected; looked instead of kicking again; after an accepted look, kicked again.
            assert_eq!(sent, ["kick door 1", "look", "kick door 1"], "batch size {batch_size}");
            assert_eq!(episode.invalid_actions, 2);
            assert_eq!(episode.transcript[1].output, "<action>look</action>");
        }
        assert_eq!(report.config.rejected_retry, Some(RejectedRetry::default()));
    }
}

#[test]
fn retry_settings_are_checked_and_old_records_read_as_off() {
    let zero = config().with_rejected_retry(Some(RejectedRetry { attempts: 0, ..RejectedRetry::default() }));
    let err = evaluate_episodes(&doors(2), Agent::Policy(&Kicker), &zero).unwrap_err();
    assert!(err.to_string().contains("rejected_retry: attempts is 0"), "{err}");

    let mut json = serde_json::to_value(config()).unwrap();
    assert!(json.as_object_mut().unwrap().remove("rejected_retry").is_some());
    let old: EpisodeEvalConfig = serde_json::from_value(json).unwrap();
    assert_eq!(old, EpisodeEvalConfig { progress: false, ..config() });
}
