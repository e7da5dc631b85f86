"""Layer 8 (applications): the results site."""
