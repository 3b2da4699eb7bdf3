"""Writes and workflows of inference: matching jobs, evidence, the job's model, rules,
exports."""
