#!/usr/bin/env python3
"""PyTorch eager reference for benches/model.rs: the same Qwen3 configs and shapes, timed with transformers.

    python3 crates/act-model/benches/torch_reference.py [--threads N] [--quick]

Shapes (keep in sync with model.rs): training batch 8 x 128 tokens, forward + backward + AdamW (float32);
generation: prompts of 16 tokens, 16 new greedy tokens, batch 1 and 16, HF `generate` with and without the cache.
Prints one JSON line per measurement with tokens/s (the median over repetitions).
"""

import argparse
import json
import statistics
import time

import torch
from transformers import Qwen3Config, Qwen3ForCausalLM

TRAIN_BATCH, TRAIN_SEQ = 8, 128
PROMPT_LEN, NEW_TOKENS = 16, 16

CONFIGS = {
    "tiny": dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, head_dim=16),
    "small-6m": dict(vocab_size=4096, hidden_size=256, intermediate_size=768, num_hidden_layers=6,
                     num_attention_heads=8, num_key_value_heads=4, head_dim=32),
}


def build(spec):
    config = Qwen3Config(**spec, max_position_embeddings=2048, rms_norm_eps=1e-6, rope_theta=10000.0,
                         tie_word_embeddings=True, initializer_range=0.02)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    return Qwen3ForCausalLM(config).float()


def token_rows(rows, length, vocab, salt):
    return torch.tensor([[(r * 7919 + i * 104729 + salt) % vocab for i in range(length)] for r in range(rows)])


def median_seconds(fn, reps, warmup=1):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_train(name, spec, reps):
    model = build(spec).train()
    optim = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    ids = token_rows(TRAIN_BATCH, TRAIN_SEQ, spec["vocab_size"], 1)
    mask = torch.ones_like(ids)

    def step():
        optim.zero_grad(set_to_none=True)
        loss = model(input_ids=ids, attention_mask=mask, labels=ids).loss
        loss.backward()
        optim.step()

    seconds = median_seconds(step, reps)
    return {"bench": "train_step", "config": name, "shape": f"{TRAIN_BATCH}x{TRAIN_SEQ}",
            "seconds": seconds, "tokens_per_s": TRAIN_BATCH * TRAIN_SEQ / seconds}


@torch.no_grad()
def bench_generate(name, spec, batch, use_cache, reps):
    model = build(spec).eval()
    ids = token_rows(batch, PROMPT_LEN, spec["vocab_size"], 2)

    def run():
        model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False, use_cache=use_cache,
                       max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, eos_token_id=None, pad_token_id=0)

    seconds = median_seconds(run, reps)
    return {"bench": "generate", "config": name, "batch": batch, "cache": use_cache,
            "seconds": seconds, "tokens_per_s": batch * NEW_TOKENS / seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads (the machine's cores)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    reps = 3 if args.quick else 10
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads()}))
    for name, spec in CONFIGS.items():
        print(json.dumps(bench_train(name, spec, reps)), flush=True)
        for batch in (1, 16):
            for use_cache in (True, False):
                print(json.dumps(bench_generate(name, spec, batch, use_cache, reps)), flush=True)


if __name__ == "__main__":
    main()
