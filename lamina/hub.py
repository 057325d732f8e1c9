"""`lamina.hub`, PyTorch's `torch.hub` for weights: `load_state_dict_from_url` downloads a
checkpoint once into the hub cache (PyTorch's, so the two share it) and loads it without
running its pickle; `download_url_to_file` with PyTorch's hash check.

`hub.load`, `hub.list` and `hub.help` would import and run a repository's hubconf.py:
lamina never executes what a downloaded file says, so they raise, naming what to do
instead (build the model in your code, then load its weights from their URL).

    >>> from lamina import hub
    >>> hub.get_dir().endswith("hub")
    True
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import urllib.parse
import urllib.request
from typing import Any

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

_DIR: dict[str, str | None] = {"dir": None}
HASH_IN_NAME = re.compile(r"-([a-f0-9]*)\.")  # PyTorch's: name-<sha256 prefix>.ext


def get_dir() -> str:
    """The hub cache: set_dir's, else $TORCH_HOME/hub, else $XDG_CACHE_HOME/torch/hub
    (~/.cache/torch/hub), as PyTorch's.

    Examples:
        >>> lm.hub.get_dir().endswith("hub")
        True
    """
    if _DIR["dir"] is not None:
        return _DIR["dir"]
    home = os.environ.get("TORCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")),
        "torch")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Use `d` as the hub cache from now on.

    Examples:
        >>> lm.hub.set_dir("/tmp/hub"); lm.hub.get_dir()
        '/tmp/hub'
        >>> lm.hub._DIR["dir"] = None
    """
    _DIR["dir"] = os.path.expanduser(os.fspath(d))


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Download `url` to the file `dst`: written beside it and moved into place once whole
    (and, given `hash_prefix`, once its SHA-256 starts with it), so a failed or corrupt
    download leaves nothing at `dst`.

    Examples:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp()); (d / "a").write_bytes(b"weights")
        7
        >>> lm.hub.download_url_to_file((d / "a").as_uri(), str(d / "b"), progress=False)
        >>> (d / "b").read_bytes()
        b'weights'
        >>> import shutil; shutil.rmtree(d)
    """
    folder = os.path.dirname(os.path.abspath(dst))
    os.makedirs(folder, exist_ok=True)
    digest = hashlib.sha256()
    with urllib.request.urlopen(urllib.request.Request(url, headers={  # noqa: S310
            "User-Agent": "lamina.hub"})) as response:
        size = response.headers.get("Content-Length")
        bar = _progress(int(size) if size else None) if progress else None
        with tempfile.NamedTemporaryFile(delete=False, dir=folder, suffix=".partial") as out:
            try:
                while chunk := response.read(1 << 16):
                    out.write(chunk)
                    digest.update(chunk)
                    if bar is not None:
                        bar.update(len(chunk))
            except BaseException:
                out.close()
                os.unlink(out.name)
                raise
            finally:
                if bar is not None:
                    bar.close()
    if hash_prefix is not None and not digest.hexdigest().startswith(hash_prefix):
        os.unlink(out.name)
        raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                           f'"{digest.hexdigest()}")')
    shutil.move(out.name, dst)


def _progress(total: int | None) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # the progress bar is tqdm's, an extra
        return None
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location: Any = None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None, weights_only: bool = True) -> Any:
    """The object saved at `url` (a state dict, as a rule), downloaded into
    `model_dir` (get_dir()/checkpoints) unless already there, and read as lamina.load
    reads PyTorch's files: data only, its pickle never run. With `check_hash`, the file
    name's `-<hex>.` part must begin its SHA-256, as PyTorch checks it.

    Examples:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp()); lm.save({"w": lm.ones(2)}, d / "w.pt")
        >>> lm.hub.load_state_dict_from_url((d / "w.pt").as_uri(), model_dir=str(d / "c"),
        ...                                 progress=False)
        {'w': tensor([1., 1.])}
        >>> import shutil; shutil.rmtree(d)
    """
    from lamina.io.serialize import load

    model_dir = model_dir if model_dir is not None else os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        match = HASH_IN_NAME.search(name) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress)
    return load(cached, map_location=map_location, weights_only=weights_only)


def _refuse(what: str) -> RuntimeError:
    return RuntimeError(
        f"hub.{what}: this would import and run the repository's hubconf.py, and lamina "
        "never executes what a downloaded file says. Build the model with your own code and "
        "load its weights with lamina.hub.load_state_dict_from_url(url)")


def load(repo_or_dir: str, model: str, *args: Any, **kwargs: Any) -> Any:
    """Raises: it would run downloaded code (the module's note).

    Examples:
        >>> lm.hub.load("pytorch/vision", "resnet18")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        RuntimeError: hub.load: this would import and run the repository's hubconf.py, ...
    """
    raise _refuse("load")


def list(github: str, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - PyTorch's name
    """Raises: it would run downloaded code (the module's note).

    Examples:
        >>> lm.hub.list("pytorch/vision")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        RuntimeError: hub.list: this would import and run the repository's hubconf.py, ...
    """
    raise _refuse("list")


def help(github: str, model: str, *args: Any, **kwargs: Any) -> Any:  # noqa: A001
    """Raises: it would run downloaded code (the module's note).

    Examples:
        >>> lm.hub.help("pytorch/vision", "resnet18")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        RuntimeError: hub.help: this would import and run the repository's hubconf.py, ...
    """
    raise _refuse("help")
