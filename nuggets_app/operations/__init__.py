"""Running the system: health checks, the records of long tasks, kept computations, and
the one module that enqueues Celery tasks by name."""
