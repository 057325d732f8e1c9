"""nn.Standardize: statistics measured on data (closed forms), kept with the weights,
followed by plans and ONNX, and measured by a job on its training split only."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
from lamina.errors import ShapeError
from lamina.jobs import train
from lamina.schema import ConfigError
from lamina.train.job import build_data
from lamina.train.jobfile import load_config


def _features(n=200, seed=0):
    """Five features on very different scales; the last one constant."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 5)) * [1.0, 10.0, 1e3, 0.01, 0.0] + [0.0, 50.0, -1e3, 0.1, 3.3]
    return x.astype(np.float32)


@pytest.mark.parametrize("shape, axis", [((200, 5), 1), ((20, 5, 7), 1), ((20, 7, 5), -1),
                                         ((4, 6, 5), 2)])
def test_adapt_measures_each_features_mean_and_population_std(shape, axis) -> None:
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 3 + 2
    layer = nn.Standardize(5, axis=axis).adapt(x)
    rows = np.moveaxis(x.astype(np.float64), axis, -1).reshape(-1, 5)
    np.testing.assert_allclose(layer.mean.array, rows.mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(layer.std.array, rows.std(axis=0), rtol=1e-6)
    assert int(layer.count.array) == len(rows) and layer.ready
    y = layer(lm.tensor(x)).array
    want = (x - np.expand_dims(layer.mean.array, tuple(range(axis % x.ndim + 1 - x.ndim, 0)))
            ) / np.expand_dims(layer.std.array, tuple(range(axis % x.ndim + 1 - x.ndim, 0)))
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.moveaxis(y, axis, -1).reshape(-1, 5).std(axis=0), 1, rtol=1e-4)


def test_batches_give_the_statistics_of_the_whole_and_a_constant_feature_is_only_centred(
) -> None:
    x = _features()
    whole = nn.Standardize(5).adapt(x)
    batches = nn.Standardize(5).adapt([(lm.tensor(x[i:i + 7]), None) for i in range(0, 200, 7)])
    np.testing.assert_allclose(batches.mean.array, whole.mean.array, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(batches.std.array, whole.std.array, rtol=1e-6)
    np.testing.assert_allclose(whole.std.array[:4], x[:, :4].astype(np.float64).std(axis=0),
                               rtol=1e-6)
    assert whole.std.array[4] == 1.0  # constant: rounding of its mean is not a spread
    np.testing.assert_allclose(whole(lm.tensor(x)).array[:, 4], 0.0, atol=1e-6)
    again = whole.adapt(x[:10] * 2)  # adapting again replaces, not merges
    assert int(again.count.array) == 10


def test_gradient_is_one_over_std_and_checked_numerically() -> None:
    layer = nn.Standardize(3, mean=[1.0, -2.0, 0.5], std=[2.0, 0.25, 4.0]).to("float64")
    x = lm.tensor(np.random.default_rng(2).standard_normal((4, 3)), requires_grad=True)
    layer(x).sum().backward()
    np.testing.assert_allclose(x.grad, np.broadcast_to(1 / np.array([2.0, 0.25, 4.0]), (4, 3)))
    assert lm.gradcheck(lambda t: F.standardize(t, layer.mean, layer.std) ** 2, [x])


def test_an_unready_layer_and_bad_arguments_are_errors_that_say_what_to_do() -> None:
    layer = nn.Standardize(5)
    with pytest.raises(RuntimeError, match=r"mean and std are not set\. Call layer\.adapt"):
        layer(lm.tensor(_features()))
    with pytest.raises(ShapeError, match=r"expected 5 features on axis 1 of a batch; got shape "
                                         r"\(10, 4\)"):
        layer.adapt(np.zeros((10, 4)))
    with pytest.raises(ShapeError, match=r"expected 5 features on axis 1; got shape \(10, 4\); "
                                         r"if the input is right, build the layer with "
                                         r"num_features=4"):
        layer.adapt(_features())(lm.tensor(np.zeros((10, 4), np.float32)))
    with pytest.raises(ValueError, match="holds no samples"):
        nn.Standardize(5).adapt([])
    for cfg, message in [({"mean": [0.0] * 5}, "give both mean and std"),
                         ({"mean": 0.0, "std": [1.0, 1.0, 0.0, 1.0, 1.0]}, "std must be > 0"),
                         ({"mean": [0.0] * 4, "std": 1.0}, "mean must have num_features=5"),
                         ({"axis": 0}, "axis 0 is the batch")]:
        with pytest.raises(ConfigError, match=rf"^model: Standardize: {message}"):
            nn.from_config({"type": "Standardize", "num_features": 5, **cfg})


def test_statistics_travel_with_the_weights_and_fixed_ones_with_the_config(tmp_path) -> None:
    x = _features()
    layer = nn.Standardize(5).adapt(x)
    lm.io.save(tmp_path / "s.safetensors", layer)
    loaded = nn.from_config(layer.to_config())
    assert not loaded.ready  # the config holds no measured statistics...
    lm.io.load(tmp_path / "s.safetensors", loaded)
    assert loaded.ready  # ...the checkpoint does
    np.testing.assert_array_equal(loaded(lm.tensor(x)).array, layer(lm.tensor(x)).array)
    fixed = nn.Standardize(2, mean=0.5, std=[2.0, 4.0])
    rebuilt = nn.from_config(fixed.to_config())
    assert rebuilt.ready and rebuilt.to_config()["std"] == [2.0, 4.0]


def test_a_plan_follows_statistics_adapted_after_it_was_compiled() -> None:
    x = lm.tensor(_features(32))
    model = nn.Sequential(nn.Standardize(5), nn.Linear(5, 3))
    model[0].adapt(x)
    plan = lm.plan.compile(model, example_batch=(x,))
    model[0].adapt(_features(50, seed=3))  # in place: the plan reads the buffers each call
    np.testing.assert_allclose(plan(x).array, model(x).array, rtol=1e-6, atol=1e-6)
    assert plan.traces == 1


@pytest.mark.parametrize("axis, shape", [(-1, (3, 4, 5)), (1, (3, 5)), (1, (3, 5, 4))])
def test_onnx_export_standardises_as_lamina_does(tmp_path, axis, shape) -> None:
    ort = pytest.importorskip("onnxruntime")
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32) * 5 + 1
    model = nn.Sequential(nn.Standardize(5, axis=axis).adapt(x))
    path = lm.io.export_onnx(model, x, tmp_path / "s.onnx")
    got = ort.InferenceSession(str(path)).run(None, {"input": x})[0]
    np.testing.assert_allclose(got, model(lm.tensor(x)).array, rtol=1e-5, atol=1e-5)


JOB = """
data: {{name: csv, path: {train}, test_path: {test}, label_column: label, batch_size: 25}}
model:
  type: Sequential
  layers:
    - {{type: Standardize, num_features: 5}}
    - {{type: Linear, in_features: 5, out_features: 3}}
optimizer: {{type: Adam, lr: 0.05}}
trainer: {{epochs: 20, out_dir: {out}, progress: false}}
"""


def _job(tmp_path, **layers_and_keys):
    x = _features(300)
    y = ((x[:, 1] - 50) / 10 > (x[:, 2] + 1e3) / 1e3).astype(int)  # linear in both scalings
    for name, rows in (("train", slice(0, 250)), ("test", slice(250, 300))):
        np.savetxt(tmp_path / f"{name}.csv", np.column_stack([x[rows], y[rows]]),
                   delimiter=",", header="a,b,c,d,e,label", comments="")
    text = JOB.format(train=tmp_path / "train.csv", test=tmp_path / "test.csv",
                      out=tmp_path / "runs")
    for old, new in layers_and_keys.items():
        text = text.replace(old, new)
    (tmp_path / "job.yaml").write_text(textwrap.dedent(text))
    return load_config(tmp_path / "job.yaml"), x


def test_a_job_measures_the_first_layer_on_the_training_split_without_the_held_out_part(
        tmp_path) -> None:
    config, x = _job(tmp_path)
    run, results = train(config)
    fit = build_data(config).train.dataset
    rows = np.stack([fit[i][0] for i in range(len(fit))]).astype(np.float64)
    assert len(rows) == 225  # 250 less the 10% held out for validation
    layer = run.model[0]
    np.testing.assert_allclose(layer.mean.array, rows.mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(layer.std.array[:4], rows[:, :4].std(axis=0), rtol=1e-6)
    restored = lm.nn.from_config(config.model)
    lm.io.load(run.directory / "checkpoints" / "last.safetensors", restored)
    np.testing.assert_array_equal(restored[0].std.array, layer.std.array)
    unscaled_job, _ = _job(tmp_path, **{"type: Standardize, num_features: 5": "type: Identity"})
    _, unscaled = train(unscaled_job)  # the 1e3-sized feature swamps the others
    assert results["accuracy"] >= 0.9 and unscaled["accuracy"] < 0.8


def test_a_job_refuses_a_standardize_layer_it_cannot_measure(tmp_path) -> None:
    config, _ = _job(tmp_path, **{"    - {type: Standardize, num_features: 5}\n": "",
                                  "out_features: 3}": "out_features: 3}\n    - {type: "
                                                      "Standardize, num_features: 3}"})
    with pytest.raises(ConfigError, match=r"^model\.layers\[1\]: a job measures a Standardize "
                                          r"layer's statistics only where it reads the model's "
                                          r"input"):
        train(config)
