"""A module whose docstring is long enough to keep: it has
two lines in its first paragraph.

And a second paragraph, which joins the first one."""


def short():
    """Too short to keep."""


class Kept:
    """A class docstring of twelve words or more is kept as one document."""

    def method(self):
        """A method's docstring counts too, when it has enough words to keep."""
