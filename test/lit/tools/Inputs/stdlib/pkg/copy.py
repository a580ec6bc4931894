def again():
    """A class docstring of twelve words or more is kept as one document."""
