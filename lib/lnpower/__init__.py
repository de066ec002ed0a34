"""lnpower: the library of the executable book on looped transformers with layer
normalisation and the power method (Wu, Zhang, Cao). Modules: ``tasks``, ``model``,
``engine``, ``train``, ``theory``, ``symbolic``, ``claims``, ``plots``."""

__version__ = "0.1.0"
