#!/usr/bin/env python3
"""Expected GRPO advantages, losses, metrics and gradients for act-grpo's unit tests.

The formulas are TRL's GRPOTrainer (`_compute_loss`, `_generate_and_score_completions`) written with numpy in
float64, plus verl's dual clip and log-ratio clamp, which TRL lacks. The numbers this prints are committed in
`src/advantage.rs` and `src/loss.rs`; the script is not a dependency of the tests.

    python3 crates/act-grpo/scripts/expected_losses.py
"""

import numpy as np

np.set_printoptions(precision=17)


def advantages(rewards, group_size, mode, eps=1e-4):
    """TRL: r - group mean, divided by the group std ("group"), the batch std ("batch") or nothing ("mean_only").
    torch.std is unbiased (ddof=1)."""
    r = np.asarray(rewards, dtype=np.float64)
    grouped = r.reshape(-1, group_size)
    mean = np.repeat(grouped.mean(axis=1), group_size)
    if mode == "group":
        std = np.repeat(grouped.std(axis=1, ddof=1), group_size)
    elif mode == "batch":
        std = np.full_like(r, r.std(ddof=1))
    adv = r - mean
    if mode != "mean_only":
        adv = adv / (std + eps)
    return adv


def per_token_kl(logp, ref, estimator, clamp):
    d = logp - ref
    if estimator == "k1":
        return d
    if estimator == "k2":
        return 0.5 * d * d
    # k3 = exp(-d) + d - 1 = exp(ref - logp) - (ref - logp) - 1 (TRL); d clamped as verl does.
    d = np.clip(d, -clamp, clamp)
    return np.exp(-d) + d - 1.0


def grpo_loss(logp, old, ref, adv, mask, low=0.2, high=0.2, dual=None, clamp=20.0, kl=None, beta=0.0,
              agg="token_mean", max_len=None):
    log_ratio = np.clip(logp - old, -clamp, clamp)
    ratio = np.exp(log_ratio)
    a = adv[:, None]
    loss1 = ratio * a
    loss2 = np.clip(ratio, 1 - low, 1 + high) * a
    pg = -np.minimum(loss1, loss2)
    if dual is not None:
        # verl: for A < 0 the loss is min(max(-A r, -A clip(r)), -A c).
        pg = np.where(a < 0, np.minimum(pg, -a * dual), pg)
    per_token = pg
    kl_tok = np.zeros_like(logp)
    if beta != 0.0:
        kl_tok = per_token_kl(logp, ref, kl, clamp)
        per_token = per_token + beta * kl_tok
    m = mask
    if agg == "token_mean":
        loss = (per_token * m).sum() / max(m.sum(), 1.0)
    elif agg == "sequence_mean":
        loss = ((per_token * m).sum(-1) / np.maximum(m.sum(-1), 1.0)).mean()
    elif agg == "constant_normalizer":
        loss = (per_token * m).sum() / (per_token.shape[0] * max_len)
    tokens = m.sum()
    low_clipped = ((ratio < 1 - low) & (a < 0) & (m > 0)).sum() / tokens
    high_clipped = ((ratio > 1 + high) & (a > 0) & (m > 0)).sum() / tokens
    dual_clipped = 0.0
    if dual is not None:
        dual_clipped = ((ratio > dual) & (a < 0) & (m > 0)).sum() / tokens
    kl_mean = (kl_tok * m).sum() / tokens
    return loss, low_clipped, high_clipped, dual_clipped, kl_mean


def gradient(f, x, h=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += h
        down[idx] -= h
        g[idx] = (f(up) - f(down)) / (2 * h)
    return g


LOGP = np.array([[-1.0, -0.5, -2.0, -0.1],
                 [-0.3, -1.2, -0.7, -3.0],
                 [-2.0, -0.05, -1.5, -0.9],
                 [-0.4, -0.6, -0.8, -1.0]])
OLD = np.array([[-1.1, -0.9, -1.6, -0.1],
                [-1.5, -0.9, -0.7, -2.0],
                [-1.0, -0.3, -1.5, -0.5],
                [-0.4, -0.6, -0.8, -1.0]])
REF = np.array([[-1.3, -0.4, -2.5, -0.2],
                [-0.1, -1.0, -1.7, -2.5],
                [-2.2, -0.5, -1.0, -0.9],
                [-0.4, -0.6, -0.8, -1.0]])
ADV = np.array([0.8, -1.2, 0.5, 0.3])
MASK = np.array([[1.0, 1.0, 1.0, 1.0],
                 [1.0, 1.0, 1.0, 0.0],
                 [1.0, 1.0, 0.0, 0.0],
                 [0.0, 0.0, 0.0, 0.0]])

CASES = [
    ("token_mean", dict()),
    ("clip_higher", dict(high=0.28)),
    ("dual_clip", dict(dual=3.0)),
    ("kl_k1", dict(kl="k1", beta=0.04)),
    ("kl_k2", dict(kl="k2", beta=0.04)),
    ("kl_k3", dict(kl="k3", beta=0.04)),
    ("sequence_mean", dict(agg="sequence_mean")),
    ("constant_normalizer", dict(agg="constant_normalizer", max_len=5)),
    ("sequence_mean_k3_dual", dict(agg="sequence_mean", kl="k3", beta=0.1, dual=3.0, high=0.28)),
]


def main():
    rewards = [1.0, 0.0, 0.5, 0.0, 0.2, 0.2, 0.2, 0.2]
    print("== advantages (rewards", rewards, ", G = 4, eps = 1e-4)")
    for mode in ["group", "batch", "mean_only"]:
        print(f"{mode}: {[float(v) for v in advantages(rewards, 4, mode)]}")
    print()
    print("== losses: (loss, low_clip_fraction, high_clip_fraction, dual_clip_fraction, kl_mean)")
    for name, kwargs in CASES:
        values = grpo_loss(LOGP, OLD, REF, ADV, MASK, **kwargs)
        print(f"{name}: {[float(v) for v in values]}")
    print()
    print("== log-ratio clamp: logp 0, old -25, A = -1, one token")
    one = lambda **kw: float(grpo_loss(np.zeros((1, 1)), np.full((1, 1), -25.0), np.zeros((1, 1)), np.array([-1.0]),
                                       np.ones((1, 1)), **kw)[0])
    print(f"clamp_20: {one()}")
    print(f"clamp_20_dual_3: {one(dual=3.0)}")
    print()
    print("== d loss / d logp (central differences), row-major 4 x 4")
    for name, kwargs in [("token_mean", dict()), ("sequence_mean_k3_dual", CASES[-1][1])]:
        g = gradient(lambda x: grpo_loss(x, OLD, REF, ADV, MASK, **kwargs)[0], LOGP.copy())
        print(f"{name}: {[float(v) for v in g.reshape(-1)]}")


if __name__ == "__main__":
    main()
