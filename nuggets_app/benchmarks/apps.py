from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    name = "nuggets_app.benchmarks"
    label = "benchmarks"
    verbose_name = "Benchmarks"
