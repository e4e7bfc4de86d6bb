"""Image data for the optimizer study, as normalised tensors."""

from iclr26_theory_metrics.data.images import DATASET_NAMES, ImageTensors, load_image_tensors

__all__ = ["DATASET_NAMES", "ImageTensors", "load_image_tensors"]
