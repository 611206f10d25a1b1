"""The persistent Dagster instance as the command line uses it: its folder and settings, the
runs it executes there, the backfills it submits, and the stored values it reads back."""
