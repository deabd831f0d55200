"""PyTorch front end of remat: exports AOTAutograd joint graphs to remat IR."""
