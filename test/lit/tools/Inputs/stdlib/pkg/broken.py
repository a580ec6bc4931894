def broken(:
    """Never read."""
