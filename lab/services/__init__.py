"""Workflows of the experiments: simulation, its report and plots, LTR, matcher evaluation."""
