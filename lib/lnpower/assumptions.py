"""Which assumptions of the paper's theorems a training configuration
breaks: the warnings ``train`` prints (the run is still valid; the theorems
just do not describe it)."""

from __future__ import annotations


def departures(c) -> list[str]:
    """The assumptions of the paper's theorems that these settings
    break, one line each (the run is still valid; the theorems just do
    not describe it)."""
    out = []
    if c.task == "sphere" and c.n <= c.d + 1:
        out.append(
            f"Assumption 3.2 (A3): with n = {c.n} <= d + 1 = "
            f"{c.d + 1}, "
            "E[1/lambda_d(X)] is infinite for Task 1"
        )
    if c.batch > c.train_size:
        out.append(
            f"a minibatch of {c.batch} from a training set of "
            f"{c.train_size}: every step sees samples more than once"
        )
    if c.init_scale > 0 or c.v0 <= 0:
        out.append(
            "the initialisation of Theorems 4.1-4.3 (W = 0, V21 = v0 I "
            "with v0 > 0)"
        )
    if c.optimizer != "sgd":
        out.append(
            "gradient descent (§4): the theorems describe (S)GD, not "
            f"{c.optimizer}"
        )
    if c.model == "looped" and c.target != "subspace":
        out.append(
            "Theorem 4.1 trains the looped model on Dist^2 to V(X) "
            "(target "
            f"'subspace'), not {c.target!r}"
        )
    if c.model == "layer" and c.target == "subspace":
        out.append(
            "Theorems 4.2 and 4.3 train the layer on a power-step target (4.4)"
        )
    if c.norm not in ("layernorm", "none"):
        out.append(
            f"the paper's LN (§3.2): norm {c.norm!r} is another normalisation"
        )
    if c.model == "looped" and c.norm != "layernorm":
        out.append("Theorem 4.1 is about the looped model with LN")
    if c.target == "unnormalized" and c.norm != "none":
        out.append("Theorem 4.3 trains the LN layer on the normalised target")
    return out
