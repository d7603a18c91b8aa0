#!/usr/bin/env python3
"""Parity fixtures between act-model (Burn) and Hugging Face transformers for Qwen3.

Two commands:

  make-fixture OUT_DIR
      Builds small random Qwen3 models with transformers + torch (seeded), saves each in
      HF layout (config.json + safetensors) under OUT_DIR/<name>/ together with
      expected.safetensors: for every prompt i, `input_ids.i` (int64 [len]) and `logits.i`
      (float32 [len, vocab]) computed by transformers in float32, plus `greedy.i`, the tokens
      HF `generate` picks greedily (no sampling) after the prompt.

  check MODEL_DIR
      Loads MODEL_DIR (written by act-model) with transformers and compares its logits with
      the `input_ids.i` / `logits.i` pairs in MODEL_DIR/expected.safetensors (written by
      act-model too). Prints the largest absolute difference; exits 1 when it exceeds --atol. With
      `--dtype bfloat16` (or float16) transformers loads and runs the model in that dtype (logits compared
      in float32), for act-model's half-precision forward.

  check-peft BASE_DIR ADAPTER_DIR
      Loads BASE_DIR with transformers and the LoRA adapter in ADAPTER_DIR (written by act-model in PEFT's
      layout) with peft's PeftModel, and compares the logits with ADAPTER_DIR/expected.safetensors.

Only torch, transformers and safetensors are needed (and peft for check-peft); everything runs on CPU.
"""

import argparse
import json
import os
import sys

import torch
from safetensors.torch import load_file, save_file
from transformers import Qwen3Config, Qwen3ForCausalLM

GREEDY_NEW_TOKENS = 8

# Token-id prompts of different lengths (the vocabulary is synthetic, so ids are the input).
PROMPTS = [
    [1, 5, 9, 2, 77, 31, 8],
    [3],
    [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22],
    [90, 4, 4, 4, 60],
]

MODELS = {
    # GQA (4 query heads, 2 kv heads), q/k norm, untied head, head_dim != hidden/heads,
    # saved as one file.
    "tiny-qwen3": dict(
        config=dict(
            vocab_size=96,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=16,
            max_position_embeddings=128,
            rms_norm_eps=1e-6,
            rope_theta=10000.0,
            tie_word_embeddings=False,
            initializer_range=0.2,
        ),
        seed=1,
        max_shard_size=None,
    ),
    # Tied embeddings, a different rope theta, sharded into several files with an index.
    "tiny-qwen3-tied-sharded": dict(
        config=dict(
            vocab_size=96,
            hidden_size=32,
            intermediate_size=48,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=8,
            max_position_embeddings=128,
            rms_norm_eps=1e-6,
            rope_theta=1000000.0,
            tie_word_embeddings=True,
            initializer_range=0.2,
        ),
        seed=2,
        max_shard_size="20KB",
    ),
}


def build_model(config_kwargs, seed):
    torch.manual_seed(seed)
    config = Qwen3Config(**config_kwargs)
    config._attn_implementation = "eager"
    model = Qwen3ForCausalLM(config).float().eval()
    # Norm weights start at one; perturb them so a wrong norm mapping shows up in the logits.
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                param.add_(0.3 * torch.randn_like(param))
    return model


@torch.no_grad()
def logits_for(model, ids):
    input_ids = torch.tensor([ids], dtype=torch.long)
    return model(input_ids=input_ids).logits[0].float()


@torch.no_grad()
def greedy_for(model, ids):
    input_ids = torch.tensor([ids], dtype=torch.long)
    out = model.generate(
        input_ids=input_ids,
        attention_mask=torch.ones_like(input_ids),
        do_sample=False,
        max_new_tokens=GREEDY_NEW_TOKENS,
        min_new_tokens=GREEDY_NEW_TOKENS,
        eos_token_id=None,
        pad_token_id=0,
    )
    return out[0, len(ids):]


def make_fixture(out_dir):
    for name, spec in MODELS.items():
        model = build_model(spec["config"], spec["seed"])
        target = os.path.join(out_dir, name)
        os.makedirs(target, exist_ok=True)
        kwargs = {"safe_serialization": True}
        if spec["max_shard_size"]:
            kwargs["max_shard_size"] = spec["max_shard_size"]
        model.save_pretrained(target, **kwargs)
        expected = {}
        for i, ids in enumerate(PROMPTS):
            expected[f"input_ids.{i}"] = torch.tensor(ids, dtype=torch.long)
            expected[f"logits.{i}"] = logits_for(model, ids).contiguous()
            expected[f"greedy.{i}"] = greedy_for(model, ids).contiguous()
        save_file(expected, os.path.join(target, "expected.safetensors"))
        # generation_config.json carries nothing the Rust side reads; keep the fixture lean.
        gen_config = os.path.join(target, "generation_config.json")
        if os.path.exists(gen_config):
            os.remove(gen_config)
        print(f"wrote {target}")


@torch.no_grad()
def compare(model, expected_dir, atol):
    """Compares `model`'s logits with the `input_ids.i` / `logits.i` pairs of EXPECTED_DIR/expected.safetensors."""
    expected = load_file(os.path.join(expected_dir, "expected.safetensors"))
    count = len([k for k in expected if k.startswith("input_ids.")])
    if count == 0:
        print("no prompts in expected.safetensors", file=sys.stderr)
        return 1
    worst = 0.0
    for i in range(count):
        ids = expected[f"input_ids.{i}"].tolist()
        got = logits_for(model, ids)
        want = expected[f"logits.{i}"].float()
        if got.shape != want.shape:
            print(f"prompt {i}: shape {tuple(got.shape)} != {tuple(want.shape)}", file=sys.stderr)
            return 1
        worst = max(worst, (got - want).abs().max().item())
    print(json.dumps({"prompts": count, "max_abs_diff": worst, "atol": atol}))
    return 0 if worst <= atol else 1


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def check(model_dir, atol, dtype="float32"):
    model = Qwen3ForCausalLM.from_pretrained(model_dir, torch_dtype=DTYPES[dtype]).eval()
    return compare(model, model_dir, atol)


def check_peft(base_dir, adapter_dir, atol):
    """Loads BASE_DIR with transformers and ADAPTER_DIR with PEFT on top; compares with ADAPTER_DIR's expected."""
    from peft import PeftModel

    base = Qwen3ForCausalLM.from_pretrained(base_dir, torch_dtype=torch.float32).eval()
    return compare(PeftModel.from_pretrained(base, adapter_dir).eval(), adapter_dir, atol)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("make-fixture")
    make.add_argument("out_dir")
    chk = sub.add_parser("check")
    chk.add_argument("model_dir")
    chk.add_argument("--atol", type=float, default=1e-4)
    chk.add_argument("--dtype", choices=sorted(DTYPES), default="float32", help="the dtype transformers loads in")
    peft = sub.add_parser("check-peft")
    peft.add_argument("base_dir")
    peft.add_argument("adapter_dir")
    peft.add_argument("--atol", type=float, default=1e-4)
    args = parser.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    if args.command == "make-fixture":
        make_fixture(args.out_dir)
        return 0
    if args.command == "check-peft":
        return check_peft(args.base_dir, args.adapter_dir, args.atol)
    return check(args.model_dir, args.atol, args.dtype)


if __name__ == "__main__":
    sys.exit(main())
