"""The network of PyTorch's CIFAR-10 tutorial, flattened with `x.view(-1, 16 * 5 * 5)`
after its convolutions and pooling, trained with SGD and momentum on 32x32 colour images.

Run it: `python examples/pytorch_style/cifar_tutorial.py`. On PyTorch, change the imports
(`lamina` to `torch`) and nothing else.
"""

import numpy as np

import lamina as torch
import lamina.nn as nn
import lamina.nn.functional as F
import lamina.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def make_data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    images = rng.standard_normal((n, 3, 32, 32)).astype(np.float32) * 0.5
    for k in range(3):  # a class is a bright band of rows in one channel
        images[np.arange(n), labels % 3, labels * 3 + k] += 1.5
    return images, labels


def build():
    return {"model": Net()}


def train(models, data, steps=8):
    net = models["model"]
    images, labels = data
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    losses = []
    while len(losses) < steps:
        for i in range(0, len(images), 16):
            inputs, targets = torch.tensor(images[i:i + 16]), torch.tensor(labels[i:i + 16])
            optimizer.zero_grad()
            loss = criterion(net(inputs), targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if len(losses) == steps:
                break
    with torch.no_grad():
        predicted = net(torch.tensor(images)).max(1).indices
    losses.append((predicted == torch.tensor(labels)).float().mean().item())
    return losses


def main():
    torch.manual_seed(0)
    losses = train(build(), make_data(), steps=60)
    print(f"loss {losses[0]:.3f} -> {losses[-2]:.3f}, training accuracy {losses[-1]:.2f}")


if __name__ == "__main__":
    main()
