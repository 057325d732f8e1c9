"""A GAN (Goodfellow et al., 2014) learning a 2-D ring of points, PyTorch style: two
models, two optimizers, `detach()` for the discriminator's step, BCEWithLogitsLoss.

Run it: `python examples/pytorch_style/gan.py`. On PyTorch, change the imports only.
"""

import numpy as np

import lamina as torch
import lamina.nn as nn


def make_data(steps=60, batch=32, seed=0):
    rng = np.random.default_rng(seed)
    angles = rng.uniform(0, 2 * np.pi, (steps, batch))
    real = np.stack([np.cos(angles), np.sin(angles)], -1).astype(np.float32)
    noise = rng.standard_normal((steps, batch, 8)).astype(np.float32)
    return real, noise


def build():
    generator = nn.Sequential(nn.Linear(8, 32), nn.LeakyReLU(0.2), nn.Linear(32, 2))
    discriminator = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    return {"generator": generator, "discriminator": discriminator}


def train(models, data, steps=10):
    generator, discriminator = models["generator"], models["discriminator"]
    real_points, noise = data
    opt_g = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()
    losses = []
    for step in range(steps):
        real = torch.tensor(real_points[step])
        fake = generator(torch.tensor(noise[step]))
        ones, zeros = torch.ones(real.shape[0], 1), torch.zeros(real.shape[0], 1)

        opt_d.zero_grad()
        loss_d = (criterion(discriminator(real), ones)
                  + criterion(discriminator(fake.detach()), zeros))
        loss_d.backward()
        opt_d.step()

        opt_g.zero_grad()
        loss_g = criterion(discriminator(fake), ones)
        loss_g.backward()
        opt_g.step()
        losses += [loss_d.item(), loss_g.item()]
    return losses


def main():
    torch.manual_seed(0)
    models = build()
    losses = train(models, make_data(), steps=60)
    with torch.no_grad():
        radius = models["generator"](torch.randn(256, 8)).norm(dim=1).mean()
    print(f"D loss {losses[-2]:.3f}, G loss {losses[-1]:.3f}, mean radius of fakes "
          f"{radius.item():.2f} (real: 1.00)")


if __name__ == "__main__":
    main()
