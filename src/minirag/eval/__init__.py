"""Measuring: metrics, the harness behind `minirag eval`, the reader rows, report, plots."""
