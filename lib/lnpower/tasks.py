"""Principal component prediction (§3.1 of the paper): Tasks 1 and 2 and the
other samplers, the embedding E, and the checks of Assumption 3.2. The
principal subspace, the targets (4.4) and the losses (``lnpower.subspace``)
are re-exported here.

Every sampler draws from an explicit ``torch.Generator``; shapes are
batch-first: ``X`` is ``(K, d, n)``, ``a`` is ``(K, d)``, the embedding
``E`` is ``(K, 2d, n + 1)``."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .seeding import mix
from .subspace import (
    TARGETS,
    per_sample_loss,
    principal_projector,
    spectrum,
    targets,
    top_mask,
)

__all__ = [
    "TARGETS",
    "TASKS",
    "Task",
    "check_multiplicities",
    "check_unit_columns",
    "default_multiplicities",
    "embed",
    "generator",
    "haar",
    "multiplicity_matrix",
    "per_sample_loss",
    "principal_projector",
    "query",
    "rotated",
    "spectrum",
    "targets",
    "top_mask",
    "unit_sphere",
]

TASKS = ("sphere", "rotated")


def _positive_int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def generator(
    seed: int, device: str | torch.device = "cpu"
) -> torch.Generator:
    """A fresh ``torch.Generator`` seeded with ``seed`` (no global state is
    touched), shifted by ``LNPOWER_SEED`` (``lnpower.seeding``)."""
    g = torch.Generator(device=device)
    g.manual_seed(mix(seed))
    return g


def unit_sphere(
    shape: tuple[int, ...], g: torch.Generator, dtype=torch.float64
) -> torch.Tensor:
    """Vectors uniform on S^{d-1} along dimension -2: normalised standard
    Gaussians.

    ``shape = (..., d, n)`` gives n unit columns of length d (Task 1, §5)."""
    z = torch.randn(shape, generator=g, dtype=dtype, device=g.device)
    return z / torch.linalg.vector_norm(z, dim=-2, keepdim=True)


def query(
    count: int, d: int, g: torch.Generator, dtype=torch.float64
) -> torch.Tensor:
    """The query vectors a, uniform on S^{d-1}: shape ``(count, d)``."""
    return unit_sphere((count, d, 1), g, dtype)[..., 0]


def haar(
    count: int, d: int, g: torch.Generator, dtype=torch.float64
) -> torch.Tensor:
    """Haar orthogonal matrices ``(count, d, d)``: QR of a Gaussian with
    the sign fix."""
    q, r = torch.linalg.qr(
        torch.randn((count, d, d), generator=g, dtype=dtype, device=g.device)
    )
    return q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1)).unsqueeze(-2)


def default_multiplicities(d: int, n: int) -> tuple[int, ...]:
    """The book's choice of Task 2's multiplicities m (the paper gives
    none).

    Spread n over d as evenly as possible, then move one unit so the top
    value is unique, e.g. d=16, n=32 -> (3, 2, ..., 2, 1). Raises
    ``ValueError`` when no valid m exists."""
    _positive_int("d", d)
    _positive_int("n", n)
    if n <= d:
        raise ValueError(
            f"Task 2 needs n > d (got d={d}, n={n}): every m_i >= 1 and "
            "sum(m) = n, so n = d gives S = I (no unique principal component) "
            "and n < d gives a rank-deficient U"
        )
    q, rem = divmod(n, d)
    m = [q + 1] * rem + [q] * (d - rem)
    # all equal: move one unit from the last to the first (q >= 2 as n > d)
    if rem == 0:
        m[0] += 1
        m[-1] -= 1
    # a tie at the top: move one unit from the second to the first
    elif rem >= 2:
        m[0] += 1
        m[1] -= 1
    return tuple(sorted(m, reverse=True))


def check_multiplicities(m, n: int | None = None) -> tuple[int, ...]:
    """Validate Task 2's m (Example 3.3 with U = [e_1 x m_1, ..., e_d x
    m_d])."""
    m = tuple(m)
    if len(m) < 2:
        raise ValueError(f"m must have at least two entries (d >= 2), got {m}")
    for i, mi in enumerate(m):
        if isinstance(mi, bool) or not isinstance(mi, int) or mi < 1:
            raise ValueError(
                f"m[{i}] = {mi!r}: every multiplicity must be an integer >= 1 "
                "(a zero makes U rank-deficient and breaks (A3))"
            )
    if n is not None and sum(m) != n:
        raise ValueError(
            f"sum(m) = {sum(m)} but n = {n}: the multiplicities must sum to n"
        )
    if len(set(m)) == 1:
        raise ValueError(
            f"m = {m} has all entries equal, so S = {m[0]} I and no unique "
            "principal component exists"
        )
    return m


def multiplicity_matrix(m, dtype=torch.float64) -> torch.Tensor:
    """U = [e_1 (m_1 times), ..., e_d (m_d times)] in R^{d x n} (§5, Task
    2)."""
    m = check_multiplicities(m)
    return torch.repeat_interleave(
        torch.eye(len(m), dtype=dtype), torch.tensor(m), dim=1
    )


def rotated(U: torch.Tensor, count: int, g: torch.Generator) -> torch.Tensor:
    """X = P U with P Haar on O(d) (Example 3.3): shape ``(count, d, n)``."""
    check_unit_columns(U)
    P = haar(count, U.shape[0], g, U.dtype)
    return P @ U.to(g.device)


@dataclass(frozen=True)
class Task:
    """A training distribution: unit columns (A1) and rotation invariance
    (A2) always; (A3), a finite E[1/lambda_d], for Task 2 always and for
    Task 1 only when n >= d + 2 (the chapter principal_components measures
    the tail), so some of the book's grids go outside Assumption 3.2.

    ``name="sphere"``: Task 1, columns uniform on S^{d-1}.
    ``name="rotated"``: Task 2, X = P U with multiplicities ``m`` (default
    rule: :func:`default_multiplicities`); d and n follow from m when m is
    given."""

    name: str = "sphere"
    d: int = 16
    n: int = 32
    m: tuple[int, ...] | None = None

    def __post_init__(self):
        if self.name not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.name!r}")
        if self.name == "rotated":
            if self.m is None:
                object.__setattr__(
                    self, "m", default_multiplicities(self.d, self.n)
                )
            m = check_multiplicities(self.m)
            object.__setattr__(self, "m", m)
            object.__setattr__(self, "d", len(m))
            object.__setattr__(self, "n", sum(m))
        else:
            _positive_int("d", self.d)
            _positive_int("n", self.n)
            if self.m is not None:
                raise ValueError("m is only used by the rotated task (Task 2)")
            if self.d < 2:
                raise ValueError(f"d must be >= 2, got {self.d}")

    def sample_X(
        self, count: int, g: torch.Generator, dtype=torch.float64
    ) -> torch.Tensor:
        """Draw ``count`` data matrices X, shape ``(count, d, n)``."""
        _positive_int("count", count)
        if self.name == "sphere":
            return unit_sphere((count, self.d, self.n), g, dtype)
        return rotated(multiplicity_matrix(self.m, dtype), count, g)

    def sample(self, count: int, g: torch.Generator, dtype=torch.float64):
        """Draw ``(X, a)``: X ``(count, d, n)`` and a ``(count, d)``
        independent of X."""
        X = self.sample_X(count, g, dtype)
        return X, query(count, self.d, g, dtype)


def embed(X: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """The embedding E = [[X, 0], [0, a]] in R^{2d x (n+1)} (§3.2); batched
    over leading dims."""
    *batch, d, n = X.shape
    E = X.new_zeros((*batch, 2 * d, n + 1))
    E[..., :d, :n] = X
    E[..., d:, n] = a
    return E


def check_unit_columns(X: torch.Tensor, tol: float = 1e-6) -> None:
    """Assumption (A1): every column of X has unit norm. Raises
    ``ValueError`` otherwise."""
    if not torch.isfinite(X).all():
        raise ValueError("X contains NaN or infinite entries")
    err = (torch.linalg.vector_norm(X, dim=-2) - 1).abs().max().item()
    if err > tol:
        raise ValueError(
            "(A1) violated: columns of X must have unit norm "
            f"(max |norm - 1| = {err:.3g} > {tol:g})"
        )
