#!/usr/bin/env bash
# act-rs against the Python stack on the same work, timed in one run on one machine: one GRPO iteration (TRL's
# GRPOTrainer and a plain PyTorch loop), one SFT step (TRL's SFTTrainer and plain PyTorch), cached generation
# (HF `generate`). For each preset, examples/side_by_side.rs writes the workload (an HF checkpoint with random
# weights, a shared word-level tokenizer, the exact prompts) and times act-rs; benches/side_by_side.py times the
# Python side on the same files; the table at the end gives act-rs's speed-up over each (> 1: act-rs faster).
#
# Usage: benches/side_by_side.sh [presets, default "tiny small-1m small-6m"] [extra side_by_side.rs options]
# Python: $ACT_PYTHON, or the tests' virtual environment (~/.cache/act-rs/venv) with benches/requirements.txt.
# Run it on a quiet machine: both sides use 2 threads, and anything else running skews the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
presets="${1:-tiny small-1m small-6m}"
shift || true
python="${ACT_PYTHON:-$HOME/.cache/act-rs/venv/bin/python}"
if ! "$python" -c 'import trl, datasets' 2>/dev/null; then
  echo "== pip install -r tests/requirements.txt -r benches/requirements.txt (into $("$python" -c 'import sys; print(sys.prefix)'))" >&2
  "$python" -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt -r benches/requirements.txt
fi
cargo build --release --example side_by_side >&2
bin="${CARGO_TARGET_DIR:-target}/release/examples/side_by_side"
out="runs/side-by-side"
mkdir -p "$out"
lines="$out/results.jsonl"
: > "$lines"
for preset in $presets; do
  echo "== $preset" >&2
  "$bin" --preset "$preset" --out "$out/$preset" "$@" | tee -a "$lines"
  "$python" benches/side_by_side.py "$out/$preset" | tee -a "$lines"
done
"$python" - "$lines" <<'EOF'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def seconds(impl, work, preset, batch=None):
    """The fastest matching measurement (PyTorch's best attention implementation, eager or sdpa)."""
    found = [r["seconds_median"] for r in rows
             if (r["impl"], r["work"], r["preset"]) == (impl, work, preset) and r.get("batch_size") == batch]
    return min(found, default=None)
print("\n| preset | work | act-rs s | other | other s | act-rs speed-up |")
print("|---|---|---:|---|---:|---:|")
for preset in dict.fromkeys(r["preset"] for r in rows):
    for work, others, batches in [("grpo_iteration", ["trl", "torch"], [None]), ("sft_step", ["trl", "torch"], [None]),
                                  ("generate", ["hf_generate"], sorted({r.get("batch_size") for r in rows if r["work"] == "generate"}))]:
        for batch in batches:
            ours = seconds("act-rs", work, preset, batch)
            for other in others:
                theirs = seconds(other, work, preset, batch)
                if ours and theirs:
                    label = work if batch is None else f"{work} b{batch}"
                    print(f"| {preset} | {label} | {ours:.4f} | {other} | {theirs:.4f} | {theirs / ours:.2f}x |")
EOF
