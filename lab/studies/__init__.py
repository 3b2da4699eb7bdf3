"""The scripts behind the result pages of the manual (``docs/results/``): one folder
per study, each with its ``run.sh`` (the commands, in order) and the Python that
summarises the reports into the pages' tables. The steps the scripts share (importing
a collection, keeping a report) are in ``steps.sh``; what the experiments that rank
systems share (reading runs, Kendall's tau, the report) in ``system_rankings.py``.

Run a Python script as a module from the repository root, e.g.
``python -m lab.studies.adaptive.topics ...``: importing this package sets Django up
(the settings of the environment, as ``manage.py`` reads them), so a study that reads
the database imports the models at its top like any other module.
"""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nuggets_app.settings")
django.setup()
