"""The store layer: the only place that opens sessions or writes SQL."""
