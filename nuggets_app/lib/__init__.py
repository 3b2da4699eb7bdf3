"""Small helpers every room of the product may use, with no domain of their own: HTML
to text and sanitizing (:mod:`.html`), CSV output (:mod:`.csvout`), typed environment
readers (:mod:`.env`), the geometry of the SVG charts (:mod:`.charts`), matplotlib
figures for the files ``diagnose`` writes (:mod:`.plots`), the session store
(:mod:`.sessions`), the web server's start-up checks (:mod:`.serving`) and creating a
PostgreSQL database (:mod:`.dbcreate`)."""
