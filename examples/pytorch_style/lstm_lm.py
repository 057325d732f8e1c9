"""A word-level LSTM language model, PyTorch style (as in PyTorch's word_language_model
example): an embedding, a 2-layer LSTM, a decoder tied to the embedding, truncated BPTT
with the hidden state detached between chunks, gradient clipping, plain SGD.

Run it: `python examples/pytorch_style/lstm_lm.py`. On PyTorch, change the imports only.
"""

import numpy as np

import lamina as torch
import lamina.nn as nn

VOCAB, BPTT, BATCH = 50, 12, 8


class RNNModel(nn.Module):
    def __init__(self, ntoken=VOCAB, ninp=32, nhid=32, nlayers=2, dropout=0.0):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.decoder.weight = self.encoder.weight  # tied (Press & Wolf, 2017)
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def make_data(length=1200, seed=0):
    """A stream of words from a random bigram table, batchified to (T, B) as the
    example's `batchify` does."""
    rng = np.random.default_rng(seed)
    table = rng.dirichlet(np.full(VOCAB, 0.1), VOCAB)
    words = [0]
    for _ in range(length - 1):
        words.append(rng.choice(VOCAB, p=table[words[-1]]))
    words = np.array(words[:length // BATCH * BATCH])
    return words.reshape(BATCH, -1).T.copy()


def build():
    return {"model": RNNModel()}


def repackage_hidden(h):
    """Cut the graph behind the hidden state (truncated backpropagation through time)."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def train(models, data, steps=10, lr=2.0, clip=0.25):
    model = models["model"]
    source = torch.tensor(data)
    criterion = nn.CrossEntropyLoss()
    hidden = model.init_hidden(BATCH)
    losses = []
    model.train()
    for step in range(steps):
        i = (step * BPTT) % (len(source) - 1 - BPTT)
        inputs, targets = source[i:i + BPTT], source[i + 1:i + 1 + BPTT].reshape(-1)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(inputs, hidden)
        loss = criterion(output.view(-1, VOCAB), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    losses = train(build(), make_data(), steps=80)
    print(f"loss {losses[0]:.3f} -> {np.mean(losses[-10:]):.3f} "
          f"(perplexity {np.exp(np.mean(losses[-10:])):.1f})")


if __name__ == "__main__":
    main()
