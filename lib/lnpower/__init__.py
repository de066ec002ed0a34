"""lnpower: the library of the executable book on *Looped Transformers with
Layer Normalization Provably Learn the Power Method* (Wu, Zhang, Cao).

Three layers; each imports only from the layers before it and from the
modules "around them" at the end:

The science and the training (what a chapter on models and training uses)

==================  ======================================================
``tasks``           §3.1: Tasks 1 and 2 and the other samplers, the
                    embedding E, Assumption 3.2, the principal subspace,
                    the targets (4.4) and the losses
``model``           §3.2: the layer with LN (4.5) and without (4.3),
                    looping (3.1), the structured weights (4.2)
``norms``           the normalisations, one module each
``theory``          §4.1-4.2: Monte Carlo samples, the constants (kappa,
                    Upsilon, C1, gamma*, irreducible losses) and the loss
                    landscapes
``dynamics``        Theorems 4.1-4.3: the exact reduced population dynamics
``inference``       §4.3: looping at test time, the power method, the
                    bounds of Theorems 4.6 and 4.7
``saddle``          beyond Theorem 4.2: the Hessian at the no-LN fixed
                    point, and the step size past which GD diverges
``symbolic``        Appendices A-F: the SymPy derivations
``config``          ``TrainConfig``, ``paper_config``: the paper's settings
``train``           ``fit``, ``fit_many`` and a run's key; ``engine`` (loss
                    and gradients), ``optimisers``, ``history``
==================  ======================================================

The experiments and the claims: ``chapters`` (one module per chapter:
its runs, measurements and claim checks; and what chapters share),
``claims`` (the ledger, the status rules, the report), ``sweep`` (grids of
runs on dask).

Around them: ``cache`` (the one cache, readable keys), ``seeding``
(``LNPOWER_SEED``), ``devices`` (device and free memory), ``plots`` (the
figures' style), ``display`` (listings and equations in a chapter),
``answers`` (the check of a student's SymPy answer), ``cli`` (``python -m
lnpower``). The book's tooling (grading, editions, Otter, Colab cells, the
benchmark, the build) is not part of this package: ``tools/lnbook`` in the
repository.
"""

__version__ = "0.3.0"
