"""The Python half of the side-by-side speed comparison (`examples/side_by_side.rs` is the act-rs half).

The Rust side writes a workload directory: `model/` (an HF Qwen3 checkpoint with random weights and a word-level
`tokenizer.json`) and `workload.json` (the exact prompts as text and token ids, and every setting). This script
times the same work on CPU, in float32, with `threads` torch threads (interop threads 1):

- `grpo_iteration`: P prompts x G completions sampled at the temperature (top-p 1, no top-k, stop at `<|im_end|>`
  or after T tokens), the reward (fraction of the T-token budget filled with words `wN`, N even), group-normalised
  advantages, one forward+backward of the P*G sequences with the PPO-clipped loss (mu = 1, so old log-probs are
  the detached current ones; token mean over all completion tokens; no KL), gradient clipping and one AdamW step
  at a constant lr. Iteration i uses prompts [i*P, (i+1)*P). Timed (a) in TRL's GRPOTrainer (a callback times
  each optimizer step, which includes TRL's generation) and (b) in a plain PyTorch loop (HF `generate` with the
  KV cache, then the update; the split is reported too).
- `sft_step`: one completion-only cross-entropy step on B prompt+completion sequences (batch k uses samples
  [k*B, (k+1)*B)), in TRL's SFTTrainer and in a plain PyTorch loop.
- `generate`: greedy HF `generate` with the KV cache, exactly `new_tokens` new tokens per row, the first b prompts
  left-padded, for each batch size b.

The first warm-up iterations/steps are dropped; medians over the rest are reported, one JSON object per line on
stdout (progress goes to stderr). The Rust side reports the same work with `"impl": "act-rs"`.

    python benches/side_by_side.py <workload_dir> [--only grpo,sft,generate] [--skip-trl] [--attn eager,sdpa]
"""

import argparse
import contextlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F
import transformers
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, TrainerCallback


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def emit(record):
    print(json.dumps(record), flush=True)


def load_tokenizer(workload_dir):
    return PreTrainedTokenizerFast(tokenizer_file=str(workload_dir / "model" / "tokenizer.json"),
                                   eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None)


def check_ids(tok, work):
    """Fail loudly unless this tokenizer gives exactly the Rust side's ids (tokenizing as TRL does: `tok(text)`)."""
    pairs = [(p["text"], p["ids"]) for p in work["grpo"]["prompts"] + work["generate"]["prompts"]]
    for s in work["sft"]["samples"]:
        pairs.append((s["prompt"], s["prompt_ids"]))
        pairs.append((s["prompt"] + s["completion"], s["prompt_ids"] + s["completion_ids"]))
    for text, ids in pairs:
        if tok(text)["input_ids"] != ids:
            raise SystemExit(f"tokenization mismatch: {text!r} gives {tok(text)['input_ids']}, the workload {ids}")


def load_model(workload_dir, tok, attn):
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(workload_dir / "model", dtype=torch.float32,
                                                 attn_implementation=attn)
    # Stop at <|im_end|> only (TRL stops at the tokenizer's eos plus the generation config's).
    for config in (model.config, model.generation_config):
        config.eos_token_id, config.pad_token_id, config.bos_token_id = tok.eos_token_id, tok.pad_token_id, None
    return model


def even_word_reward(text, budget):
    words = text.split()
    return sum(1 for w in words if w[:1] == "w" and w[1:].isdigit() and int(w[1:]) % 2 == 0) / budget


def left_pad(rows, pad_id):
    width = max(len(r) for r in rows)
    ids = torch.tensor([[pad_id] * (width - len(r)) + r for r in rows])
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    return ids, mask


def cycle(items, count):
    return [items[i % len(items)] for i in range(count)]


def median_record(seconds, warmup, **fields):
    timed = seconds[warmup:]
    return {**fields, "seconds_median": statistics.median(timed), "seconds_all": timed}


class StepTimer(TrainerCallback):
    """Wall clock of each optimizer step (TRL's GRPO generates inside the step, so it is the whole iteration)."""

    def __init__(self):
        self.seconds = []

    def on_step_begin(self, args, state, control, **kwargs):
        self.start = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        self.seconds.append(time.perf_counter() - self.start)


def train_timed(trainer):
    timer = StepTimer()
    trainer.add_callback(timer)
    with contextlib.redirect_stdout(sys.stderr):  # Trainer prints its logs to stdout
        trainer.train()
    shutil.rmtree(trainer.args.output_dir, ignore_errors=True)  # a fresh temporary directory (nothing saved)
    return timer.seconds


def common_trainer_args(out_dir, opt, steps):
    return dict(
        output_dir=out_dir, use_cpu=True, bf16=False, fp16=False, activation_checkpointing=False,
        gradient_accumulation_steps=1, learning_rate=opt["lr"], lr_scheduler_type="constant", warmup_steps=0,
        weight_decay=opt["weight_decay"], adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=opt["adam_eps"],
        max_grad_norm=opt["max_grad_norm"], max_steps=steps, logging_steps=1, report_to="none",
        save_strategy="no", disable_tqdm=True, dataloader_num_workers=0, seed=0, shuffle_dataset=False,
    )


def trl_grpo(wdir, work, tok, base):
    from datasets import Dataset
    import trl
    from trl import GRPOConfig, GRPOTrainer

    g = work["grpo"]
    P, G, T, warmup = g["prompts_per_step"], g["group_size"], g["max_completion_tokens"], g["warmup_iterations"]
    steps = warmup + g["iterations"]
    # The prompts in iteration order (wrapping around), so an unshuffled sampler gives iteration i prompts i*P..
    dataset = Dataset.from_dict({"prompt": [p["text"] for p in cycle(g["prompts"], steps * P)]})

    def even_words(completions, **kwargs):
        return [even_word_reward(c, T) for c in completions]

    config = GRPOConfig(
        **common_trainer_args(tempfile.mkdtemp(prefix="trl-grpo-"), g, steps),
        per_device_train_batch_size=P * G, num_generations=G, steps_per_generation=1,
        max_completion_length=T, temperature=g["temperature"], top_p=1.0, top_k=0,
        beta=g["beta"], epsilon=g["clip_eps"], num_iterations=1,
        loss_type="dapo",  # token-level: sum over all completion tokens / their count in the batch
        scale_rewards="group",  # (r - group mean) / (group std + 1e-4); TRL's std is unbiased (Bessel, n - 1)
        mask_truncated_completions=False, remove_unused_columns=False,
    )
    trainer = GRPOTrainer(model=load_model(wdir, tok, "eager"), reward_funcs=even_words, args=config,
                          train_dataset=dataset, processing_class=tok)
    seconds = train_timed(trainer)
    lengths = [e["completions/mean_length"] for e in trainer.state.log_history if "completions/mean_length" in e]
    emit(median_record(
        seconds, warmup, **base, impl="trl", trl=trl.__version__, work="grpo_iteration", attn="eager",
        sequences=P * G, completion_tokens_mean=statistics.mean(lengths[warmup:]), optim=config.optim,
        notes="TRL GRPOTrainer, generation by HF generate inside the step; the loss forward uses TRL's fused "
              "LM head (log-probs of completion tokens only, plus entropies for its metrics); old log-probs = "
              "detached current (mu=1, not recomputed); the P*G rows are shuffled before the loss (no effect on "
              "a token-mean loss); data collation and logging fall outside the timed step",
    ))


def torch_grpo(wdir, work, tok, base, attn):
    g = work["grpo"]
    P, G, T, warmup = g["prompts_per_step"], g["group_size"], g["max_completion_tokens"], g["warmup_iterations"]
    temp, eps = g["temperature"], g["clip_eps"]
    model = load_model(wdir, tok, attn)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=g["lr"], betas=(0.9, 0.999), eps=g["adam_eps"],
                            weight_decay=g["weight_decay"], fused=True)
    prompts = cycle(g["prompts"], (warmup + g["iterations"]) * P)
    total, gen_s, train_s, lengths = [], [], [], []
    for i in range(warmup + g["iterations"]):
        start = time.perf_counter()
        rows = [p["ids"] for p in prompts[i * P:(i + 1) * P] for _ in range(G)]
        input_ids, prompt_mask = left_pad(rows, tok.pad_token_id)
        with torch.no_grad():
            out = model.generate(
                input_ids=input_ids, attention_mask=prompt_mask, do_sample=True, temperature=temp, top_p=1.0,
                top_k=0, max_new_tokens=T, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                use_cache=True,
            )
        completion = out[:, input_ids.shape[1]:]
        # Keep tokens up to and including the first <|im_end|>.
        is_eos = completion == tok.eos_token_id
        after_eos = (is_eos.cumsum(1) - is_eos.long()) > 0
        mask = (~after_eos).float()
        generated = time.perf_counter()

        texts = tok.batch_decode([c[m.bool()] for c, m in zip(completion, mask)], skip_special_tokens=True)
        rewards = torch.tensor([even_word_reward(t, T) for t in texts]).view(P, G)
        # As TRL (scale_rewards="group"): unbiased group std.
        adv = ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4)).view(-1, 1)
        C = completion.shape[1]
        logits = model(input_ids=out, attention_mask=torch.cat([prompt_mask, mask.long()], 1),
                       logits_to_keep=C + 1).logits[:, :-1] / temp
        logps = torch.log_softmax(logits, -1).gather(-1, completion.unsqueeze(-1)).squeeze(-1)
        ratio = torch.exp(logps - logps.detach())
        per_token = -torch.min(ratio * adv, ratio.clamp(1 - eps, 1 + eps) * adv)
        loss = (per_token * mask).sum() / mask.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), g["max_grad_norm"])
        opt.step()
        end = time.perf_counter()
        total.append(end - start)
        gen_s.append(generated - start)
        train_s.append(end - generated)
        lengths.append(mask.sum(1).mean().item())
    emit(median_record(
        total, warmup, **base, impl="torch", work="grpo_iteration", attn=attn, sequences=P * G,
        generation_seconds=statistics.median(gen_s[warmup:]), training_seconds=statistics.median(train_s[warmup:]),
        completion_tokens_mean=statistics.mean(lengths[warmup:]), optim="torch.optim.AdamW(fused=True)",
    ))


def sft_batches(s):
    B = s["batch_size"]
    return [cycle(s["samples"], (s["warmup_steps"] + s["steps"]) * B)[k * B:(k + 1) * B]
            for k in range(s["warmup_steps"] + s["steps"])]


def sft_token_fields(s, seconds_median):
    timed = sft_batches(s)[s["warmup_steps"]:]
    tokens = statistics.mean(sum(len(x["prompt_ids"]) + len(x["completion_ids"]) for x in b) for b in timed)
    completion = statistics.mean(sum(len(x["completion_ids"]) for x in b) for b in timed)
    return {"tokens": tokens, "completion_tokens": completion, "tokens_per_second": tokens / seconds_median}


def trl_sft(wdir, work, tok, base):
    from datasets import Dataset
    import trl
    from trl import SFTConfig, SFTTrainer

    s = work["sft"]
    samples = [x for b in sft_batches(s) for x in b]
    dataset = Dataset.from_dict({"prompt": [x["prompt"] for x in samples],
                                 "completion": [x["completion"] for x in samples]})
    config = SFTConfig(
        **common_trainer_args(tempfile.mkdtemp(prefix="trl-sft-"), s, s["warmup_steps"] + s["steps"]),
        per_device_train_batch_size=s["batch_size"], completion_only_loss=True, packing=False,
        max_length=max(len(x["prompt_ids"]) + len(x["completion_ids"]) for x in samples),
        train_sampling_strategy="sequential", remove_unused_columns=True,
    )
    trainer = SFTTrainer(model=load_model(wdir, tok, "eager"), args=config, train_dataset=dataset,
                         processing_class=tok)
    record = median_record(
        train_timed(trainer), s["warmup_steps"], **base, impl="trl", trl=trl.__version__, work="sft_step",
        attn="eager", optim=config.optim,
        notes="TRL SFTTrainer; the loss goes through TRL's fused LM head (completion positions only, plus entropy "
              "and top-1 for its metrics); data collation and logging fall outside the timed step",
    )
    emit({**record, **sft_token_fields(s, record["seconds_median"])})


def torch_sft(wdir, work, tok, base, attn):
    s = work["sft"]
    model = load_model(wdir, tok, attn)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=s["lr"], betas=(0.9, 0.999), eps=s["adam_eps"],
                            weight_decay=s["weight_decay"], fused=True)
    seconds = []
    for batch in sft_batches(s):
        start = time.perf_counter()
        seqs = [x["prompt_ids"] + x["completion_ids"] for x in batch]
        width = max(len(q) for q in seqs)
        input_ids = torch.tensor([q + [tok.pad_token_id] * (width - len(q)) for q in seqs])
        attention = torch.tensor([[1] * len(q) + [0] * (width - len(q)) for q in seqs])
        labels = torch.tensor([[-100] * len(x["prompt_ids"]) + x["completion_ids"] + [-100] * (width - len(q))
                               for x, q in zip(batch, seqs)])
        logits = model(input_ids=input_ids, attention_mask=attention).logits
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1),
                               ignore_index=-100)  # mean over completion tokens
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), s["max_grad_norm"])
        opt.step()
        seconds.append(time.perf_counter() - start)
    record = median_record(seconds, s["warmup_steps"], **base, impl="torch", work="sft_step", attn=attn,
                           optim="torch.optim.AdamW(fused=True)")
    emit({**record, **sft_token_fields(s, record["seconds_median"])})


def hf_generate(wdir, work, tok, base, attn):
    g = work["generate"]
    n = g["new_tokens"]
    model = load_model(wdir, tok, attn)
    model.eval()
    for b in g["batch_sizes"]:
        input_ids, mask = left_pad([p["ids"] for p in g["prompts"][:b]], tok.pad_token_id)
        seconds = []
        for _ in range(1 + g["reps"]):
            start = time.perf_counter()
            with torch.no_grad():
                out = model.generate(input_ids=input_ids, attention_mask=mask, do_sample=False, min_new_tokens=n,
                                     max_new_tokens=n, use_cache=True, eos_token_id=tok.eos_token_id,
                                     pad_token_id=tok.pad_token_id)
            seconds.append(time.perf_counter() - start)
            assert out.shape[1] - input_ids.shape[1] == n
        record = median_record(seconds, 1, **base, impl="hf_generate", work="generate", attn=attn, batch_size=b)
        emit({**record, "new_tokens_per_second": b * n / record["seconds_median"]})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload_dir", type=Path)
    parser.add_argument("--only", default="grpo,sft,generate", help="comma-separated subset of grpo,sft,generate")
    parser.add_argument("--skip-trl", action="store_true", help="only the plain PyTorch loops and HF generate")
    parser.add_argument("--attn", default="eager,sdpa", help="attention implementations for the plain loops")
    args = parser.parse_args()
    only = set(args.only.split(","))
    attns = args.attn.split(",")

    work = json.loads((args.workload_dir / "workload.json").read_text())
    torch.set_num_threads(work["threads"])
    torch.set_num_interop_threads(1)
    tok = load_tokenizer(args.workload_dir)
    check_ids(tok, work)
    params = sum(p.numel() for p in load_model(args.workload_dir, tok, "eager").parameters())
    base = {"preset": work["preset"], "params": params, "threads": work["threads"],
            "torch": torch.__version__, "transformers": transformers.__version__}

    jobs = []
    if "grpo" in only:
        jobs += [] if args.skip_trl else [("trl grpo", lambda: trl_grpo(args.workload_dir, work, tok, base))]
        jobs += [(f"torch grpo ({a})", lambda a=a: torch_grpo(args.workload_dir, work, tok, base, a)) for a in attns]
    if "sft" in only:
        jobs += [] if args.skip_trl else [("trl sft", lambda: trl_sft(args.workload_dir, work, tok, base))]
        jobs += [(f"torch sft ({a})", lambda a=a: torch_sft(args.workload_dir, work, tok, base, a)) for a in attns]
    if "generate" in only:
        jobs += [(f"hf generate ({a})", lambda a=a: hf_generate(args.workload_dir, work, tok, base, a))
                 for a in attns]
    for name, job in jobs:
        log(f"side_by_side: {name} ...")
        job()


if __name__ == "__main__":
    main()
