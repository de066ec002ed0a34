"""The book's experiments by chapter, one module per chapter that runs
any: its runs, its measurements and the checks of its claims, as public
functions named after the claims they check (``claims/ledger.toml`` names
them). A module named like a chapter of ``book/`` belongs to that chapter
and imports no other chapter's module, so that editing it measures only its
own claims again. What several chapters share:

- ``population``: Monte Carlo samples at the paper's d and n, and the
  reduced population dynamics of the LN layer and the looped model;
- ``ensembles``: the SGD runs at the paper's settings, as seed ensembles;
- ``stored_runs``: the runs too long to train in a chapter (the epoch
  reading of T, the looped model's seed ensemble), stored with the
  library;
- ``measurements``: how a number is read off a run (exponents, the
  structure, fixed points, gaps);
- ``loop_curves``: looping a trained layer at inference (median error
  curves, the semi-log fit, the learned map's fixed direction).
"""
