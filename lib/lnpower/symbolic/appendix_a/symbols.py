"""The symbols of Appendix A: the active weights w (W12 = w I) and v (V21 =
v I)."""

import sympy as sp

w, v = sp.symbols("w v", real=True)
