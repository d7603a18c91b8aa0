#!/usr/bin/env bash
# Runs examples/scale_report.rs over the matrix docs/reproducing.md reports (one process per configuration, so each
# peak resident set is its own) and prints the JSON lines. Usage: benches/scale_report.sh [backend] [seq]
# Full fine-tuning of the 1.7B shape is left out: f32 weights, gradients and AdamW's two moments alone need
# 16 bytes x 1.72e9 = 27.5 GB, more than this 24 GiB machine has.
set -euo pipefail
cd "$(dirname "$0")/.."
backend="${1:-flex}"
seq="${2:-256}"
# The tch backends need the `tch` feature (and LIBTORCH_USE_PYTORCH=1 with PyTorch 2.9.0's venv active, and
# LD_LIBRARY_PATH at its torch/lib; see crates/act-model/README.md).
features=()
case "$backend" in tch*) features=(--features tch) ;; esac
cargo build --release --example scale_report "${features[@]}" >&2
bin="${CARGO_TARGET_DIR:-target}/release/examples/scale_report"
run() { "$bin" --backend "$backend" --seq "$seq" --steps 3 "$@"; }
for ckpt in "" "--checkpointing"; do
  run --shape qwen3-0.6b $ckpt
  run --shape qwen3-0.6b --lora-rank 16 $ckpt
  run --shape qwen3-1.7b --lora-rank 16 $ckpt
done
# What the GRPO trainer's reference model costs beside LoRA (it shares the frozen weights).
run --shape qwen3-0.6b --lora-rank 16 --reference
# The frozen weights in bf16 under f32 LoRA factors.
run --shape qwen3-0.6b --lora-rank 16 --bf16
run --shape qwen3-1.7b --lora-rank 16 --bf16
# Through act-grpo's trainers: SFT steps in f32 and in bf16 with f32 master weights (full fine-tuning), and GRPO
# iterations (1 prompt of 256 words, G = 4 completions of 64 tokens, KL to the start model) with LoRA and in full.
run --shape qwen3-0.6b --trainer
run --shape qwen3-0.6b --trainer --bf16
run --shape qwen3-0.6b --lora-rank 16 --grpo --reference
run --shape qwen3-0.6b --lora-rank 16 --grpo --reference --bf16
run --shape qwen3-0.6b --grpo --reference
# Where activations dominate (a small model, long sequences): what gradient checkpointing saves.
for ckpt in "" "--checkpointing"; do
  "$bin" --backend "$backend" --shape small-6m --batch 16 --seq 512 --steps 3 $ckpt
done
