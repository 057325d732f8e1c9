"""Sine waves predicted one step ahead by two LSTMCells unrolled by hand, trained with
L-BFGS and a closure: PyTorch's time_sequence_prediction example, in its style.

Run it: `python examples/pytorch_style/lstmcell_lbfgs.py`. On PyTorch, change the imports
only.
"""

import numpy as np

import lamina as torch
import lamina.nn as nn


class Sequence(nn.Module):
    def __init__(self, hidden=24):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)
        self.hidden = hidden

    def forward(self, input, future=0):
        outputs = []
        n = input.size(0)
        h_t = torch.zeros(n, self.hidden, dtype=input.dtype)
        c_t = torch.zeros(n, self.hidden, dtype=input.dtype)
        h_t2 = torch.zeros(n, self.hidden, dtype=input.dtype)
        c_t2 = torch.zeros(n, self.hidden, dtype=input.dtype)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):  # then feed its own predictions back
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


def make_data(n=16, length=60, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(length) + rng.integers(-20, 20, (n, 1))
    return np.sin(t / 6.0).astype(np.float64)


def build():
    return {"model": Sequence().double()}


def train(models, data, steps=3):
    model = models["model"]
    input, target = torch.from_numpy(data[:, :-1]), torch.from_numpy(data[:, 1:])
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.8, max_iter=5)
    losses = []
    for _ in range(steps):
        def closure():
            optimizer.zero_grad()
            loss = criterion(model(input), target)
            loss.backward()
            return loss

        losses.append(optimizer.step(closure).item())
    with torch.no_grad():
        future = model(input[:2], future=20)
        losses.append(criterion(future[:, :-20], target[:2]).item())
    return losses


def main():
    torch.manual_seed(0)
    losses = train(build(), make_data(), steps=8)
    print(f"loss {losses[0]:.4f} -> {losses[-2]:.4f}")


if __name__ == "__main__":
    main()
