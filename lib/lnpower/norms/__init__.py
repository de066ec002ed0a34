"""The column normalisations a layer can use, each defined once here: the
paper's LN (§3.2) and the alternatives Part V compares. ``TrainConfig.norm``,
the command line, ``model.layer``, the training engine and the claims all
name a normalisation by its key in ``NORMS`` (or ``"none"``).

A normalisation maps every token (column) of ``Z`` on its own, over the
feature dimension ``dim``: -2 in the model's layout ``(..., 2d, N)``, -1 in
the engine's transposed one. It is registered as a function ``f(Z, dim)``;
the engine differentiates it with autograd (``torch.func.vjp``), unless a
hand-written backward is registered with it (the paper's LN has one: the
engine's hot path). Each lives in a private module of this package
(``_layernorm``, ...) and is registered at the end of this one, which
exports it (``norms.layernorm``): adding a normalisation is one new module,
its import and one line here, and its test. A function registered from
outside the library (:func:`register`) works the same way for a session;
its source enters the key of a run that uses it
(``lnpower.train.run_key``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.func import vjp

from ._centered import centered
from ._layernorm import layernorm, layernorm_pair
from ._maxabs import maxabs
from ._rmsnorm import rmsnorm

Tensor = torch.Tensor


@dataclass(frozen=True)
class Norm:
    """A registered normalisation: ``apply(Z, dim)`` and optionally
    ``pair(Z, dim) -> (Y, backward)`` with ``backward(G, out=None)`` the
    vector-Jacobian product dL/dY -> dL/dZ (``pair`` may overwrite Z)."""

    name: str
    apply: Callable[[Tensor, int], Tensor]
    pair: Callable | None = None

    def __call__(self, Z: Tensor, dim: int = -2) -> Tensor:
        return self.apply(Z, dim)

    def forward(self, Z: Tensor, dim: int):
        """``(Y, backward)``: the hand-written pair, else autograd's (on a
        copy of Z: the engine reuses Z's memory)."""
        if self.pair is not None:
            return self.pair(Z, dim)
        Y, pull = vjp(lambda z: self.apply(z, dim), Z.clone())

        def backward(G: Tensor, out: Tensor | None = None) -> Tensor:
            dZ = pull(G)[0]
            return dZ if out is None else out.copy_(dZ)

        return Y, backward


NORMS: dict[str, Norm] = {}


def register(name: str, apply: Callable, pair: Callable | None = None):
    """Make ``name`` a normalisation everywhere (config, CLI, engine,
    ``model.layer``, Part V's comparison)."""
    if name == "none" or not name.isidentifier():
        raise ValueError(f"{name!r} cannot name a normalisation")
    NORMS[name] = Norm(name, apply, pair)
    return apply


def get(name: str) -> Norm | None:
    """The normalisation called ``name``; None for ``"none"``."""
    if name == "none":
        return None
    if name not in NORMS:
        raise ValueError(
            f"norm must be 'none' or one of {tuple(NORMS)}, got {name!r}"
        )
    return NORMS[name]


def resolve(norm) -> Callable | None:
    """A function of ``Z`` (model layout, features on dim -2) from a name,
    a callable or None."""
    if norm is None or callable(norm):
        return norm
    return get(norm)


def module_of(name: str) -> str | None:
    """The module of this package that defines ``name`` (``"_layernorm"``),
    or None for a function registered from elsewhere."""
    apply = get(name).apply
    prefix = __name__ + "."
    return (
        apply.__module__.removeprefix(prefix)
        if apply.__module__.startswith(prefix)
        else None
    )


def source(name: str) -> str:
    """The source of a normalisation registered from outside this package
    (what identifies its code in a cache key)."""
    try:
        return inspect.getsource(get(name).apply)
    except (OSError, TypeError):
        code = get(name).apply.__code__
        return repr((code.co_code, code.co_consts))


# the library's normalisations
register("layernorm", layernorm, layernorm_pair)
register("rmsnorm", rmsnorm)
register("centered", centered)
register("maxabs", maxabs)
