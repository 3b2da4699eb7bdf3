"""Django-free maths of inferring relevance and ranking: the relevance model (features,
fit, calibration), decision thresholds, retrieval runs, learning-to-rank features, the
simulated assessor and the matcher against people. May use ``nuggets_app.ir``, never
Django or the app."""
