"""The client: a run's context, delivery to the log, access types, external resources."""
