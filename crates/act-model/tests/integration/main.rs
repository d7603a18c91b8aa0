//! act-model's integration tests, in one binary so Burn is linked once.

mod bf16;
mod checkpoint;
mod common;
mod generation;
mod hf_parity;
mod lora;
mod policy;
mod reverse_parity;
mod sliding_window;
mod tch_parity;
mod training;
