"""detkit: single-shot detector training on Pascal VOC."""
