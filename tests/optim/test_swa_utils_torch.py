"""optim.swa_utils against PyTorch's: SWA and EMA averages over a short training run,
buffers followed or averaged, update_bn's statistics, and SWALR's learning rates."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")


def _net(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))


def _train(lib, make_average, steps=4):
    rng = np.random.default_rng(0)
    model = _net(lib)
    model = model.double() if lib is torch else model.to("float64")
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) + i))
    average = make_average(lib, model)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        x = lib.tensor(rng.standard_normal((6, 3)))
        opt.zero_grad()
        (model(x) ** 2).mean().backward()
        opt.step()
        average.update_parameters(model)
    return {k: v.detach().numpy().copy() for k, v in average.state_dict().items()}


AVERAGES = {
    "swa": lambda lib, m: lib.optim.swa_utils.AveragedModel(m),
    "ema": lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.9)),
    "ema one by one": lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, avg_fn=lib.optim.swa_utils.get_ema_avg_fn(0.8)),
    "swa with buffers": lambda lib, m: lib.optim.swa_utils.AveragedModel(m, use_buffers=True),
}


@pytest.mark.parametrize("name", AVERAGES)
def test_the_average_matches_pytorchs(name):
    theirs = _train(torch, AVERAGES[name])
    ours = _train(lm, AVERAGES[name])
    assert list(ours) == list(theirs)
    for k in theirs:
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-12, atol=1e-12, err_msg=k)


def test_update_bn_matches_pytorchs():
    batches = [np.random.default_rng(i).standard_normal((5, 3)) for i in range(3)]
    stats = []
    for lib in (torch, lm):
        model = _net(lib)
        model = model.double() if lib is torch else model.to("float64")
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) + i))
        model.eval()
        lib.optim.swa_utils.update_bn([(lib.tensor(b), 0) for b in batches], model)
        assert not model.training and model[1].momentum == 0.1
        stats.append([model[1].running_mean.numpy().copy(), model[1].running_var.numpy().copy(),
                      int(model[1].num_batches_tracked)])
    for ours, theirs in zip(stats[1][:2], stats[0][:2]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    assert stats[1][2] == stats[0][2]


@pytest.mark.parametrize("strategy, epochs", [("cos", 3), ("linear", 4), ("cos", 0)])
def test_swalr_gives_pytorchs_learning_rates(strategy, epochs):
    """The usual schedule: a StepLR until SWA starts, then SWALR from the lr it left."""
    rates = []
    for lib in (torch, lm):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        base = lib.optim.lr_scheduler.StepLR(opt, 2, 0.5)
        seq = []
        for _ in range(3):
            opt.step()
            base.step()
            seq.append(opt.param_groups[0]["lr"])
        swa = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=epochs,
                                        anneal_strategy=strategy)
        seq.append(opt.param_groups[0]["lr"])
        for _ in range(6):
            opt.step()
            swa.step()
            seq.append(opt.param_groups[0]["lr"])
        rates.append(seq)
    np.testing.assert_allclose(rates[1], rates[0], rtol=1e-12)


def _hooked_steps(lib, kind):
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    opt = {"SGD": lambda: lib.optim.SGD([w], lr=0.1), "Adam": lambda: lib.optim.Adam([w], lr=0.1),
           "LBFGS": lambda: lib.optim.LBFGS([w], lr=0.1, max_iter=2)}[kind]()
    seen = []
    pre = opt.register_step_pre_hook(lambda o, a, k: seen.append(("pre", len(a))))
    opt.register_step_post_hook(lambda o, a, k: seen.append(("post", len(a))))

    def closure():
        opt.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        return loss
    opt.step(closure)
    pre.remove()
    opt.step(closure)
    return seen, w.detach().numpy().tolist()


@pytest.mark.parametrize("kind", ["SGD", "Adam", "LBFGS"])
def test_step_hooks_run_as_pytorchs_around_every_kind_of_step(kind):
    ours, theirs = _hooked_steps(lm, kind), _hooked_steps(torch, kind)
    assert ours[0] == theirs[0] == [("pre", 2), ("post", 2), ("post", 2)]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
