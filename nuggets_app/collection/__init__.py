"""The test collection's data: documents, topics, runs, qrels and nugget banks, imported
from files or uploaded by staff, and runs made by the retrieval suite."""
