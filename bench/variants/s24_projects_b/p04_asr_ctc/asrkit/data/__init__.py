from .dataset import ManifestDataset, collate_batch, CharTokenizer

__all__ = ["ManifestDataset", "collate_batch", "CharTokenizer"]
