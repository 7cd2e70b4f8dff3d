from .dataset import CTVolumeDataset, build_loaders
from .transforms import Compose, RandFlip3D, RandSpatialCrop3D
