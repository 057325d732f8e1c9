"""A Transformer language model, PyTorch style (as PyTorch's word_language_model example
builds it): nn.TransformerEncoder under a causal mask, sinusoidal positions, sequence-first
tensors, Adam.

Run it: `python examples/pytorch_style/transformer_lm.py`. On PyTorch, change the imports
only.
"""

import math

import numpy as np

import lamina as torch
import lamina.nn as nn

VOCAB, BPTT, BATCH = 40, 16, 8


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=512):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0)])


class TransformerModel(nn.Module):
    def __init__(self, ntoken=VOCAB, d_model=32, nhead=4, d_hid=64, nlayers=2, dropout=0.0):
        super().__init__()
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers,
                                                         enable_nested_tensor=False)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.linear = nn.Linear(d_model, ntoken)
        self.d_model = d_model

    def forward(self, src, src_mask):
        src = self.pos_encoder(self.embedding(src) * math.sqrt(self.d_model))
        return self.linear(self.transformer_encoder(src, src_mask))


def make_data(length=1024, seed=0):
    """Sequences that count up modulo the vocabulary from random starts, with noise."""
    rng = np.random.default_rng(seed)
    words = (np.arange(length) + rng.integers(0, VOCAB, length) * (rng.random(length) < 0.1))
    return (words % VOCAB).reshape(BATCH, -1).T.copy()


def build():
    return {"model": TransformerModel()}


def train(models, data, steps=8):
    model = models["model"]
    source = torch.tensor(data)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    mask = nn.Transformer.generate_square_subsequent_mask(BPTT)
    losses = []
    model.train()
    for step in range(steps):
        i = (step * BPTT) % (len(source) - 1 - BPTT)
        inputs, targets = source[i:i + BPTT], source[i + 1:i + 1 + BPTT]
        output = model(inputs, mask)
        loss = criterion(output.view(-1, VOCAB), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    losses = train(build(), make_data(), steps=60)
    print(f"loss {losses[0]:.3f} -> {np.mean(losses[-10:]):.3f}")


if __name__ == "__main__":
    main()
