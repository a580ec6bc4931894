def in_a_test_suite():
    """Test suites are left out, however many words their docstrings hold here."""
