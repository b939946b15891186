"""Presentation: markdown tables of the reproduced tables, the HTML report page, the claims page, run listings and curves."""
