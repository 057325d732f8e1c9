"""A variational autoencoder (Kingma & Welling, 2014) on binary 8x8 images, PyTorch style:
reparameterisation, and a loss of summed binary cross-entropy plus the KL term.

Run it: `python examples/pytorch_style/vae.py`. On PyTorch, change the imports only.
"""

import numpy as np

import lamina as torch
import lamina.nn as nn
import lamina.nn.functional as F


class VAE(nn.Module):
    def __init__(self, features=64, hidden=32, latent=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(features, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(),
                                     nn.Linear(hidden, features))

    def forward(self, x, eps):
        h = self.encoder(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + eps * torch.exp(0.5 * logvar)  # eps ~ N(0, 1), given
        return self.decoder(z), mu, logvar


def vae_loss(logits, x, mu, logvar):
    reconstruction = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (reconstruction + kl) / x.shape[0]


def make_data(n=96, seed=0):
    rng = np.random.default_rng(seed)
    prototypes = rng.random((4, 64)) < 0.5
    images = prototypes[rng.integers(0, 4, n)] ^ (rng.random((n, 64)) < 0.05)
    noise = rng.standard_normal((40, 32, 4)).astype(np.float32)  # one draw per step
    return images.astype(np.float32), noise


def build():
    return {"model": VAE()}


def train(models, data, steps=10):
    model = models["model"]
    images, noise = data
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for step in range(steps):
        batch = torch.tensor(images[(step * 32) % 96:(step * 32) % 96 + 32])
        logits, mu, logvar = model(batch, torch.tensor(noise[step]))
        loss = vae_loss(logits, batch, mu, logvar)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    losses = train(build(), make_data(), steps=40)
    print(f"loss per image {losses[0]:.2f} -> {losses[-1]:.2f}")


if __name__ == "__main__":
    main()
