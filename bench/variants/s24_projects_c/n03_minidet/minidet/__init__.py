"""Detectron2-flavoured training scaffolding around torchvision detectors."""
