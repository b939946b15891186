"""Analyses of trained runs (convergence, attention, weight statistics)."""
