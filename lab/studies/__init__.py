"""Studies: scripts that measure the product on shared data and write the figures a
results page quotes (run from the repository's root with ``python -m``)."""
