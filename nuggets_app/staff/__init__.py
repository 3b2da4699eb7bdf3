"""The staff console: the long tasks staff start from the browser (uploads, pools,
samples) and the reads of the staff pages."""
