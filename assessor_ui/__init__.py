"""Everything a browser shows: judging pages, nugget editor, dashboards."""
