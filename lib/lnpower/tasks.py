"""Principal component prediction (§3.1 of the paper): the data.

Tasks 1 and 2 (``Task``) and the other samplers (Example 3.3's rotated
matrices, the out-of-distribution test matrices of Assumption 4.4), the
embedding E (§3.2), the checks of Assumption 3.2, the principal subspace
(Definition 3.1), the targets (4.4) and the per-sample losses the three
models are trained on.

Every sampler draws from an explicit ``torch.Generator`` (:func:`generator`,
shifted by ``LNPOWER_SEED``); shapes are batch-first: ``X`` is ``(K, d,
n)``, ``a`` is ``(K, d)``, the embedding ``E`` is ``(K, 2d, n + 1)``."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .seeding import mix

# the paper's names of the two training tasks (§5)
TASK_NAMES = {"sphere": "Task 1", "rotated": "Task 2"}
TASKS = tuple(TASK_NAMES)
# what a model is trained to predict: the principal subspace (the looped
# model, Theorem 4.1) or a power step, normalised or not (4.4)
TARGETS = ("subspace", "normalized", "unnormalized")
POWER_STEP_TARGETS = TARGETS[1:]  # the single layer's (Theorems 4.2, 4.3)


def _positive_int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def generator(
    seed: int,
    device: str | torch.device = "cpu",
    shift: int | None = None,
) -> torch.Generator:
    """A fresh ``torch.Generator`` seeded with ``seed`` (no global state is
    touched), shifted by ``shift`` or, by default, ``LNPOWER_SEED``
    (``lnpower.seeding``)."""
    g = torch.Generator(device=device)
    g.manual_seed(mix(seed, shift))
    return g


def tasks_at(d: int, n: int) -> tuple[str, ...]:
    """The tasks that exist at (d, n): Task 2 only where n > d (at n <= d
    its multiplicities force S = I)."""
    return tuple(t for t in TASKS if t == "sphere" or n > d)


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


# --- the principal subspace (Definition 3.1), the targets (4.4), the losses


def spectrum(X: torch.Tensor):
    """Eigenvalues (descending) and eigenvectors (columns, same order) of S
    = X X^T (Def. 3.1)."""
    lam, vec = torch.linalg.eigh(X @ X.mT)
    return lam.flip(-1), vec.flip(-1)


def top_mask(lam, rtol: float = 1e-8):
    """Which eigenvalues (descending along the last axis) belong to the top
    one, lambda_1 = ... = lambda_r (Definition 3.1): those within ``rtol *
    lambda_1`` of it. Works on torch tensors and numpy arrays alike."""
    return lam >= lam[..., :1] * (1 - rtol)


def principal_projector(X: torch.Tensor, rtol: float = 1e-8):
    """Projector onto the principal subspace V(X) of Definition 3.1 and the
    multiplicity r.

    Returns ``(Proj, r)``: the projector, of shape ``(..., d, d)``, and r,
    of shape ``(...)``."""
    lam, vec = spectrum(X)
    top = top_mask(lam, rtol).to(X.dtype)
    P = (vec * top.unsqueeze(-2)) @ vec.mT
    return P, top.sum(-1).to(torch.int64)


def targets(X: torch.Tensor, a: torch.Tensor, target: str) -> torch.Tensor:
    """Per-sample targets: the projector onto V(X) ``(K, d, d)`` for
    ``"subspace"`` (the loss of Theorem 4.1), ``Sa/||Sa||`` or ``Sa`` ``(K,
    d)`` for the targets (4.4)."""
    if target == "subspace":
        return principal_projector(X)[0]
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    Sa = (X @ (X.mT @ a.unsqueeze(-1)))[..., 0]
    return (
        Sa / torch.linalg.vector_norm(Sa, dim=-1, keepdim=True)
        if target == "normalized"
        else Sa
    )


def per_sample_loss(
    y: torch.Tensor, Y: torch.Tensor, target: str
) -> torch.Tensor:
    """``Dist^2(y, V(X)) = ||y||^2 - y^T Y y`` (Theorem 4.1; Y the
    projector Proj_V) or ``||y - y_target||^2`` (the losses of Theorems 4.2 and
    4.3; Y the target (4.4))."""
    if target == "subspace":
        return (y * y).sum(-1) - (y.unsqueeze(-2) @ Y @ y.unsqueeze(-1))[
            ..., 0, 0
        ]
    return ((y - Y) ** 2).sum(-1)


# --- out-of-distribution test matrices (Assumption 4.4, §4.3): unit
# columns, not rotation invariant, unlike the training tasks


def anisotropic(
    count: int,
    d: int,
    n: int,
    g: torch.Generator,
    scales=None,
    dtype=torch.float64,
) -> torch.Tensor:
    """Out-of-distribution test matrices (Assumption 4.4): Gaussian columns
    with covariance diag(scales)^2, normalised. Unit columns, not rotation
    invariant."""
    scales = (
        torch.linspace(3.0, 0.5, d, dtype=dtype)
        if scales is None
        else torch.as_tensor(scales, dtype=dtype)
    )
    z = torch.randn((count, d, n), generator=g, dtype=dtype, device=g.device)
    z = z * scales.to(z.device).unsqueeze(-1)
    return z / torch.linalg.vector_norm(z, dim=-2, keepdim=True)


def low_rank_noise(
    count: int,
    d: int,
    n: int,
    g: torch.Generator,
    rank: int = 2,
    noise: float = 0.3,
    dtype=torch.float64,
) -> torch.Tensor:
    """Out-of-distribution test matrices: columns in a fixed rank-``rank``
    subspace (the first coordinates) plus isotropic Gaussian noise of size
    ``noise``, normalised (Assumption 4.4)."""
    _positive_int("rank", rank)
    z = (
        torch.randn((count, d, n), generator=g, dtype=dtype, device=g.device)
        * noise
    )
    z[:, :rank] += torch.randn(
        (count, rank, n), generator=g, dtype=dtype, device=g.device
    )
    return z / torch.linalg.vector_norm(z, dim=-2, keepdim=True)
