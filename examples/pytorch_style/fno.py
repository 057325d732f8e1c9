"""A Fourier neural operator (Li et al., 2021) learning a 1-D solution operator, PyTorch
style: spectral convolutions by `fft.rfft`, complex weights on the low modes by `einsum`,
`fft.irfft` back, a relative L2 loss, Adam with `StepLR`.

Run it: `python examples/pytorch_style/fno.py`. On PyTorch, change the imports only.
"""

import numpy as np

import lamina as torch
import lamina.nn as nn
import lamina.nn.functional as F


class SpectralConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, modes):
        super().__init__()
        self.modes = modes
        scale = 1 / (in_channels * out_channels)
        self.weights = nn.Parameter(
            scale * torch.rand(in_channels, out_channels, modes, dtype=torch.cfloat))

    def forward(self, x):
        x_ft = torch.fft.rfft(x)
        out_ft = torch.zeros(x.shape[0], self.weights.shape[1], x.size(-1) // 2 + 1,
                             dtype=torch.cfloat)
        out_ft[:, :, :self.modes] = torch.einsum("bix,iox->box", x_ft[:, :, :self.modes],
                                                 self.weights)
        return torch.fft.irfft(out_ft, n=x.size(-1))


class FNO1d(nn.Module):
    def __init__(self, modes=8, width=16):
        super().__init__()
        self.lift = nn.Linear(2, width)  # the input function and the grid
        self.spectral = nn.ModuleList([SpectralConv1d(width, width, modes) for _ in range(2)])
        self.pointwise = nn.ModuleList([nn.Conv1d(width, width, 1) for _ in range(2)])
        self.project = nn.Sequential(nn.Linear(width, 32), nn.GELU(), nn.Linear(32, 1))

    def forward(self, a, grid):
        x = self.lift(torch.stack([a, grid.expand_as(a)], dim=-1)).permute(0, 2, 1)
        for i, (spectral, pointwise) in enumerate(zip(self.spectral, self.pointwise)):
            x = spectral(x) + pointwise(x)
            x = F.gelu(x) if i < len(self.spectral) - 1 else x
        return self.project(x.permute(0, 2, 1)).squeeze(-1)


def relative_l2(prediction, target):
    return (torch.norm(prediction - target, dim=1) / torch.norm(target, dim=1)).mean()


def make_data(n=64, points=64, seed=0):
    """Inputs: sums of random sines; targets: their antiderivatives (a linear operator)."""
    rng = np.random.default_rng(seed)
    grid = np.linspace(0, 1, points, endpoint=False)
    k = np.arange(1, 5)
    amplitudes = rng.standard_normal((n, 4))
    a = amplitudes @ np.sin(2 * np.pi * k[:, None] * grid[None, :])
    u = -(amplitudes / (2 * np.pi * k)) @ np.cos(2 * np.pi * k[:, None] * grid[None, :])
    return a.astype(np.float32), u.astype(np.float32), grid.astype(np.float32)


def build():
    return {"model": FNO1d()}


def train(models, data, steps=10):
    model = models["model"]
    a, u, grid = data
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
    grid = torch.tensor(grid)
    losses = []
    for step in range(steps):
        batch = slice((step * 16) % 64, (step * 16) % 64 + 16)
        loss = relative_l2(model(torch.tensor(a[batch]), grid), torch.tensor(u[batch]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    losses = train(build(), make_data(), steps=60)
    print(f"relative L2 error {losses[0]:.3f} -> {losses[-1]:.3f}")


if __name__ == "__main__":
    main()
