"""A small CNN classifier on 28x28 digit-like images, written as a PyTorch user writes it.

Run it: `python examples/pytorch_style/mnist_cnn.py`. On PyTorch, change the imports
(`lamina` to `torch`) and nothing else.
"""

import numpy as np

import lamina as torch
import lamina.nn as nn
import lamina.nn.functional as F
from lamina.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc1 = nn.Linear(16 * 7 * 7, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def make_data(n=128, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    images = rng.standard_normal((n, 1, 28, 28)).astype(np.float32) * 0.3
    images[np.arange(n), 0, labels * 2 + 4, 4:24] += 2.0  # a class is a bright row
    return images, labels


def build():
    return {"model": Net()}


def train(models, data, steps=8):
    model = models["model"]
    images, labels = data
    loader = DataLoader(TensorDataset(torch.tensor(images), torch.tensor(labels)),
                        batch_size=32, shuffle=False)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)
    criterion = nn.CrossEntropyLoss()
    losses = []
    model.train()
    while len(losses) < steps:
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if len(losses) == steps:
                break
        scheduler.step()
    model.eval()
    with torch.no_grad():
        accuracy = (model(torch.tensor(images)).argmax(1) == torch.tensor(labels)).float().mean()
    losses.append(accuracy.item())
    return losses


def main():
    torch.manual_seed(0)
    losses = train(build(), make_data(), steps=40)
    print(f"loss {losses[0]:.3f} -> {losses[-2]:.3f}, training accuracy {losses[-1]:.2f}")


if __name__ == "__main__":
    main()
