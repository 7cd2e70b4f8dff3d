"""Small CTC speech recogniser."""
