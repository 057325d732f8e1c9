"""A WGAN-GP (Gulrajani et al., 2017) learning a 2-D ring of points, PyTorch style: the
critic's gradient penalty differentiates a gradient, `torch.autograd.grad(...,
create_graph=True)`, and `backward()` goes through it to the critic's weights.

Run it: `python examples/pytorch_style/wgan_gp.py`. On PyTorch, change the imports only.
"""

import numpy as np

import lamina as torch
import lamina.nn as nn

CRITIC_STEPS, PENALTY = 2, 10.0


def make_data(steps=60, batch=32, seed=0):
    rng = np.random.default_rng(seed)
    angles = rng.uniform(0, 2 * np.pi, (steps, CRITIC_STEPS, batch))
    real = np.stack([np.cos(angles), np.sin(angles)], -1).astype(np.float32)
    noise = rng.standard_normal((steps, CRITIC_STEPS + 1, batch, 8)).astype(np.float32)
    mix = rng.uniform(0, 1, (steps, CRITIC_STEPS, batch, 1)).astype(np.float32)
    return real, noise, mix


def build():
    generator = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
    critic = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32),
                           nn.LeakyReLU(0.2), nn.Linear(32, 1))
    return {"generator": generator, "critic": critic}


def gradient_penalty(critic, real, fake, mix):
    """(|d critic / d x| - 1)^2 at points between real and fake samples."""
    x = (mix * real + (1 - mix) * fake).requires_grad_(True)
    score = critic(x)
    (grad,) = torch.autograd.grad(score, x, grad_outputs=torch.ones_like(score),
                                  create_graph=True)
    return ((grad.norm(2, dim=1) - 1) ** 2).mean()


def train(models, data, steps=10):
    generator, critic = models["generator"], models["critic"]
    real_points, noise, mix = data
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.5, 0.9))
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    losses = []
    for step in range(steps):
        for k in range(CRITIC_STEPS):
            real = torch.tensor(real_points[step, k])
            fake = generator(torch.tensor(noise[step, k])).detach()
            opt_c.zero_grad()
            penalty = gradient_penalty(critic, real, fake, torch.tensor(mix[step, k]))
            loss_c = critic(fake).mean() - critic(real).mean() + PENALTY * penalty
            loss_c.backward()
            opt_c.step()
        opt_g.zero_grad()
        loss_g = -critic(generator(torch.tensor(noise[step, CRITIC_STEPS]))).mean()
        loss_g.backward()
        opt_g.step()
        losses += [loss_c.item(), penalty.item(), loss_g.item()]
    return losses


def main():
    torch.manual_seed(0)
    models = build()
    losses = train(models, make_data(), steps=60)
    with torch.no_grad():
        radius = models["generator"](torch.randn(256, 8)).norm(dim=1).mean()
    print(f"critic loss {losses[-3]:.3f}, penalty {losses[-2]:.3f}, mean radius of fakes "
          f"{radius.item():.2f} (real: 1.00)")


if __name__ == "__main__":
    main()
