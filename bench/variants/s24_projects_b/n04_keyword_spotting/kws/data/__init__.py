from .dataset import SpeechCommands, pad_collate

__all__ = ["SpeechCommands", "pad_collate"]
