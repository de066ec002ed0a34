"""lnpower: the library of the executable book on *Looped Transformers with
Layer Normalization Provably Learn the Power Method* (Wu, Zhang, Cao).

The science, by section of the paper:

==============  ==========================================================
``tasks``       §3.1: Tasks 1 and 2, the embedding E, Assumption 3.2 checks
``subspace``    Definition 3.1: the principal subspace; the targets (4.4)
                and the losses
``model``       §3.2: the layer with LN (4.5) and without (4.3), looping
                (3.1), the structured weights (4.2): the one forward pass
``theory``      §4.1-4.2, Appendices A-C: kappa, Upsilon, C1, gamma*,
                irreducible losses and (A3), by Monte Carlo
                (``montecarlo``); it re-exports the loss landscapes
``landscape``   the loss of each model as a function of gamma or rho,
                L_L^(inf) and c_L
``dynamics``    Theorems 4.1-4.3: the exact reduced (scalar) population
                dynamics
``symbolic``    Appendices A-F: the SymPy derivations, from the definitions
``inference``   §4.3, Appendices D-E: looping at test time, the power
                method, the bounds of Theorems 4.6 and 4.7
``claims``      every claim of the paper (and the book's own), with a check
                that measures it
==============  ==========================================================

Training (§5): ``config`` (``TrainConfig``, the paper's settings), ``train``
(``fit``), ``engine`` (fast loss and hand-written gradients, tested against
``model``), ``history`` (``History``), ``cache`` (one disk cache). Beyond
the paper: ``variants`` (other normalisations), ``stability`` (the Hessian
at the no-LN fixed point). Figures: ``plots``. The book's own tooling
(coursework, Colab cells, the benchmark, how chapters display code and
equations) is the subpackage ``lnpower.book``; the command line is
``python -m lnpower`` (its options in ``cli``).
"""

__version__ = "0.2.0"
