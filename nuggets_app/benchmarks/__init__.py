"""Benchmarks: a small Django app whose management commands (``manage.py bench_*``)
time imports, sampling, matching jobs, judging load, dashboards and fault recovery."""
