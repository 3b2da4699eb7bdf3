"""The lab: experiments that use the product as a client (the simulated assessor and
its reports, reusability, rounds, the matcher against people, learning-to-rank
exports) and their commands. Nothing of the product imports it (an import contract
checks); installed only when asked (``LAB=1``)."""
