"""HARMLESS."""
