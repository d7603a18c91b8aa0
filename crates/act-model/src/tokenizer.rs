//! Tokenizers (a model's `tokenizer.json`, or a small BPE trained in process) and Qwen's chat template.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use tokenizers::models::bpe::{BPE, BpeTrainerBuilder};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{AddedToken, SplitDelimiterBehavior, Tokenizer, TokenizerBuilder};

use crate::error::ModelError;

/// Start of a chat turn.
pub const IM_START: &str = "<|im_start|>";
/// End of a chat turn (the token an assistant turn ends with).
pub const IM_END: &str = "<|im_end|>";
/// End of a document; Qwen's padding token.
pub const END_OF_TEXT: &str = "<|endoftext|>";

/// How [`ChatTokenizer::train_bpe_with`] splits text into pieces before learning merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PreTokenization {
    /// GPT-2's byte-level split: words, numbers and punctuation are separate pieces, so `shelf 3` is at least two
    /// tokens.
    #[default]
    ByteLevel,
    /// As [`PreTokenization::ByteLevel`], except that a word followed by a space and a number stays one piece
    /// (` shelf 3`, ` apple 12`): given vocabulary room, every named instance that recurs in the corpus becomes one
    /// token. Environments that name things `<class> <number>` (ALFWorld's objects and receptacles) then let a
    /// model copy a name out of its prompt as one token, instead of choosing the number after committing to the
    /// class.
    NamedNumbers,
}

/// GPT-2's pre-tokenization pattern (as `ByteLevel` applies it), with ` word number` as one more alternative
/// tried before the word alone.
const NAMED_NUMBERS_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+ \p{N}+(?!\p{L}|\p{N})| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

impl PreTokenization {
    fn pre_tokenizer(self) -> Result<PreTokenizerWrapper, ModelError> {
        let byte_level = ByteLevel::default().add_prefix_space(false);
        Ok(match self {
            PreTokenization::ByteLevel => byte_level.into(),
            PreTokenization::NamedNumbers => {
                let split = Split::new(
                    SplitPattern::Regex(NAMED_NUMBERS_PATTERN.into()),
                    SplitDelimiterBehavior::Isolated,
                    false,
                )
                .map_err(|e| ModelError::Tokenizer(format!("pre-tokenizer pattern: {e}")))?;
                Sequence::new(vec![split.into(), byte_level.use_regex(false).into()]).into()
            }
        })
    }
}

/// How prompts become chat text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChatTemplate {
    /// An optional system message.
    pub system: Option<String>,
    /// Open the assistant turn with an empty `<think>\n\n</think>\n\n` block, as Qwen3's template does when
    /// thinking is disabled.
    pub empty_think_block: bool,
}

impl ChatTemplate {
    /// Sets the system message.
    #[must_use]
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Sets whether the assistant turn opens with an empty think block.
    #[must_use]
    pub fn with_empty_think_block(mut self, on: bool) -> Self {
        self.empty_think_block = on;
        self
    }

    /// The chat text up to and including the assistant turn's header: what generation continues from.
    pub fn prompt_text(&self, user: &str) -> String {
        let mut text = String::new();
        if let Some(system) = &self.system {
            text.push_str(&format!("{IM_START}system\n{system}{IM_END}\n"));
        }
        text.push_str(&format!("{IM_START}user\n{user}{IM_END}\n{IM_START}assistant\n"));
        if self.empty_think_block {
            text.push_str("<think>\n\n</think>\n\n");
        }
        text
    }

    /// The completion text as trained on: the answer followed by the end-of-turn token.
    pub fn completion_text(&self, completion: &str) -> String {
        format!("{completion}{IM_END}")
    }
}

/// Token ids of one chat example, split at the completion boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatEncoding {
    /// The prompt (through the assistant header).
    pub prompt_ids: Vec<u32>,
    /// The completion, ending with `<|im_end|>`.
    pub completion_ids: Vec<u32>,
}

impl ChatEncoding {
    /// Prompt then completion.
    pub fn ids(&self) -> Vec<u32> {
        [self.prompt_ids.as_slice(), self.completion_ids.as_slice()].concat()
    }

    /// `true` on completion tokens: the loss mask over [`ChatEncoding::ids`].
    pub fn completion_mask(&self) -> Vec<bool> {
        let mut mask = vec![false; self.prompt_ids.len()];
        mask.extend(std::iter::repeat_n(true, self.completion_ids.len()));
        mask
    }
}

/// A tokenizer with the chat special tokens resolved.
///
/// The chat template is ChatML as Qwen uses it:
///
/// ```text
/// <|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n{completion}<|im_end|>
/// ```
///
/// Prompt and completion are tokenized separately and concatenated, so the completion boundary is exact: training
/// scores precisely the tokens generation would produce after the same prompt, and no token straddles the boundary.
#[derive(Debug, Clone)]
pub struct ChatTokenizer {
    inner: Tokenizer,
    im_start: u32,
    im_end: u32,
    end_of_text: u32,
    /// Whether encoding splits exactly at the chat special tokens (see [`ChatTokenizer::encode_chats`]).
    splits_at_chat_tokens: bool,
}

impl ChatTokenizer {
    /// Wraps a tokenizer that knows `<|im_start|>`, `<|im_end|>` and `<|endoftext|>`.
    pub fn new(inner: Tokenizer) -> Result<Self, ModelError> {
        let id = |token: &str| {
            inner
                .token_to_id(token)
                .ok_or_else(|| ModelError::Tokenizer(format!("the tokenizer has no `{token}` token")))
        };
        let mut tokenizer = ChatTokenizer {
            im_start: id(IM_START)?,
            im_end: id(IM_END)?,
            end_of_text: id(END_OF_TEXT)?,
            inner,
            splits_at_chat_tokens: false,
        };
        tokenizer.splits_at_chat_tokens = tokenizer.probe_chat_token_splits();
        Ok(tokenizer)
    }

    /// Whether the ids of a text with chat special tokens in it are those of the stretches between them, the
    /// special tokens' ids in between: true for a tokenizer that extracts its added tokens before anything else and
    /// strips no whitespace around them (ours, Qwen's). Probed on text around each special token.
    fn probe_chat_token_splits(&self) -> bool {
        let sides = ["", "a", " b c", "x\n", "\n", "  \n y ", "<action>go to desk 1</action>", "ünï 3"];
        [IM_START, IM_END, END_OF_TEXT].into_iter().all(|special| {
            sides.iter().all(|left| {
                sides.iter().all(|right| {
                    let whole = self.encode(&format!("{left}{special}{right}"));
                    let mut parts = Vec::new();
                    let mut memo = HashMap::new();
                    let pieces = self.encode_stretches(&format!("{left}{special}{right}"), &mut memo, &mut parts);
                    matches!((whole, pieces), (Ok(w), Ok(())) if w == parts)
                })
            })
        })
    }

    /// Appends the ids of `text` to `out`, splitting it at the chat special tokens and encoding each stretch
    /// between them once per `memo`.
    fn encode_stretches(
        &self,
        text: &str,
        memo: &mut HashMap<String, Vec<u32>>,
        out: &mut Vec<u32>,
    ) -> Result<(), ModelError> {
        let specials = [(IM_START, self.im_start), (IM_END, self.im_end), (END_OF_TEXT, self.end_of_text)];
        // One pass over the text: every chat token starts with `<|`.
        let (mut start, mut from) = (0, 0);
        loop {
            let next = text[from..].find("<|").map(|at| from + at);
            let special = next.and_then(|at| {
                specials.iter().find(|(s, _)| text[at..].starts_with(s)).map(|&(s, id)| (at, s.len(), id))
            });
            if let (Some(at), None) = (next, special) {
                from = at + 2;
                continue;
            }
            let end = special.map_or(text.len(), |(at, _, _)| at);
            let stretch = &text[start..end];
            if !stretch.is_empty() {
                match memo.get(stretch) {
                    Some(ids) => out.extend_from_slice(ids),
                    None => {
                        let ids = self.encode(stretch)?;
                        out.extend_from_slice(&ids);
                        memo.insert(stretch.to_owned(), ids);
                    }
                }
            }
            let Some((at, len, id)) = special else { return Ok(()) };
            out.push(id);
            start = at + len;
            from = start;
        }
    }

    /// Loads a `tokenizer.json` (for example Qwen3's).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ModelError> {
        let path = path.as_ref();
        let inner =
            Tokenizer::from_file(path).map_err(|e| ModelError::Tokenizer(format!("{}: {e}", path.display())))?;
        Self::new(inner)
    }

    /// Trains a byte-level BPE tokenizer of at most `vocab_size` tokens (special tokens included) on `texts`.
    pub fn train_bpe<I, S>(texts: I, vocab_size: usize) -> Result<Self, ModelError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str> + Send,
        I::IntoIter: Send,
    {
        Self::train_bpe_with(texts, vocab_size, PreTokenization::ByteLevel)
    }

    /// As [`ChatTokenizer::train_bpe`], with the text split into pieces by `pre_tokenization` before the merges
    /// are learnt (a token never spans two pieces).
    ///
    /// ```
    /// use act_model::{ChatTokenizer, PreTokenization};
    /// let corpus = ["you see a shelf 2, a shelf 1 and a apple 3.", "go to shelf 2", "take apple 3 from shelf 1"];
    /// let named = ChatTokenizer::train_bpe_with(corpus.iter().cycle().take(30), 400, PreTokenization::NamedNumbers)?;
    /// // Each instance that occurs often enough is one token.
    /// assert_eq!(named.encode("go to shelf 2")?.len(), 3);
    /// let plain = ChatTokenizer::train_bpe(corpus.iter().cycle().take(30), 400)?;
    /// assert_eq!(plain.encode("go to shelf 2")?.len(), 4);
    /// # Ok::<(), act_model::ModelError>(())
    /// ```
    pub fn train_bpe_with<I, S>(
        texts: I,
        vocab_size: usize,
        pre_tokenization: PreTokenization,
    ) -> Result<Self, ModelError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str> + Send,
        I::IntoIter: Send,
    {
        let specials = [END_OF_TEXT, IM_START, IM_END].map(|t| AddedToken::from(t, true)).to_vec();
        let mut trainer = BpeTrainerBuilder::new()
            .vocab_size(vocab_size)
            .min_frequency(2)
            .show_progress(false)
            .special_tokens(specials)
            .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
            .build();
        let mut tokenizer = TokenizerBuilder::new()
            .with_model(BPE::default())
            .with_normalizer(None::<tokenizers::NormalizerWrapper>)
            .with_pre_tokenizer(Some(pre_tokenization.pre_tokenizer()?))
            .with_post_processor(Some(ByteLevel::default()))
            .with_decoder(Some(ByteLevel::default()))
            .build()
            .map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        tokenizer
            .train(&mut trainer, texts.into_iter())
            .map_err(|e| ModelError::Tokenizer(format!("training: {e}")))?;
        Self::new(Tokenizer::from(tokenizer))
    }

    /// Saves `tokenizer.json` atomically.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        let text = self.inner.to_string(true).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        crate::checkpoint::write_atomic(path.as_ref(), text.as_bytes())
    }

    /// The wrapped `tokenizers` tokenizer.
    pub fn inner(&self) -> &Tokenizer {
        &self.inner
    }

    /// Vocabulary size including added tokens (the model's `vocab_size` must be at least this).
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// The `<|im_start|>` id.
    pub fn im_start_id(&self) -> u32 {
        self.im_start
    }

    /// The `<|im_end|>` id: generation stops here.
    pub fn im_end_id(&self) -> u32 {
        self.im_end
    }

    /// The `<|endoftext|>` id: padding, and also an end of generation.
    pub fn end_of_text_id(&self) -> u32 {
        self.end_of_text
    }

    /// Token ids of `text` (special-token strings in it become their tokens; nothing is added around it).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, ModelError> {
        self.inner
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| ModelError::Tokenizer(format!("encoding: {e}")))
    }

    /// The text of `ids`, with or without special tokens.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, ModelError> {
        self.inner.decode(ids, skip_special_tokens).map_err(|e| ModelError::Tokenizer(format!("decoding: {e}")))
    }

    /// The prompt ids of `user` under `template`.
    pub fn encode_prompt(&self, template: &ChatTemplate, user: &str) -> Result<Vec<u32>, ModelError> {
        self.encode(&template.prompt_text(user))
    }

    /// [`ChatTokenizer::encode_chat`] of many examples, with the same ids, in parallel, faster where they share
    /// text: an episode's prompts each extend the last in a multi-turn format, and encoding each of them whole costs
    /// time quadratic in the episode's length. Each stretch of text between chat special tokens (a turn's content)
    /// is encoded once per block of consecutive examples, where the tokenizer splits exactly at those tokens (probed
    /// when it is loaded); otherwise each example is encoded whole.
    pub fn encode_chats(
        &self,
        template: &ChatTemplate,
        chats: &[(&str, &str)],
    ) -> Result<Vec<ChatEncoding>, ModelError> {
        use rayon::prelude::*;
        // Consecutive examples are mostly one episode's: a block shares one memo, and blocks run in parallel.
        const BLOCK: usize = 256;
        if !self.splits_at_chat_tokens {
            return chats.par_iter().map(|(user, completion)| self.encode_chat(template, user, completion)).collect();
        }
        let blocks: Vec<Vec<ChatEncoding>> = chats
            .par_chunks(BLOCK)
            .map(|block| {
                let mut memo = HashMap::new();
                block
                    .iter()
                    .map(|(user, completion)| {
                        let (mut prompt_ids, mut completion_ids) = (Vec::new(), Vec::new());
                        self.encode_stretches(&template.prompt_text(user), &mut memo, &mut prompt_ids)?;
                        self.encode_stretches(&template.completion_text(completion), &mut memo, &mut completion_ids)?;
                        Ok(ChatEncoding { prompt_ids, completion_ids })
                    })
                    .collect::<Result<Vec<_>, ModelError>>()
            })
            .collect::<Result<_, _>>()?;
        Ok(blocks.into_iter().flatten().collect())
    }

    /// Prompt and completion ids of one training example, split exactly at the completion boundary.
    pub fn encode_chat(
        &self,
        template: &ChatTemplate,
        user: &str,
        completion: &str,
    ) -> Result<ChatEncoding, ModelError> {
        Ok(ChatEncoding {
            prompt_ids: self.encode_prompt(template, user)?,
            completion_ids: self.encode(&template.completion_text(completion))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Vec<String> {
        (0..200)
            .map(|i| {
                format!("You are in room {i}. You see a mug {} and a desk. <action>take mug {}</action>", i % 7, i % 5)
            })
            .collect()
    }

    #[test]
    fn trained_bpe_round_trips_and_knows_chat_tokens() {
        let tok = ChatTokenizer::train_bpe(corpus(), 300).unwrap();
        assert!(tok.vocab_size() <= 300 && tok.vocab_size() > 256, "{}", tok.vocab_size());
        let text = "You see a mug 3 and a desk. <action>take mug 1</action> ünïcödé";
        let ids = tok.encode(text).unwrap();
        assert_eq!(tok.decode(&ids, false).unwrap(), text);
        // Merges learned from the corpus make frequent text shorter than its bytes.
        assert!(tok.encode("You see a mug").unwrap().len() < "You see a mug".len());
        let chat = tok.encode(&ChatTemplate::default().prompt_text("hi")).unwrap();
        assert_eq!(chat[0], tok.im_start_id());
        assert!(chat.contains(&tok.im_end_id()));
    }

    #[test]
    fn named_numbers_keep_instances_whole_and_round_trip() {
        let named = ChatTokenizer::train_bpe_with(corpus(), 400, PreTokenization::NamedNumbers).unwrap();
        let plain = ChatTokenizer::train_bpe(corpus(), 400).unwrap();
        for text in ["You see a mug 3 and a desk. <action>take mug 1</action> ünïcödé", "room 12, mugs 4x 5 mug 61b"]
        {
            let ids = named.encode(text).unwrap();
            assert_eq!(named.decode(&ids, false).unwrap(), text);
        }
        for name in [" mug 3", " mug 6", " mug 4"] {
            assert_eq!(named.encode(name).unwrap().len(), 1, "{name}");
            assert_eq!(plain.encode(name).unwrap().len(), 2, "{name}");
        }
        // A number glued to letters is not an instance name; nor is a word alone.
        assert!(named.encode(" mug 3x").unwrap().len() > 1);
        assert_eq!(named.encode(" desk").unwrap().len(), plain.encode(" desk").unwrap().len());
        assert_eq!(
            serde_json::to_string(&PreTokenization::NamedNumbers).unwrap(),
            "\"named_numbers\"",
            "the experiment configs name it so"
        );
    }

    #[test]
    fn completion_boundary_is_exact() {
        let tok = ChatTokenizer::train_bpe(corpus(), 300).unwrap();
        let template = ChatTemplate::default().with_system("Be brief.");
        let enc = tok.encode_chat(&template, "where is the mug?", "<action>take mug 2</action>").unwrap();
        assert_eq!(enc.prompt_ids, tok.encode_prompt(&template, "where is the mug?").unwrap());
        assert_eq!(*enc.completion_ids.last().unwrap(), tok.im_end_id());
        let mask = enc.completion_mask();
        assert_eq!(mask.len(), enc.ids().len());
        assert_eq!(mask.iter().filter(|&&m| m).count(), enc.completion_ids.len());
        assert!(!mask[enc.prompt_ids.len() - 1] && mask[enc.prompt_ids.len()]);
        assert_eq!(tok.decode(&enc.completion_ids, true).unwrap(), "<action>take mug 2</action>");
        let full = tok.decode(&enc.ids(), false).unwrap();
        assert_eq!(
            full,
            format!(
                "{}{}",
                template.prompt_text("where is the mug?"),
                template.completion_text("<action>take mug 2</action>")
            )
        );
    }

    #[test]
    fn encoding_many_chats_gives_each_ones_ids() {
        let tok = ChatTokenizer::train_bpe(corpus(), 300).unwrap();
        assert!(tok.splits_at_chat_tokens, "a trained BPE extracts its special tokens first");
        let template = ChatTemplate::default();
        // An episode's prompts, each extending the last with the answer and a new turn.
        let mut prompt = String::from("You are in room 3. ");
        let mut chats = Vec::new();
        for t in 0..40 {
            let answer = format!("<action>take mug {}</action>", t % 7);
            chats.push((prompt.clone(), answer.clone()));
            prompt.push_str(&format!("{answer}{IM_END}\n{IM_START}user\nYou see a mug {t} and  ü desk.\n"));
        }
        chats.push((format!("{END_OF_TEXT} odd <|not a token {IM_END}{IM_END}<|"), String::new()));
        let pairs: Vec<(&str, &str)> = chats.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
        let many = tok.encode_chats(&template, &pairs).unwrap();
        for ((user, completion), got) in pairs.iter().zip(&many) {
            assert_eq!(got, &tok.encode_chat(&template, user, completion).unwrap(), "{user:?}");
        }
        // A tokenizer that does not split at them (here: one that strips spaces around `<|im_end|>`) is encoded
        // example by example, with the same ids as one at a time.
        let mut json: serde_json::Value = serde_json::from_str(&tok.inner().to_string(false).unwrap()).unwrap();
        for token in json["added_tokens"].as_array_mut().unwrap() {
            if token["content"] == IM_END {
                token["lstrip"] = serde_json::Value::Bool(true);
            }
        }
        let stripping = ChatTokenizer::new(json.to_string().parse::<Tokenizer>().unwrap()).unwrap();
        assert!(!stripping.splits_at_chat_tokens);
        let slow = stripping.encode_chats(&template, &pairs).unwrap();
        for ((user, completion), got) in pairs.iter().zip(&slow) {
            assert_eq!(got, &stripping.encode_chat(&template, user, completion).unwrap());
        }
    }

    #[test]
    fn save_and_load_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let tok = ChatTokenizer::train_bpe(corpus(), 280).unwrap();
        let path = dir.path().join("tokenizer.json");
        tok.save(&path).unwrap();
        let back = ChatTokenizer::from_file(&path).unwrap();
        assert_eq!(back.encode("take mug 4").unwrap(), tok.encode("take mug 4").unwrap());
        assert_eq!(back.im_end_id(), tok.im_end_id());
        assert!(ChatTokenizer::from_file(dir.path().join("missing.json")).is_err());
    }

    #[test]
    fn qwen_template_text() {
        let t = ChatTemplate::default().with_empty_think_block(true);
        assert_eq!(t.prompt_text("q"), "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
    }
}
