"""asrkit: small CTC speech recogniser for LibriSpeech experiments."""
