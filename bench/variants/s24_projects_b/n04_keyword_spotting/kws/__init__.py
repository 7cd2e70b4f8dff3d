"""Keyword spotting on Google Speech Commands."""
