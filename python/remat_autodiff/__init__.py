"""Training steps in remat's IR contract with the backward derived by
reverse-mode differentiation (see builder.py)."""
