//! Who acts: the [`Actor`] trait, what an actor sees of each episode ([`View`]) and what it decides
//! ([`Decision`]); the environment's expert ([`ExpertActor`]) and a prompted [`Policy`] ([`PolicyActor`]).

use act_core::{
    Action, AgentState, Completion, Environment, Policy, Prompter, Query, SamplingParams, derive_seed, parse_action,
    rng_from_seed,
};
use std::collections::HashMap;

use rand::RngExt;
use rayon::prelude::*;

use crate::error::ActError;
use crate::retry::RejectedRetry;
use crate::spec::EpisodeSpec;

/// The sub-stream of a call's seed that seeds [`RejectedRetry`]'s samples. Far above any view index.
const RETRY_STREAM: u64 = 0x7265_7472_795F_7265; // "retry_re"

/// What an actor sees of one live episode when it chooses the next action.
pub struct View<'a> {
    /// The episode.
    pub spec: &'a EpisodeSpec,
    /// What the agent knows: the task, every earlier (observation, action) pair of the episode (an actor that
    /// prompts shows as many as its prompt configuration says), the observation and the admissible actions.
    pub state: &'a AgentState,
    /// The episode's environment, for actors that read it (the expert's planner). An actor must not step or
    /// reset it: the driver does.
    pub env: &'a mut (dyn Environment + Send),
}

/// What an actor chose for one episode.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The output behind the choice: a policy's completion (with its token ids and sampled log-probs where the
    /// policy returns them), the expert's action as text for the expert.
    pub completion: Completion,
    /// The proposed action: the one parsed from the output, or the trimmed output when it does not parse (sent as
    /// is, as the real benchmarks receive it, unless the driver snaps it).
    pub action: Action,
    /// Whether the output parsed to an action.
    pub parsed: bool,
}

impl Decision {
    /// A decision that is an action and nothing else (scripted actors, the expert).
    pub fn action(action: Action) -> Self {
        Decision { completion: Completion::text_only(action.as_str()), action, parsed: true }
    }

    /// The decision an action prompt's `completion` gives: its parsed action, or its trimmed text when it has
    /// none. With `require_reasoning`, an output without a `<think>` block does not parse.
    pub fn from_completion(completion: Completion, require_reasoning: bool) -> Self {
        match parse_action(&completion.text, require_reasoning) {
            Ok(parsed) => Decision { action: Action::from(parsed.action), completion, parsed: true },
            Err(_) => Decision { action: Action::from(completion.text.trim()), completion, parsed: false },
        }
    }
}

/// Chooses the next action of live episodes, a batch at a time.
///
/// The driver calls [`act`](Actor::act) with the views of every episode waiting for an action (one, when episodes
/// are played on their own) and a seed for the call: view `i` samples from
/// [`derive_seed`](act_core::derive_seed)`(seed, i)`, as queries do under the [`Policy`] contract. `None` for a view
/// ends its episode (an expert with nothing left to do); at an episode's first step it is an error.
pub trait Actor: Sync {
    /// A name for reports and errors.
    fn name(&self) -> &str;

    /// One decision per view, in order.
    fn act(&self, views: &mut [View<'_>], seed: u64) -> Result<Vec<Option<Decision>>, ActError>;
}

impl<A: Actor + ?Sized> Actor for &A {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn act(&self, views: &mut [View<'_>], seed: u64) -> Result<Vec<Option<Decision>>, ActError> {
        (**self).act(views, seed)
    }
}

/// The environment's expert ([`Environment::expert_action`]); the views' environments are asked in parallel.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExpertActor;

impl Actor for ExpertActor {
    fn name(&self) -> &str {
        "expert"
    }

    fn act(&self, views: &mut [View<'_>], _seed: u64) -> Result<Vec<Option<Decision>>, ActError> {
        views
            .par_iter_mut()
            .enumerate()
            .map(|(view, v)| match v.env.expert_action() {
                Ok(action) => Ok(action.map(Decision::action)),
                Err(source) => Err(ActError::Env { view, source }),
            })
            .collect()
    }
}

/// A uniformly random admissible action at every step, view `i` drawing from `derive_seed(seed, i)` (the draws
/// of act-core's `RandomAdmissiblePolicy`, without rendering a prompt). An episode ends where the environment
/// lists no actions.
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomActor;

impl Actor for RandomActor {
    fn name(&self) -> &str {
        "random-admissible"
    }

    fn act(&self, views: &mut [View<'_>], seed: u64) -> Result<Vec<Option<Decision>>, ActError> {
        Ok(views
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let admissible = &v.state.admissible_actions;
                (!admissible.is_empty()).then(|| {
                    let pick = rng_from_seed(derive_seed(seed, i as u64)).random_range(0..admissible.len());
                    Decision::action(admissible[pick].clone())
                })
            })
            .collect())
    }
}

/// A [`Policy`] prompted with a [`Prompter`]'s action prompt and parsed with [`parse_action`]: one
/// [`Policy::generate`] call (or [`Policy::complete`], with [`with_tokens`](PolicyActor::with_tokens)) per driver
/// call.
pub struct PolicyActor<'a> {
    policy: &'a dyn Policy,
    prompter: Prompter,
    sampling: SamplingParams,
    require_reasoning: bool,
    tokens: bool,
    /// Text put before every action prompt, by episode index ([`EpisodeSpec::index`]): rendered hints or tips.
    hints: HashMap<usize, String>,
    /// Text put before every action prompt of every episode, before any hint: a system prompt (ICT).
    system: String,
    /// Whether and how a proposal already rejected in the current state is sampled again.
    rejected_retry: Option<RejectedRetry>,
}

impl std::fmt::Debug for PolicyActor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyActor")
            .field("policy", &self.policy.name())
            .field("sampling", &self.sampling)
            .field("require_reasoning", &self.require_reasoning)
            .field("tokens", &self.tokens)
            .field("hinted_episodes", &self.hints.len())
            .field("rejected_retry", &self.rejected_retry)
            .finish_non_exhaustive()
    }
}

impl<'a> PolicyActor<'a> {
    /// `policy` prompted by `prompter`, greedy, reasoning optional, text only.
    pub fn new(policy: &'a dyn Policy, prompter: Prompter) -> Self {
        PolicyActor {
            policy,
            prompter,
            sampling: SamplingParams::greedy(),
            require_reasoning: false,
            tokens: false,
            hints: HashMap::new(),
            system: String::new(),
            rejected_retry: None,
        }
    }

    /// Does not repeat a rejected action ([`RejectedRetry`]): where the policy proposes an action that the
    /// environment rejected since it last accepted one, up to `retry.attempts` proposals are sampled at
    /// `retry.temperature` (call seed `derive_seed(derive_seed(seed, stream), attempt)`, query `j` of the views
    /// still retrying from `derive_seed` of that and `j`), and the first that was not rejected is sent; the
    /// policy's own proposal is sent when none is. A replaced decision carries the sample's completion (with
    /// tokens, its log-probs are those of the retry's sampling), so this is a decoding rule for evaluation, not
    /// for a trainer's rollouts. `None` (the default) sends every proposal as the policy made it.
    #[must_use]
    pub fn with_rejected_retry(mut self, retry: Option<RejectedRetry>) -> Self {
        self.rejected_retry = retry;
        self
    }

    /// Every action prompt of every episode begins with `system_prompt` (then a blank line), before any hint or tips:
    /// the system prompt a meta-environment's reflector writes (ICT). Unlike hints, it is part of the prompt a
    /// trainer learns under ([`query`](PolicyActor::query) includes it). Empty: none.
    #[must_use]
    pub fn with_system_prompt(mut self, system_prompt: &str) -> Self {
        self.system = if system_prompt.is_empty() { String::new() } else { format!("{system_prompt}\n\n") };
        self
    }

    /// Guided play (ActGuide-RL): episode `index` ([`EpisodeSpec::index`]) is prompted with the prompter's
    /// [`hint`](Prompter::hint) of its reference actions before every action prompt. Each turn's completion then
    /// carries the hinted prompt's token ids (the behaviour prompt); [`query`](PolicyActor::query) still gives the
    /// prompt without the hint, which a trainer learns under. Episodes without an entry play unguided, as do
    /// entries with no actions.
    #[must_use]
    pub fn with_hints(self, hints: impl IntoIterator<Item = (usize, Vec<Action>)>) -> Self {
        let rendered: Vec<(usize, String)> =
            hints.into_iter().map(|(index, actions)| (index, self.prompter.hint(&actions))).collect();
        self.with_prefixes(rendered)
    }

    /// Episode `index` ([`EpisodeSpec::index`]) is prompted with `text` before every action prompt: a rendered
    /// hint ([`with_hints`](PolicyActor::with_hints)) or a critic's tips ([`Prompter::tips`], ICRL's second
    /// round). As with hints, each turn's completion carries the prefixed prompt's token ids, and
    /// [`query`](PolicyActor::query) gives the prompt without the prefix. Empty texts are no prefix.
    #[must_use]
    pub fn with_prefixes(mut self, prefixes: impl IntoIterator<Item = (usize, String)>) -> Self {
        self.hints = prefixes.into_iter().filter(|(_, text)| !text.is_empty()).collect();
        self
    }

    /// Samples with `sampling` (its seed is replaced by each call's).
    #[must_use]
    pub fn with_sampling(mut self, sampling: SamplingParams) -> Self {
        self.sampling = sampling;
        self
    }

    /// Whether an output without a `<think>` block is unparseable.
    #[must_use]
    pub fn with_require_reasoning(mut self, require: bool) -> Self {
        self.require_reasoning = require;
        self
    }

    /// Whether to ask the policy for token ids and sampled log-probs ([`Policy::complete`]), which on-line RL
    /// trains on; evaluation does without them ([`Policy::generate`]).
    #[must_use]
    pub fn with_tokens(mut self, tokens: bool) -> Self {
        self.tokens = tokens;
        self
    }

    /// The prompter.
    pub fn prompter(&self) -> &Prompter {
        &self.prompter
    }

    /// The action query for `state`, whose history is cut to what the prompt configuration shows.
    pub fn query(&self, state: &AgentState) -> Query {
        let shown = state.history.len().min(self.prompter.config().history_len);
        if shown == state.history.len() {
            return self.with_system(self.prompter.act_query(state));
        }
        let cut = AgentState { history: state.history[state.history.len() - shown..].to_vec(), ..state.clone() };
        self.with_system(self.prompter.act_query(&cut))
    }

    fn with_system(&self, mut query: Query) -> Query {
        query.prompt.insert_str(0, &self.system);
        query
    }
}

impl Actor for PolicyActor<'_> {
    fn name(&self) -> &str {
        self.policy.name()
    }

    fn act(&self, views: &mut [View<'_>], seed: u64) -> Result<Vec<Option<Decision>>, ActError> {
        let queries: Vec<Query> = views
            .iter()
            .map(|v| {
                let mut query = self.query(v.state);
                if let Some(hint) = self.hints.get(&v.spec.index) {
                    // After the system prompt, before the action prompt.
                    query.prompt.insert_str(self.system.len(), hint);
                }
                query
            })
            .collect();
        let completions = self.completions(&queries, &self.sampling.clone().with_seed(seed))?;
        let mut decisions: Vec<Decision> =
            completions.into_iter().map(|c| Decision::from_completion(c, self.require_reasoning)).collect();
        if let Some(retry) = &self.rejected_retry {
            self.retry_rejected(retry, views, &queries, &mut decisions, seed)?;
        }
        Ok(decisions.into_iter().map(Some).collect())
    }
}

impl PolicyActor<'_> {
    /// One completion per query: [`Policy::complete`] with [`with_tokens`](PolicyActor::with_tokens), else
    /// [`Policy::generate`]'s texts; an error when the policy returns another count.
    fn completions(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<Completion>, ActError> {
        let completions = if self.tokens {
            self.policy.complete(queries, params)?
        } else {
            self.policy.generate(queries, params)?.into_iter().map(Completion::text_only).collect()
        };
        if completions.len() != queries.len() {
            return Err(ActError::CompletionCount { expected: queries.len(), got: completions.len() });
        }
        Ok(completions)
    }

    /// Replaces the decisions that repeat a rejected action by the first sampled one that does not (see
    /// [`with_rejected_retry`](PolicyActor::with_rejected_retry)).
    fn retry_rejected(
        &self,
        retry: &RejectedRetry,
        views: &[View<'_>],
        queries: &[Query],
        decisions: &mut [Decision],
        seed: u64,
    ) -> Result<(), ActError> {
        let rejected: Vec<_> = views.iter().map(|v| retry.rejected_actions(v.state)).collect();
        let mut waiting: Vec<usize> =
            (0..decisions.len()).filter(|&i| rejected[i].contains(&decisions[i].action)).collect();
        let stream = derive_seed(seed, RETRY_STREAM);
        for attempt in 0..retry.attempts {
            if waiting.is_empty() {
                break;
            }
            let retried: Vec<Query> = waiting.iter().map(|&i| queries[i].clone()).collect();
            let params = self
                .sampling
                .clone()
                .with_temperature(retry.temperature)
                .with_seed(derive_seed(stream, attempt as u64));
            let completions = self.completions(&retried, &params)?;
            let mut still = Vec::new();
            for (&i, completion) in waiting.iter().zip(completions) {
                let decision = Decision::from_completion(completion, self.require_reasoning);
                if rejected[i].contains(&decision.action) {
                    still.push(i);
                } else {
                    decisions[i] = decision;
                }
            }
            waiting = still;
        }
        Ok(())
    }
}
