"""A small GPT, PyTorch style (after nanoGPT): pre-norm blocks of causal self-attention
(nn.MultiheadAttention, batch first) and a GELU MLP, an embedding tied to the output
layer, AdamW with two parameter groups (no weight decay on biases, norms and
embeddings), linear warm-up then cosine decay (LambdaLR), gradient clipping.

Run it: `python examples/pytorch_style/gpt.py`. On PyTorch, change the imports only.
"""

import math

import numpy as np

import lamina as torch
import lamina.nn as nn
import lamina.nn.functional as F

VOCAB, CONTEXT, BATCH = 48, 24, 8


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x, mask):
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab=VOCAB, context=CONTEXT, width=32, heads=4, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(context, width)
        self.blocks = nn.ModuleList([Block(width, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        t = idx.size(1)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        x = self.wte(idx) + self.wpe(torch.arange(t))
        for block in self.blocks:
            x = block(x, mask)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizers(self, weight_decay, lr):
        decay = [p for n, p in self.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in self.named_parameters() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))


def make_data(length=4000, seed=0):
    """Text from a random bigram table, as token ids."""
    rng = np.random.default_rng(seed)
    table = rng.dirichlet(np.full(VOCAB, 0.05), VOCAB)
    ids = [0]
    for _ in range(length - 1):
        ids.append(rng.choice(VOCAB, p=table[ids[-1]]))
    starts = rng.integers(0, length - CONTEXT - 1, (200, BATCH))
    return np.array(ids), starts


def build():
    return {"model": GPT()}


def train(models, data, steps=8, warmup=4, total=100):
    model = models["model"]
    ids, starts = data
    optimizer = model.configure_optimizers(weight_decay=0.1, lr=1e-2)

    def schedule(step):  # linear warm-up, then cosine decay to a tenth
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / (total - warmup))
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    losses = []
    for step in range(steps):
        rows = starts[step][:, None] + np.arange(CONTEXT + 1)
        x, y = torch.tensor(ids[rows[:, :-1]]), torch.tensor(ids[rows[:, 1:]])
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    losses = train(build(), make_data(), steps=100)
    print(f"loss {losses[0]:.3f} -> {np.mean(losses[-10:]):.3f}")


if __name__ == "__main__":
    main()
