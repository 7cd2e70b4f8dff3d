"""3D CT organ segmentation."""
