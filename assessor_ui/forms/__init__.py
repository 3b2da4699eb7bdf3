"""Input validation of the pages, one module per area: ``assessor`` (judging),
``staff`` (collections, uploads, pools, samples), ``jobs`` (matching jobs),
``evaluation`` (the researcher dashboard) and ``rules`` (a decision rule's fields)."""
