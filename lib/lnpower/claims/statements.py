"""The paper's numbered statements that claims are about (the label of the
box that states each, and its chapter), and the two sources of claims."""

SOURCES = {"paper": "the paper's claims", "book": "the book's own claims"}
# The paper's numbered statements: label of the box that states each, and its
# chapter
STATEMENTS = {
    "def-3-1": "book/principal_components",
    "ass-3-2": "book/principal_components",
    "ex-3-3": "book/principal_components",
    "thm-4-1": "book/looped_power_method",
    "thm-4-2": "book/without_ln",
    "thm-4-3": "book/with_ln",
    "ass-4-4": "book/out_of_distribution",
    "thm-4-6": "book/out_of_distribution",
    "thm-4-7": "book/out_of_distribution",
}
_KINDS = {
    "Definition": "def",
    "Assumption": "ass",
    "Example": "ex",
    "Theorem": "thm",
}


def statement_name(ref: str) -> str:
    """The paper's name of a statement label: "thm-4-2" -> "Theorem 4.2"."""
    kind, major, minor = ref.split("-")
    names = {v: k for k, v in _KINDS.items()}
    return f"{names[kind]} {major}.{minor}"
