"""Django-free maths of the experiments: the simulated assessor's nuggets, the matcher
scored against people's matches, learning-to-rank features."""
