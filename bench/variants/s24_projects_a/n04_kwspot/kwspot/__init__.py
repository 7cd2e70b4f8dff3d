"""kwspot: keyword spotting on Google Speech Commands v2."""
